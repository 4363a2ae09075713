// weft VM: lists and byte buffers (see list.h).
#include "vm/list.h"

#include <inttypes.h>
#include <string.h>

static void weft_vm_list_retain(void* object) {
  weft_ref_count_inc(&((weft_vm_list_t*)object)->ref_count);
}

static void weft_vm_list_release(void* object) {
  weft_vm_list_t* list = (weft_vm_list_t*)object;
  if (weft_ref_count_dec(&list->ref_count)) {
    for (uint32_t i = 0; i < list->size; ++i) {
      if (list->values[i].type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_release(list->values[i].ref);
      }
    }
    weft_allocator_free(list->allocator, list->values);
    weft_allocator_free(list->allocator, list);
  }
}

const weft_vm_ref_type_t kWeftVmListType = {
    .name = "list",
    .retain = weft_vm_list_retain,
    .release = weft_vm_list_release,
};

// Makes room for |capacity| elements.
static weft_status_t weft_vm_list_reserve(weft_vm_list_t* list,
                                          uint32_t capacity) {
  weft_status_t status = WEFT_OK;
  if (capacity > WEFT_VM_LIST_MAX_SIZE) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED,
                         "list of %" PRIu32 " elements is past the limit of "
                         "%u",
                         capacity, WEFT_VM_LIST_MAX_SIZE);
  } else if (capacity > list->capacity) {
    weft_vm_value_t* values = list->values;
    status = weft_allocator_realloc(list->allocator,
                                    (size_t)capacity * sizeof(*values),
                                    (void**)&values);
    if (weft_status_is_ok(status)) {
      list->values = values;
      list->capacity = capacity;
    }
  }
  return status;
}

weft_status_t weft_vm_list_create(weft_allocator_t allocator,
                                  uint32_t capacity,
                                  weft_vm_list_t** out_list) {
  *out_list = NULL;
  weft_vm_list_t* list = NULL;
  weft_status_t status =
      weft_allocator_malloc(allocator, sizeof(*list), (void**)&list);
  if (weft_status_is_ok(status)) {
    weft_ref_count_init(&list->ref_count);
    list->allocator = allocator;
    status = weft_vm_list_reserve(list, capacity);
    if (weft_status_is_ok(status)) {
      *out_list = list;
    } else {
      weft_allocator_free(allocator, list);
    }
  }
  return status;
}

weft_status_t weft_vm_list_resize(weft_vm_list_t* list, uint32_t size) {
  weft_status_t status = WEFT_OK;
  if (size > list->capacity) {
    // Doubling keeps a loop of resizes by one linear.
    uint64_t capacity = (uint64_t)list->capacity * 2;
    if (capacity < size) capacity = size;
    if (capacity > WEFT_VM_LIST_MAX_SIZE && size <= WEFT_VM_LIST_MAX_SIZE) {
      capacity = WEFT_VM_LIST_MAX_SIZE;
    }
    status = weft_vm_list_reserve(list, (uint32_t)capacity);
  }
  if (weft_status_is_ok(status)) {
    for (uint32_t i = size; i < list->size; ++i) {
      if (list->values[i].type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_release(list->values[i].ref);
      }
    }
    for (uint32_t i = list->size; i < size; ++i) {
      memset(&list->values[i], 0, sizeof(list->values[i]));
      list->values[i].type = WEFT_VM_TYPE_I32;
    }
    list->size = size;
  }
  return status;
}

weft_status_t weft_vm_list_get(const weft_vm_list_t* list, uint32_t index,
                               weft_vm_value_type_t type,
                               weft_vm_value_t* out_value) {
  if (index >= list->size) {
    return WEFT_STATUS(OUT_OF_RANGE,
                       "list index %" PRIu32 " is past its size %" PRIu32,
                       index, list->size);
  }
  const weft_vm_value_t* value = &list->values[index];
  if (value->type != type) {
    return WEFT_STATUS(INVALID_ARGUMENT,
                       "list element %" PRIu32 " holds %s, not %s", index,
                       weft_vm_value_type_name(value->type),
                       weft_vm_value_type_name(type));
  }
  *out_value = *value;
  if (type == WEFT_VM_TYPE_REF) weft_vm_ref_retain(value->ref);
  return WEFT_OK;
}

weft_status_t weft_vm_list_set(weft_vm_list_t* list, uint32_t index,
                               const weft_vm_value_t* value) {
  if (index >= list->size) {
    return WEFT_STATUS(OUT_OF_RANGE,
                       "list index %" PRIu32 " is past its size %" PRIu32,
                       index, list->size);
  }
  weft_vm_value_t old = list->values[index];
  if (value->type == WEFT_VM_TYPE_REF) weft_vm_ref_retain(value->ref);
  list->values[index] = *value;
  if (old.type == WEFT_VM_TYPE_REF) weft_vm_ref_release(old.ref);
  return WEFT_OK;
}

static void weft_vm_bytes_retain(void* object) {
  weft_ref_count_inc(&((weft_vm_bytes_t*)object)->ref_count);
}

static void weft_vm_bytes_release(void* object) {
  weft_vm_bytes_t* bytes = (weft_vm_bytes_t*)object;
  if (weft_ref_count_dec(&bytes->ref_count)) {
    weft_allocator_free(bytes->allocator, bytes);
  }
}

const weft_vm_ref_type_t kWeftVmBytesType = {
    .name = "bytes",
    .retain = weft_vm_bytes_retain,
    .release = weft_vm_bytes_release,
};

weft_status_t weft_vm_bytes_create(weft_allocator_t allocator,
                                   const void* data, size_t length,
                                   weft_vm_bytes_t** out_bytes) {
  *out_bytes = NULL;
  weft_vm_bytes_t* bytes = NULL;
  weft_status_t status = WEFT_OK;
  if (length > SIZE_MAX - sizeof(*bytes)) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED, "%zu bytes cannot be held",
                         length);
  } else {
    status = weft_allocator_malloc(allocator, sizeof(*bytes) + length,
                                   (void**)&bytes);
  }
  if (weft_status_is_ok(status)) {
    weft_ref_count_init(&bytes->ref_count);
    bytes->allocator = allocator;
    bytes->length = length;
    if (length) memcpy(bytes->data, data, length);
    *out_bytes = bytes;
  }
  return status;
}
