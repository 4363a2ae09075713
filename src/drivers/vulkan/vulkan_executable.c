// weft vulkan driver: executables (see vulkan_executable.h).
#include "drivers/vulkan/vulkan_executable.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drivers/vulkan/spirv_module.h"

typedef struct weft_vulkan_executable_t {
  weft_executable_t base;
  weft_vulkan_context_t* context;  // retained
  VkShaderModule module;
  // One allocation after the struct: the infos, the kernels, then the
  // library name and the kernel names.
  weft_kernel_info_t* infos;
  weft_vulkan_kernel_t* kernels;
} weft_vulkan_executable_t;

static void weft_vulkan_executable_destroy(weft_executable_t* base);

static const weft_executable_vtable_t kWeftVulkanExecutableVtable = {
    .destroy = weft_vulkan_executable_destroy,
};

// Checks the table against the module and the device's limits.
static weft_status_t weft_vulkan_executable_check(
    const weft_vulkan_context_t* context,
    const weft_executable_source_t* source, const uint32_t* words,
    size_t word_count, const char* name) {
  weft_status_t status =
      weft_executable_check_kernel_table(source, "vulkan", name);
  if (!weft_status_is_ok(status)) return status;
  status = weft_spirv_module_check(words, word_count, name);
  const VkPhysicalDeviceLimits* limits = &context->properties.limits;
  for (uint32_t i = 0; weft_status_is_ok(status) && i < source->kernel_count;
       ++i) {
    const weft_kernel_def_t* def = &source->kernels[i];
    weft_spirv_entry_point_t entry;
    weft_spirv_module_find_entry_point(words, word_count, def->name, &entry);
    if (!entry.found ||
        entry.execution_model != WEFT_SPIRV_EXECUTION_MODEL_GLCOMPUTE) {
      char entries[256];
      weft_spirv_module_list_entry_points(words, word_count, entries,
                                          sizeof(entries));
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "vulkan executable '%s': kernel '%s' is not a "
                         "GLCompute entry point of the module (its entry "
                         "points: %s)",
                         name, def->name, entries);
    }
    const uint32_t* size = def->workgroup_size;
    if (entry.has_local_size &&
        memcmp(entry.local_size, size, sizeof(entry.local_size)) != 0) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "vulkan executable '%s': kernel '%s' has workgroup "
                         "size %ux%ux%u in the table and %ux%ux%u in the "
                         "module",
                         name, def->name, size[0], size[1], size[2],
                         entry.local_size[0], entry.local_size[1],
                         entry.local_size[2]);
    }
    if (def->local_memory_size != 0) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "vulkan executable '%s': kernel '%s' asks for %u "
                         "bytes of local memory in the table; a shader "
                         "declares its shared memory itself (give 0)",
                         name, def->name, def->local_memory_size);
    }
    const uint64_t push_size =
        4ull * (3ull + 2ull * def->binding_count + def->constant_count);
    if (push_size > limits->maxPushConstantsSize) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "vulkan executable '%s': kernel '%s' takes %u "
                         "bindings and %u constants, %" PRIu64
                         " bytes of push constants; the device has %u",
                         name, def->name, def->binding_count,
                         def->constant_count, push_size,
                         limits->maxPushConstantsSize);
    }
    if ((uint64_t)def->binding_count + 1 > context->max_push_descriptors) {
      return WEFT_STATUS(INVALID_ARGUMENT,
                         "vulkan executable '%s': kernel '%s' takes %u "
                         "bindings and its status; the device pushes at "
                         "most %u descriptors",
                         name, def->name, def->binding_count,
                         context->max_push_descriptors);
    }
  }
  return status;
}

