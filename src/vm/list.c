// weft VM: lists and byte buffers (see weft/vm/list.h).
#include "vm/list_impl.h"

#include <inttypes.h>
#include <string.h>

#include "base/arguments.h"

void weft_vm_list_retain(weft_vm_list_t* list) {
  if (list) weft_ref_count_inc(&list->ref_count);
}

void weft_vm_list_release(weft_vm_list_t* list) {
  if (list && weft_ref_count_dec(&list->ref_count)) {
    for (uint32_t i = 0; i < list->size; ++i) {
      if (list->values[i].type == WEFT_VM_TYPE_REF) {
        weft_vm_ref_release(list->values[i].ref);
      }
    }
    weft_allocator_free(list->allocator, list->values);
    weft_allocator_free(list->allocator, list);
  }
}

static void weft_vm_list_ref_retain(void* object) {
  weft_vm_list_retain((weft_vm_list_t*)object);
}

static void weft_vm_list_ref_release(void* object) {
  weft_vm_list_release((weft_vm_list_t*)object);
}

const weft_vm_ref_type_t kWeftVmListType = {
    .name = "list",
    .retain = weft_vm_list_ref_retain,
    .release = weft_vm_list_ref_release,
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
  if (out_list) *out_list = NULL;
  weft_vm_list_t* list = NULL;
  weft_status_t status = weft_arguments_require(
      __func__, "out_list", (const void* const[]){out_list}, 1);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc(allocator, sizeof(*list), (void**)&list);
  }
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

uint32_t weft_vm_list_size(const weft_vm_list_t* list) {
  return list ? list->size : 0;
}

weft_status_t weft_vm_list_resize(weft_vm_list_t* list, uint32_t size) {
  weft_status_t status = weft_arguments_require(
      __func__, "list", (const void* const[]){list}, 1);
  if (weft_status_is_ok(status) && size > list->capacity) {
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

// OUT_OF_RANGE unless |index| is below |list|'s size.
static weft_status_t weft_vm_list_check_index(const weft_vm_list_t* list,
                                              uint32_t index) {
  return index < list->size
             ? WEFT_OK
             : WEFT_STATUS(OUT_OF_RANGE,
                           "list index %" PRIu32 " is past its size %" PRIu32,
                           index, list->size);
}

weft_status_t weft_vm_list_get(const weft_vm_list_t* list, uint32_t index,
                               weft_vm_value_type_t type,
                               weft_vm_value_t* out_value) {
  if (out_value) memset(out_value, 0, sizeof(*out_value));
  weft_status_t status = weft_arguments_require(
      __func__, "list,out_value", (const void* const[]){list, out_value}, 2);
  if (weft_status_is_ok(status)) status = weft_vm_list_check_index(list, index);
  if (weft_status_is_ok(status) && list->values[index].type != type) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "list element %" PRIu32 " holds %s, not %s", index,
                         weft_vm_value_type_name(list->values[index].type),
                         weft_vm_value_type_name(type));
  }
  if (weft_status_is_ok(status)) {
    *out_value = list->values[index];
    if (type == WEFT_VM_TYPE_REF) weft_vm_ref_retain(out_value->ref);
  }
  return status;
}

weft_status_t weft_vm_list_set(weft_vm_list_t* list, uint32_t index,
                               const weft_vm_value_t* value) {
  weft_status_t status = weft_arguments_require(
      __func__, "list,value", (const void* const[]){list, value}, 2);
  if (weft_status_is_ok(status)) status = weft_vm_list_check_index(list, index);
  if (weft_status_is_ok(status) &&
      (unsigned)value->type >= WEFT_VM_TYPE_COUNT_) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_vm_list_set: value has type %d, not a value "
                         "type",
                         (int)value->type);
  } else if (weft_status_is_ok(status) && value->type == WEFT_VM_TYPE_REF &&
             value->ref.object && !value->ref.type) {
    status = WEFT_STATUS(INVALID_ARGUMENT,
                         "weft_vm_list_set: value is a ref with an object but "
                         "no ref type");
  }
  if (weft_status_is_ok(status)) {
    weft_vm_value_t old = list->values[index];
    if (value->type == WEFT_VM_TYPE_REF) weft_vm_ref_retain(value->ref);
    list->values[index] = *value;
    if (old.type == WEFT_VM_TYPE_REF) weft_vm_ref_release(old.ref);
  }
  return status;
}

void weft_vm_bytes_retain(weft_vm_bytes_t* bytes) {
  if (bytes) weft_ref_count_inc(&bytes->ref_count);
}

void weft_vm_bytes_release(weft_vm_bytes_t* bytes) {
  if (bytes && weft_ref_count_dec(&bytes->ref_count)) {
    weft_allocator_free(bytes->allocator, bytes);
  }
}

const uint8_t* weft_vm_bytes_data(const weft_vm_bytes_t* bytes) {
  return bytes ? bytes->data : NULL;
}

size_t weft_vm_bytes_length(const weft_vm_bytes_t* bytes) {
  return bytes ? bytes->length : 0;
}

static void weft_vm_bytes_ref_retain(void* object) {
  weft_vm_bytes_retain((weft_vm_bytes_t*)object);
}

static void weft_vm_bytes_ref_release(void* object) {
  weft_vm_bytes_release((weft_vm_bytes_t*)object);
}

const weft_vm_ref_type_t kWeftVmBytesType = {
    .name = "bytes",
    .retain = weft_vm_bytes_ref_retain,
    .release = weft_vm_bytes_ref_release,
};

weft_status_t weft_vm_bytes_create(weft_allocator_t allocator,
                                   const void* data, size_t length,
                                   weft_vm_bytes_t** out_bytes) {
  if (out_bytes) *out_bytes = NULL;
  // |data| only matters when there is something to copy.
  weft_status_t status = weft_arguments_require(
      __func__, "data,out_bytes",
      (const void* const[]){length ? data : &length, out_bytes}, 2);
  weft_vm_bytes_t* bytes = NULL;
  if (weft_status_is_ok(status) && length > SIZE_MAX - sizeof(*bytes)) {
    status = WEFT_STATUS(RESOURCE_EXHAUSTED, "%zu bytes cannot be held",
                         length);
  }
  if (weft_status_is_ok(status)) {
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
