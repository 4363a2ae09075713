// weft vulkan driver: what weft reads of a SPIR-V module before Vulkan
// sees it.
//
// vkCreateShaderModule trusts its input (a malformed module or a missing
// entry point is undefined behaviour, not an error), so the driver checks
// what it relies on first: the header, that every instruction lies inside
// the module, and for each kernel of the table an entry point of that name
// with its workgroup size. Nothing else of the module is interpreted.
#ifndef WEFT_DRIVERS_VULKAN_SPIRV_MODULE_H_
#define WEFT_DRIVERS_VULKAN_SPIRV_MODULE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "weft/status.h"

// An entry point as the module declares it.
typedef struct weft_spirv_entry_point_t {
  bool found;
  // SPIR-V's ExecutionModel (5: GLCompute).
  uint32_t execution_model;
  // From OpExecutionMode LocalSize, when the module gives it that way (not
  // through LocalSizeId or a specialisation constant).
  bool has_local_size;
  uint32_t local_size[3];
} weft_spirv_entry_point_t;

#define WEFT_SPIRV_MAGIC 0x07230203u
#define WEFT_SPIRV_EXECUTION_MODEL_GLCOMPUTE 5u

// INVALID_ARGUMENT naming module |name| unless |words| (|word_count|
// words) is a SPIR-V module weft can walk: the magic number, a header of
// five words, and instructions whose word counts are non-zero and end
// inside the module.
weft_status_t weft_spirv_module_check(const uint32_t* words, size_t word_count,
                                      const char* name);

// Finds entry point |entry_name| in a checked module.
void weft_spirv_module_find_entry_point(const uint32_t* words,
                                        size_t word_count,
                                        const char* entry_name,
                                        weft_spirv_entry_point_t* out_entry);

// Writes the names of the module's GLCompute entry points, comma-separated,
// into |buffer| (always NUL-terminated; cut short when it is full).
void weft_spirv_module_list_entry_points(const uint32_t* words,
                                         size_t word_count, char* buffer,
                                         size_t capacity);

#endif  // WEFT_DRIVERS_VULKAN_SPIRV_MODULE_H_