// Makes |kernel|'s layouts and pipeline from entry point |def| of |module|.
static weft_status_t weft_vulkan_kernel_create(weft_vulkan_context_t* context,
                                               VkShaderModule module,
                                               const weft_kernel_def_t* def,
                                               const char* library_name,
                                               weft_vulkan_kernel_t* kernel) {
  weft_vulkan_symbols_t* vk = &context->vk;
  kernel->binding_count = def->binding_count;
  kernel->constant_count = def->constant_count;
  kernel->push_constant_size =
      4u * (3u + 2u * def->binding_count + def->constant_count);
  VkDescriptorSetLayoutBinding bindings[64];
  const uint32_t descriptor_count = def->binding_count + 1;
  if (descriptor_count > sizeof(bindings) / sizeof(bindings[0])) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "vulkan executable '%s': kernel '%s' takes %u "
                       "bindings; weft binds at most 63",
                       library_name, def->name, def->binding_count);
  }
  for (uint32_t i = 0; i < descriptor_count; ++i) {
    bindings[i] = (VkDescriptorSetLayoutBinding){
        .binding = i,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
    };
  }
  const VkDescriptorSetLayoutCreateInfo set_info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
      .flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR,
      .bindingCount = descriptor_count,
      .pBindings = bindings,
  };
  char call[192];
  snprintf(call, sizeof(call),
           "vkCreateDescriptorSetLayout(kernel '%s' of '%s')", def->name,
           library_name);
  weft_status_t status = weft_vulkan_result_to_status(
      vk->vkCreateDescriptorSetLayout(context->device, &set_info, NULL,
                                      &kernel->set_layout),
      call);
  if (!weft_status_is_ok(status)) return status;
  const VkPushConstantRange range = {
      .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
      .offset = 0,
      .size = kernel->push_constant_size,
  };
  const VkPipelineLayoutCreateInfo layout_info = {
      .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
      .setLayoutCount = 1,
      .pSetLayouts = &kernel->set_layout,
      .pushConstantRangeCount = 1,
      .pPushConstantRanges = &range,
  };
  snprintf(call, sizeof(call), "vkCreatePipelineLayout(kernel '%s' of '%s')",
           def->name, library_name);
  status = weft_vulkan_result_to_status(
      vk->vkCreatePipelineLayout(context->device, &layout_info, NULL,
                                 &kernel->pipeline_layout),
      call);
  if (!weft_status_is_ok(status)) return status;
  const VkComputePipelineCreateInfo pipeline_info = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      // Grids past the device's limit run as several dispatches with a
      // base workgroup (vulkan_dispatch.c).
      .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
      .stage =
          {
              .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
              .stage = VK_SHADER_STAGE_COMPUTE_BIT,
              .module = module,
              .pName = def->name,
          },
      .layout = kernel->pipeline_layout,
  };
  snprintf(call, sizeof(call), "vkCreateComputePipelines(kernel '%s' of '%s')",
           def->name, library_name);
  return weft_vulkan_result_to_status(
      vk->vkCreateComputePipelines(context->device, VK_NULL_HANDLE, 1,
                                   &pipeline_info, NULL, &kernel->pipeline),
      call);
}

// Destroys what weft_vulkan_kernel_create made (any of it).
static void weft_vulkan_kernel_destroy(weft_vulkan_context_t* context,
                                       weft_vulkan_kernel_t* kernel) {
  weft_vulkan_symbols_t* vk = &context->vk;
  if (kernel->pipeline) {
    vk->vkDestroyPipeline(context->device, kernel->pipeline, NULL);
  }
  if (kernel->pipeline_layout) {
    vk->vkDestroyPipelineLayout(context->device, kernel->pipeline_layout,
                                NULL);
  }
  if (kernel->set_layout) {
    vk->vkDestroyDescriptorSetLayout(context->device, kernel->set_layout,
                                     NULL);
  }
}

weft_status_t weft_vulkan_executable_create(
    weft_vulkan_context_t* context, weft_domain_t domain,
    weft_executable_source_t source, weft_allocator_t allocator,
    weft_executable_t** out_executable) {
  *out_executable = NULL;
  const char* name = source.name && source.name[0] ? source.name : "spirv";
  if (!context->has_push_descriptor) {
    return WEFT_STATUS(UNAVAILABLE,
                       "vulkan executable '%s': Vulkan device '%s' has no "
                       "VK_KHR_push_descriptor, which weft's dispatches use",
                       name, context->properties.deviceName);
  }
  if (!source.data || source.data_size == 0 || source.data_size % 4 != 0) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "vulkan executable '%s': the spirv source has %zu "
                       "bytes%s; SPIR-V is whole 4-byte words",
                       name, source.data ? source.data_size : 0,
                       source.data ? "" : " (no data)");
  }
  const size_t strings_size =
      weft_executable_kernel_table_strings_size(&source, name);
  const size_t infos_size = source.kernel_count * sizeof(weft_kernel_info_t);
  const size_t kernels_size =
      source.kernel_count * sizeof(weft_vulkan_kernel_t);
  // The words, aligned (the caller's bytes need not be), then the rest.
  uint32_t* words = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, source.data_size, (void**)&words);
  if (!weft_status_is_ok(status)) return status;
  memcpy(words, source.data, source.data_size);
  const size_t word_count = source.data_size / 4;
  status = weft_vulkan_executable_check(context, &source, words, word_count,
                                        name);
  weft_vulkan_executable_t* executable = NULL;
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(
        allocator,
        sizeof(*executable) + infos_size + kernels_size + strings_size,
        (void**)&executable);
  }
  if (!weft_status_is_ok(status)) {
    weft_allocator_free(allocator, words);
    return status;
  }
  uint8_t* cursor = (uint8_t*)(executable + 1);
  executable->infos = (weft_kernel_info_t*)cursor;
  cursor += infos_size;
  executable->kernels = (weft_vulkan_kernel_t*)cursor;
  cursor += kernels_size;
  const char* library_name = weft_executable_copy_kernel_table(
      &source, name, (char*)cursor, executable->infos);
  executable->context = context;

  const VkShaderModuleCreateInfo module_info = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
      .codeSize = source.data_size,
      .pCode = words,
  };
  char call[160];
  snprintf(call, sizeof(call), "vkCreateShaderModule('%s', %zu bytes)",
           library_name, source.data_size);
  status = weft_vulkan_result_to_status(
      context->vk.vkCreateShaderModule(context->device, &module_info, NULL,
                                       &executable->module),
      call);
  for (uint32_t i = 0; weft_status_is_ok(status) && i < source.kernel_count;
       ++i) {
    const weft_kernel_def_t* def = &source.kernels[i];
    status = weft_vulkan_kernel_create(context, executable->module, def,
                                       library_name, &executable->kernels[i]);
  }
  weft_allocator_free(allocator, words);
  if (!weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < source.kernel_count; ++i) {
      weft_vulkan_kernel_destroy(context, &executable->kernels[i]);
    }
    if (executable->module) {
      context->vk.vkDestroyShaderModule(context->device, executable->module,
                                        NULL);
    }
    weft_allocator_free(allocator, executable);
    return status;
  }
  weft_executable_initialize(&kWeftVulkanExecutableVtable, allocator, domain,
                             source.format, library_name, source.kernel_count,
                             executable->infos, &executable->base);
  weft_vulkan_context_retain(context);
  *out_executable = &executable->base;
  return WEFT_OK;
}

static void weft_vulkan_executable_destroy(weft_executable_t* base) {
  weft_vulkan_executable_t* executable = (weft_vulkan_executable_t*)base;
  weft_vulkan_context_t* context = executable->context;
  for (uint32_t i = 0; i < base->kernel_count; ++i) {
    weft_vulkan_kernel_destroy(context, &executable->kernels[i]);
  }
  context->vk.vkDestroyShaderModule(context->device, executable->module, NULL);
  weft_allocator_free(base->allocator, executable);
  weft_vulkan_context_release(context);
}

const weft_vulkan_kernel_t* weft_vulkan_executable_kernel(
    const weft_executable_t* executable, uint32_t ordinal) {
  if (weft_executable_vtable(executable) != &kWeftVulkanExecutableVtable) {
    return NULL;
  }
  return &((const weft_vulkan_executable_t*)executable)->kernels[ordinal];
}
