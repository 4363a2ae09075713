// weft: hang reports, wait-for cycles and the watchdog (see diagnostics.h).
//
// Reports work on a snapshot: each driver describes its pending ops under
// its own locks and the visitor copies what the report needs (semaphore
// identities, labels, values), so printing, the marks on waits nothing
// pending signals and the cycle search run with no lock held. Semaphore pointers in the snapshot are identities only, never
// dereferenced after the visit.
//
// The live-device list and the watchdog setting are process-wide: a hang
// report is about the whole process, as the environment variables that
// configure it are.
#include "hal/diagnostics.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomics.h"
#include "base/mutex.h"
#include "hal/device_impl.h"

//===----------------------------------------------------------------------===//
// Live devices
//===----------------------------------------------------------------------===//

static weft_slim_mutex_t weft_diagnostics_mutex = WEFT_SLIM_MUTEX_INITIALIZER;
// Guarded by weft_diagnostics_mutex.
static weft_device_t* weft_diagnostics_devices = NULL;

void weft_diagnostics_register_device(weft_device_t* device) {
  weft_slim_mutex_lock(&weft_diagnostics_mutex);
  // A driver may build its device with weft_device_create (a registry's
  // custom driver wrapping a built-in one): that registered it already.
  if (!device->diagnostics_registered) {
    device->diagnostics_prev = NULL;
    device->diagnostics_next = weft_diagnostics_devices;
    if (weft_diagnostics_devices) {
      weft_diagnostics_devices->diagnostics_prev = device;
    }
    weft_diagnostics_devices = device;
    device->diagnostics_registered = true;
  }
  weft_slim_mutex_unlock(&weft_diagnostics_mutex);
}

void weft_diagnostics_unregister_device(weft_device_t* device) {
  weft_slim_mutex_lock(&weft_diagnostics_mutex);
  if (device->diagnostics_registered) {
    if (device->diagnostics_prev) {
      device->diagnostics_prev->diagnostics_next = device->diagnostics_next;
    } else {
      weft_diagnostics_devices = device->diagnostics_next;
    }
    if (device->diagnostics_next) {
      device->diagnostics_next->diagnostics_prev = device->diagnostics_prev;
    }
    device->diagnostics_registered = false;
  }
  weft_slim_mutex_unlock(&weft_diagnostics_mutex);
}

// Guarded by weft_diagnostics_mutex.
static weft_diagnostics_source_t* weft_diagnostics_sources = NULL;

void weft_diagnostics_register_source(weft_diagnostics_source_t* source) {
  weft_slim_mutex_lock(&weft_diagnostics_mutex);
  source->prev = NULL;
  source->next = weft_diagnostics_sources;
  if (weft_diagnostics_sources) weft_diagnostics_sources->prev = source;
  weft_diagnostics_sources = source;
  weft_slim_mutex_unlock(&weft_diagnostics_mutex);
}

void weft_diagnostics_unregister_source(weft_diagnostics_source_t* source) {
  weft_slim_mutex_lock(&weft_diagnostics_mutex);
  if (source->prev) {
    source->prev->next = source->next;
  } else {
    weft_diagnostics_sources = source->next;
  }
  if (source->next) source->next->prev = source->prev;
  source->prev = source->next = NULL;
  weft_slim_mutex_unlock(&weft_diagnostics_mutex);
}

//===----------------------------------------------------------------------===//
// Watchdog setting
//===----------------------------------------------------------------------===//

static weft_atomic_int64_t weft_watchdog_limit_ns = 0;
static weft_atomic_uint32_t weft_watchdog_action = 0;

void weft_watchdog_set(weft_duration_t limit_ns,
                       weft_watchdog_action_t action) {
  // Relaxed: a wait reads the setting once when it starts; no other data
  // hangs off it.
  weft_atomic_store(&weft_watchdog_action, (uint32_t)action,
                    memory_order_relaxed);
  weft_atomic_store(&weft_watchdog_limit_ns, limit_ns < 0 ? 0 : limit_ns,
                    memory_order_relaxed);
}

weft_duration_t weft_watchdog_limit(void) {
  return weft_atomic_load(&weft_watchdog_limit_ns, memory_order_relaxed);
}

weft_duration_t weft_watchdog_current(weft_watchdog_action_t* out_action) {
  *out_action = (weft_watchdog_action_t)weft_atomic_load(
      &weft_watchdog_action, memory_order_relaxed);
  return weft_atomic_load(&weft_watchdog_limit_ns, memory_order_relaxed);
}

static weft_atomic_uint32_t weft_diagnostics_environment_read = 0;

void weft_diagnostics_initialize_from_environment(void) {
  // Relaxed exchange: only one caller reads the environment; the setting it
  // stores is itself atomic.
  if (weft_atomic_exchange(&weft_diagnostics_environment_read, 1,
                           memory_order_relaxed) != 0) {
    return;
  }
  const char* limit = getenv("WEFT_WATCHDOG_MS");
  if (!limit || !limit[0]) return;
  char* end = NULL;
  unsigned long long ms = strtoull(limit, &end, 10);
  if (!end || *end != '\0' || ms == 0) {
    fprintf(stderr,
            "weft: WEFT_WATCHDOG_MS='%s' is not a positive number of "
            "milliseconds; the watchdog stays off\n",
            limit);
    return;
  }
  const char* action = getenv("WEFT_WATCHDOG_ACTION");
  weft_watchdog_action_t parsed = WEFT_WATCHDOG_ACTION_REPORT;
  if (action && strcmp(action, "fail") == 0) {
    parsed = WEFT_WATCHDOG_ACTION_FAIL;
  } else if (action && action[0] && strcmp(action, "report") != 0) {
    fprintf(stderr,
            "weft: WEFT_WATCHDOG_ACTION='%s' is not 'report' or 'fail'; "
            "using 'report'\n",
            action);
  }
  weft_watchdog_set((weft_duration_t)ms * 1000000, parsed);
}

//===----------------------------------------------------------------------===//
// Snapshots
//===----------------------------------------------------------------------===//

#define WEFT_DIAGNOSTICS_LABEL_CAPACITY 64

typedef struct weft_snapshot_entry_t {
  const weft_semaphore_t* semaphore;  // identity only
  uint64_t value;    // wanted (waits) or to be signalled (signals)
  uint64_t current;  // the semaphore's value at the snapshot
  bool failed;
  char label[WEFT_DIAGNOSTICS_LABEL_CAPACITY];
} weft_snapshot_entry_t;

#define WEFT_DIAGNOSTICS_DETAIL_CAPACITY 160

typedef struct weft_snapshot_op_t {
  uint32_t device_index;
  const char* type_name;  // static strings
  const char* state;
  char detail[WEFT_DIAGNOSTICS_DETAIL_CAPACITY];  // "" when none
  uint32_t queue_index;
  weft_time_t submit_time;
  uint32_t wait_first;
  uint32_t wait_count;
  uint32_t signal_first;
  uint32_t signal_count;
} weft_snapshot_op_t;

typedef struct weft_snapshot_t {
  weft_allocator_t allocator;
  // First error met growing the arrays; the report says it is partial.
  bool truncated;
  weft_snapshot_op_t* ops;
  uint32_t op_count;
  uint32_t op_capacity;
  weft_snapshot_entry_t* entries;
  uint32_t entry_count;
  uint32_t entry_capacity;
  // Per device, by index: its id and the driver's own lines (copies), and
  // how many pending ops the driver could not describe.
  char** device_ids;
  char** device_descriptions;
  uint64_t* device_undescribed;
  uint32_t device_count;
  uint32_t device_capacity;
} weft_snapshot_t;

// Grows |*array| (of |element_size| elements) to hold |needed|.
static bool weft_snapshot_reserve(weft_snapshot_t* snapshot, void** array,
                                  uint32_t* capacity, uint32_t needed,
                                  size_t element_size) {
  if (needed <= *capacity) return true;
  uint32_t new_capacity = *capacity ? *capacity * 2 : 16;
  while (new_capacity < needed) new_capacity *= 2;
  weft_status_t status = weft_allocator_realloc(
      snapshot->allocator, (size_t)new_capacity * element_size, array);
  if (!weft_status_is_ok(status)) {
    weft_status_ignore(status);
    snapshot->truncated = true;
    return false;
  }
  *capacity = new_capacity;
  return true;
}

static void weft_snapshot_add_entries(weft_snapshot_t* snapshot,
                                      weft_semaphore_list_t list,
                                      uint32_t* out_first,
                                      uint32_t* out_count) {
  *out_first = snapshot->entry_count;
  *out_count = 0;
  if (!weft_snapshot_reserve(snapshot, (void**)&snapshot->entries,
                             &snapshot->entry_capacity,
                             snapshot->entry_count + list.count,
                             sizeof(*snapshot->entries))) {
    return;
  }
  for (uint32_t i = 0; i < list.count; ++i) {
    weft_snapshot_entry_t* entry = &snapshot->entries[snapshot->entry_count++];
    entry->semaphore = list.semaphores[i];
    entry->value = list.values[i];
    weft_semaphore_snapshot(list.semaphores[i], entry->label,
                            sizeof(entry->label), &entry->current,
                            &entry->failed);
  }
  *out_count = list.count;
}

static void weft_snapshot_visit(void* user_data, const weft_pending_op_t* op) {
  weft_snapshot_t* snapshot = (weft_snapshot_t*)user_data;
  if (!weft_snapshot_reserve(snapshot, (void**)&snapshot->ops,
                             &snapshot->op_capacity, snapshot->op_count + 1,
                             sizeof(*snapshot->ops))) {
    return;
  }
  weft_snapshot_op_t* record = &snapshot->ops[snapshot->op_count];
  memset(record, 0, sizeof(*record));
  record->device_index = snapshot->device_count - 1;
  record->type_name = op->type_name;
  record->state = op->state;
  if (op->detail) {
    snprintf(record->detail, sizeof(record->detail), "%s", op->detail);
  }
  record->queue_index = op->queue_index;
  record->submit_time = op->submit_time;
  weft_snapshot_add_entries(snapshot, op->wait_list, &record->wait_first,
                            &record->wait_count);
  weft_snapshot_add_entries(snapshot, op->signal_list, &record->signal_first,
                            &record->signal_count);
  ++snapshot->op_count;
}

// Copies |text| into a new allocation of |snapshot|'s allocator (NULL and
// the snapshot marked truncated when out of memory).
static char* weft_snapshot_copy_text(weft_snapshot_t* snapshot,
                                     const char* text, size_t length) {
  char* copy = NULL;
  weft_status_t status =
      weft_allocator_malloc(snapshot->allocator, length + 1, (void**)&copy);
  if (weft_status_is_ok(status)) {
    memcpy(copy, text, length);
    copy[length] = '\0';
  } else {
    weft_status_ignore(status);
    snapshot->truncated = true;
  }
  return copy;
}

// Adds |device|'s pending ops (and the driver's own lines about it) to
// |snapshot|.
static void weft_snapshot_add_device(weft_snapshot_t* snapshot,
                                     weft_device_t* device) {
  uint32_t needed = snapshot->device_count + 1;
  uint32_t capacity = snapshot->device_capacity;
  bool reserved =
      weft_snapshot_reserve(snapshot, (void**)&snapshot->device_ids,
                            &capacity, needed, sizeof(char*));
  capacity = snapshot->device_capacity;
  reserved = reserved && weft_snapshot_reserve(
                             snapshot, (void**)&snapshot->device_descriptions,
                             &capacity, needed, sizeof(char*));
  capacity = snapshot->device_capacity;
  reserved = reserved && weft_snapshot_reserve(
                             snapshot, (void**)&snapshot->device_undescribed,
                             &capacity, needed, sizeof(uint64_t));
  if (!reserved) return;
  snapshot->device_capacity = capacity;
  const char* id = weft_device_id(device);
  char* id_copy = weft_snapshot_copy_text(snapshot, id, strlen(id));
  if (!id_copy) return;
  const weft_device_vtable_t* vtable =
      (const weft_device_vtable_t*)device->resource.vtable;
  char* description = NULL;
  if (vtable->describe) {
    char* text = NULL;
    size_t length = 0;
    FILE* stream = open_memstream(&text, &length);
    if (stream) {
      vtable->describe(device, stream);
      fclose(stream);
      description = weft_snapshot_copy_text(snapshot, text, length);
      free(text);
    }
  }
  uint32_t index = snapshot->device_count++;
  snapshot->device_ids[index] = id_copy;
  snapshot->device_descriptions[index] = description;
  snapshot->device_undescribed[index] =
      vtable->for_each_pending(device, weft_snapshot_visit, snapshot);
  // Called with weft_diagnostics_mutex held (weft_snapshot_all_devices).
  for (weft_diagnostics_source_t* source = weft_diagnostics_sources; source;
       source = source->next) {
    source->for_each_pending(source->user_data, device, weft_snapshot_visit,
                             snapshot);
  }
}

static void weft_snapshot_initialize(weft_snapshot_t* out_snapshot) {
  memset(out_snapshot, 0, sizeof(*out_snapshot));
  out_snapshot->allocator = weft_allocator_system();
}

static void weft_snapshot_deinitialize(weft_snapshot_t* snapshot) {
  for (uint32_t i = 0; i < snapshot->device_count; ++i) {
    weft_allocator_free(snapshot->allocator, snapshot->device_ids[i]);
    weft_allocator_free(snapshot->allocator,
                        snapshot->device_descriptions[i]);
  }
  weft_allocator_free(snapshot->allocator, snapshot->device_ids);
  weft_allocator_free(snapshot->allocator, snapshot->device_descriptions);
  weft_allocator_free(snapshot->allocator, snapshot->device_undescribed);
  weft_allocator_free(snapshot->allocator, snapshot->ops);
  weft_allocator_free(snapshot->allocator, snapshot->entries);
}

// Snapshots every live device, and |focus| (when not NULL) even if it is
// not on the list. Returns |focus|'s index in the snapshot, or
// snapshot->device_count (no device) when it could not be added.
static uint32_t weft_snapshot_all_devices(weft_snapshot_t* snapshot,
                                          weft_device_t* focus) {
  uint32_t focus_index = UINT32_MAX;
  // Lock order: the device list, then a driver's locks (for_each_pending),
  // then a semaphore's. Release unregisters under the list's lock before
  // the driver tears anything down, so no device here is being destroyed.
  weft_slim_mutex_lock(&weft_diagnostics_mutex);
  for (weft_device_t* device = weft_diagnostics_devices; device;
       device = device->diagnostics_next) {
    uint32_t index = snapshot->device_count;
    weft_snapshot_add_device(snapshot, device);
    if (device == focus && snapshot->device_count > index) {
      focus_index = index;
    }
  }
  if (focus && !focus->diagnostics_registered) {
    uint32_t index = snapshot->device_count;
    weft_snapshot_add_device(snapshot, focus);
    if (snapshot->device_count > index) focus_index = index;
  }
  weft_slim_mutex_unlock(&weft_diagnostics_mutex);
  return focus_index == UINT32_MAX ? snapshot->device_count : focus_index;
}

//===----------------------------------------------------------------------===//
// Who signals what
//===----------------------------------------------------------------------===//

// Signal entries sorted by (semaphore, value) for the "who could satisfy"
// lookups.
typedef struct weft_signal_ref_t {
  const weft_semaphore_t* semaphore;
  uint64_t value;
  uint32_t op_index;
} weft_signal_ref_t;

static int weft_signal_ref_compare(const void* a, const void* b) {
  const weft_signal_ref_t* x = (const weft_signal_ref_t*)a;
  const weft_signal_ref_t* y = (const weft_signal_ref_t*)b;
  if (x->semaphore != y->semaphore) {
    return (uintptr_t)x->semaphore < (uintptr_t)y->semaphore ? -1 : 1;
  }
  if (x->value != y->value) return x->value < y->value ? -1 : 1;
  return x->op_index < y->op_index ? -1 : (x->op_index > y->op_index);
}

// Every signal of |snapshot|, sorted by (semaphore, value, op), into a new
// array of its allocator (*out_refs, freed by the caller).
static weft_status_t weft_snapshot_sort_signals(
    const weft_snapshot_t* snapshot, weft_signal_ref_t** out_refs,
    uint32_t* out_count) {
  uint32_t signal_total = 0;
  for (uint32_t i = 0; i < snapshot->op_count; ++i) {
    signal_total += snapshot->ops[i].signal_count;
  }
  weft_signal_ref_t* refs = NULL;
  weft_status_t status = weft_allocator_malloc_array(
      snapshot->allocator, signal_total ? signal_total : 1, sizeof(*refs),
      (void**)&refs);
  uint32_t ref_count = 0;
  if (weft_status_is_ok(status)) {
    for (uint32_t i = 0; i < snapshot->op_count; ++i) {
      const weft_snapshot_op_t* op = &snapshot->ops[i];
      for (uint32_t j = 0; j < op->signal_count; ++j) {
        const weft_snapshot_entry_t* entry =
            &snapshot->entries[op->signal_first + j];
        refs[ref_count].semaphore = entry->semaphore;
        refs[ref_count].value = entry->value;
        refs[ref_count].op_index = i;
        ++ref_count;
      }
    }
    qsort(refs, ref_count, sizeof(*refs), weft_signal_ref_compare);
  }
  *out_refs = refs;
  *out_count = ref_count;
  return status;
}

// The first ref in |refs| (sorted) at or after (|semaphore|, |value|).
static uint32_t weft_signal_lower_bound(const weft_signal_ref_t* refs,
                                        uint32_t ref_count,
                                        const weft_semaphore_t* semaphore,
                                        uint64_t value) {
  uint32_t lo = 0, hi = ref_count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const weft_signal_ref_t* ref = &refs[mid];
    bool less = (uintptr_t)ref->semaphore < (uintptr_t)semaphore ||
                (ref->semaphore == semaphore && ref->value < value);
    if (less) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

// What the report may say about waits nothing pending signals far enough:
// the sorted signals of the whole snapshot, and whether the snapshot lists
// every pending op (some drivers only count their ready and running ops,
// which may be the missing signallers).
typedef struct weft_mark_context_t {
  const weft_signal_ref_t* refs;  // NULL: no marks (out of memory)
  uint32_t ref_count;
  uint64_t undescribed;  // pending ops counted but not listed, all devices
} weft_mark_context_t;

// Marks |wait| (unreached, not failed) of op |op_index| when no other
// pending op of the snapshot signals its semaphore to its value or past:
//   " -- nothing pending signals 'S': only the host can"
//   " -- nothing pending signals 'S' past 5: only the host can"
// or, when some ops are not listed (or the snapshot is incomplete),
//   " -- no listed operation signals 'S' (2 ready or running operations
//   not listed)"
// ("other" / "else" when the op signals the semaphore itself). Nothing is
// written when another op signals it far enough.
static void weft_snapshot_print_wait_mark(const weft_snapshot_t* snapshot,
                                          const weft_mark_context_t* marks,
                                          uint32_t op_index,
                                          const weft_snapshot_entry_t* wait,
                                          FILE* stream) {
  if (!marks->refs) return;
  const weft_signal_ref_t* refs = marks->refs;
  uint32_t first = weft_signal_lower_bound(refs, marks->ref_count,
                                           wait->semaphore, wait->value);
  for (uint32_t i = first;
       i < marks->ref_count && refs[i].semaphore == wait->semaphore; ++i) {
    if (refs[i].op_index != op_index) return;  // someone else can
  }
  // The highest value another op signals it to, below the one wanted.
  bool has_lower = false;
  uint64_t lower = 0;
  for (uint32_t i = first; i > 0 && refs[i - 1].semaphore == wait->semaphore;
       --i) {
    if (refs[i - 1].op_index != op_index) {
      has_lower = true;
      lower = refs[i - 1].value;
      break;
    }
  }
  const weft_snapshot_op_t* op = &snapshot->ops[op_index];
  bool signals_itself = false;
  for (uint32_t i = 0; i < op->signal_count; ++i) {
    if (snapshot->entries[op->signal_first + i].semaphore == wait->semaphore) {
      signals_itself = true;
    }
  }
  char past[32] = "";
  if (has_lower) snprintf(past, sizeof(past), " past %" PRIu64, lower);
  if (marks->undescribed == 0 && !snapshot->truncated) {
    fprintf(stream, " -- nothing %spending signals %s%s: only the host can",
            signals_itself ? "else " : "", wait->label, past);
  } else if (marks->undescribed != 0) {
    fprintf(stream,
            " -- no %slisted operation signals %s%s (%" PRIu64
            " ready or running operation%s not listed)",
            signals_itself ? "other " : "", wait->label, past,
            marks->undescribed, marks->undescribed == 1 ? "" : "s");
  } else {
    fprintf(stream,
            " -- no %slisted operation signals %s%s (the report is "
            "incomplete)",
            signals_itself ? "other " : "", wait->label, past);
  }
}

static void weft_snapshot_print_op(const weft_snapshot_t* snapshot,
                                   const weft_mark_context_t* marks,
                                   uint32_t op_index, weft_time_t now,
                                   FILE* stream) {
  const weft_snapshot_op_t* op = &snapshot->ops[op_index];
  uint32_t unreached = 0;
  for (uint32_t i = 0; i < op->wait_count; ++i) {
    const weft_snapshot_entry_t* entry = &snapshot->entries[op->wait_first + i];
    if (entry->current < entry->value || entry->failed) ++unreached;
  }
  fprintf(stream, "  %s on queue %u: %s", op->type_name, op->queue_index,
          op->state);
  if (op->submit_time) {
    fprintf(stream, ", submitted %.3f ms ago",
            (double)(now - op->submit_time) / 1e6);
  }
  fprintf(stream, ", %u of %u wait%s not reached\n", unreached, op->wait_count,
          op->wait_count == 1 ? "" : "s");
  if (op->detail[0]) fprintf(stream, "    %s\n", op->detail);
  for (uint32_t i = 0; i < op->wait_count; ++i) {
    const weft_snapshot_entry_t* entry = &snapshot->entries[op->wait_first + i];
    fprintf(stream, "    waits for semaphore %s to reach %" PRIu64
                    ": now %" PRIu64,
            entry->label, entry->value, entry->current);
    if (entry->failed) {
      fputs(" (failed)", stream);
    } else if (entry->current >= entry->value) {
      fputs(" (reached)", stream);
    } else {
      weft_snapshot_print_wait_mark(snapshot, marks, op_index, entry, stream);
    }
    fputc('\n', stream);
  }
  for (uint32_t i = 0; i < op->signal_count; ++i) {
    const weft_snapshot_entry_t* entry =
        &snapshot->entries[op->signal_first + i];
    fprintf(stream, "    then signals semaphore %s to %" PRIu64 "\n",
            entry->label, entry->value);
  }
}

// Prints the ops of device |device_index| of |snapshot|.
static void weft_snapshot_print_device(const weft_snapshot_t* snapshot,
                                       const weft_mark_context_t* marks,
                                       uint32_t device_index, FILE* stream) {
  uint32_t count = 0;
  for (uint32_t i = 0; i < snapshot->op_count; ++i) {
    if (snapshot->ops[i].device_index == device_index) ++count;
  }
  uint64_t undescribed = snapshot->device_undescribed[device_index];
  fprintf(stream, "device '%s': %" PRIu64 " pending operation%s\n",
          snapshot->device_ids[device_index], count + undescribed,
          count + undescribed == 1 ? "" : "s");
  if (snapshot->device_descriptions[device_index]) {
    fputs(snapshot->device_descriptions[device_index], stream);
  }
  if (undescribed) {
    fprintf(stream, "  (%" PRIu64 " of them ready or running: not listed)\n",
            undescribed);
  }
  weft_time_t now = weft_time_now();
  for (uint32_t i = 0; i < snapshot->op_count; ++i) {
    if (snapshot->ops[i].device_index == device_index) {
      weft_snapshot_print_op(snapshot, marks, i, now, stream);
    }
  }
}

//===----------------------------------------------------------------------===//
// Wait-for cycles
//===----------------------------------------------------------------------===//

// The graph: op A depends on op B when one of A's unreached waits (S, v)
// can be satisfied by exactly one pending op, B != A, which signals S to a
// value >= v. (A wait more than one pending op could satisfy is left out:
// the graph then has no edge that might not be real, so a cycle in it is a
// true deadlock unless something outside weft, a host signal, breaks it.)
// Each op has one outgoing edge per such wait; a depth-first search with
// colours finds the cycles.

typedef struct weft_cycle_search_t {
  const weft_snapshot_t* snapshot;
  // Per op: the first edge in |edges| and how many.
  uint32_t* edge_first;
  uint32_t* edge_count;
  uint32_t* edges;  // target op indices
  // Per edge: the wait entry it came from.
  uint32_t* edge_wait;
  uint8_t* colour;  // 0 white, 1 on the stack, 2 done
  uint32_t* stack;
  uint32_t* stack_edge;  // per stack slot: the next edge to try
  uint32_t cycle_count;
  // Only cycles through an op of this device are counted and printed
  // (UINT32_MAX: every cycle).
  uint32_t focus_device;
  FILE* stream;
} weft_cycle_search_t;

// Finds the only op other than |self| signalling |semaphore| to >= |value|
// among |refs| (sorted); UINT32_MAX when none or several.
static uint32_t weft_find_only_signaller(const weft_signal_ref_t* refs,
                                         uint32_t ref_count,
                                         const weft_semaphore_t* semaphore,
                                         uint64_t value, uint32_t self) {
  uint32_t lo = weft_signal_lower_bound(refs, ref_count, semaphore, value);
  uint32_t found = UINT32_MAX;
  uint32_t count = 0;
  for (uint32_t i = lo; i < ref_count && refs[i].semaphore == semaphore; ++i) {
    if (refs[i].op_index == self || refs[i].op_index == found) continue;
    found = refs[i].op_index;
    if (++count > 1) return UINT32_MAX;
  }
  return count == 1 ? found : UINT32_MAX;
}

static void weft_cycle_print(weft_cycle_search_t* search, uint32_t depth,
                             uint32_t target) {
  const weft_snapshot_t* snapshot = search->snapshot;
  uint32_t start = 0;
  while (search->stack[start] != target) ++start;
  bool in_focus = search->focus_device == UINT32_MAX;
  for (uint32_t i = start; i < depth && !in_focus; ++i) {
    in_focus =
        snapshot->ops[search->stack[i]].device_index == search->focus_device;
  }
  if (!in_focus) return;
  ++search->cycle_count;
  if (!search->stream) return;
  fprintf(search->stream,
          "wait-for cycle %u (%u operation%s; nothing inside weft can break "
          "it):\n",
          search->cycle_count, depth - start, depth - start == 1 ? "" : "s");
  for (uint32_t i = start; i < depth; ++i) {
    const weft_snapshot_op_t* op = &snapshot->ops[search->stack[i]];
    // The edge taken from this slot is the one before stack_edge.
    uint32_t edge = search->stack_edge[i] - 1;
    const weft_snapshot_entry_t* wait =
        &snapshot->entries[search->edge_wait[edge]];
    const weft_snapshot_op_t* next = &snapshot->ops[search->edges[edge]];
    fprintf(search->stream,
            "  %s on queue %u of '%s' waits for semaphore %s to reach %" PRIu64
            " (now %" PRIu64 "), which only %s on queue %u would signal\n",
            op->type_name, op->queue_index,
            snapshot->device_ids[op->device_index], wait->label, wait->value,
            wait->current, next->type_name, next->queue_index);
  }
}

// Iterative DFS from |root| (no recursion: pending chains can be long).
static void weft_cycle_search_from(weft_cycle_search_t* search,
                                   uint32_t root) {
  uint32_t depth = 0;
  search->stack[depth] = root;
  search->stack_edge[depth] = search->edge_first[root];
  search->colour[root] = 1;
  ++depth;
  while (depth > 0) {
    uint32_t node = search->stack[depth - 1];
    uint32_t edge = search->stack_edge[depth - 1];
    if (edge == search->edge_first[node] + search->edge_count[node]) {
      search->colour[node] = 2;
      --depth;
      continue;
    }
    ++search->stack_edge[depth - 1];
    uint32_t target = search->edges[edge];
    if (search->colour[target] == 1) {
      weft_cycle_print(search, depth, target);
    } else if (search->colour[target] == 0) {
      search->colour[target] = 1;
      search->stack[depth] = target;
      search->stack_edge[depth] = search->edge_first[target];
      ++depth;
    }
  }
}

// Finds the wait-for cycles among |snapshot|'s ops (through an op of
// device |focus_device|, or any with UINT32_MAX), given its signals sorted
// in |refs|; writes each to |stream| when not NULL and returns how many.
// *out_searched is false when memory ran out (said on |stream|).
static uint32_t weft_snapshot_find_cycles(const weft_snapshot_t* snapshot,
                                          const weft_signal_ref_t* refs,
                                          uint32_t ref_count,
                                          uint32_t focus_device, FILE* stream,
                                          bool* out_searched) {
  weft_allocator_t allocator = snapshot->allocator;
  uint32_t op_count = snapshot->op_count;
  *out_searched = true;
  if (op_count == 0) return 0;
  uint32_t wait_total = 0;
  for (uint32_t i = 0; i < op_count; ++i) {
    wait_total += snapshot->ops[i].wait_count;
  }
  weft_cycle_search_t search;
  memset(&search, 0, sizeof(search));
  search.snapshot = snapshot;
  search.focus_device = focus_device;
  search.stream = stream;
  // One allocation per array; any failure skips the search (reported).
  uint32_t edge_capacity = wait_total ? wait_total : 1;
  weft_status_t status = weft_allocator_malloc_array(
      allocator, op_count, sizeof(uint32_t), (void**)&search.edge_first);
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, op_count,
                                         sizeof(uint32_t),
                                         (void**)&search.edge_count);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, edge_capacity,
                                         sizeof(uint32_t),
                                         (void**)&search.edges);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, edge_capacity,
                                         sizeof(uint32_t),
                                         (void**)&search.edge_wait);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, op_count, 1,
                                         (void**)&search.colour);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, op_count,
                                         sizeof(uint32_t),
                                         (void**)&search.stack);
  }
  if (weft_status_is_ok(status)) {
    status = weft_allocator_malloc_array(allocator, op_count,
                                         sizeof(uint32_t),
                                         (void**)&search.stack_edge);
  }
  if (weft_status_is_ok(status)) {
    uint32_t edge_count = 0;
    for (uint32_t i = 0; i < op_count; ++i) {
      const weft_snapshot_op_t* op = &snapshot->ops[i];
      search.edge_first[i] = edge_count;
      search.edge_count[i] = 0;
      search.colour[i] = 0;
      for (uint32_t j = 0; j < op->wait_count; ++j) {
        uint32_t wait_index = op->wait_first + j;
        const weft_snapshot_entry_t* wait = &snapshot->entries[wait_index];
        if (wait->failed || wait->current >= wait->value) continue;
        uint32_t target = weft_find_only_signaller(
            refs, ref_count, wait->semaphore, wait->value, i);
        if (target == UINT32_MAX) continue;
        search.edges[edge_count] = target;
        search.edge_wait[edge_count] = wait_index;
        ++edge_count;
        ++search.edge_count[i];
      }
    }
    for (uint32_t i = 0; i < op_count; ++i) {
      if (search.colour[i] == 0) weft_cycle_search_from(&search, i);
    }
  } else {
    if (stream) {
      fprintf(stream, "(wait-for cycle search skipped: %s)\n",
              weft_status_message(status));
    }
    weft_status_ignore(status);
    *out_searched = false;
  }
  weft_allocator_free(allocator, search.edge_first);
  weft_allocator_free(allocator, search.edge_count);
  weft_allocator_free(allocator, search.edges);
  weft_allocator_free(allocator, search.edge_wait);
  weft_allocator_free(allocator, search.colour);
  weft_allocator_free(allocator, search.stack);
  weft_allocator_free(allocator, search.stack_edge);
  return search.cycle_count;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

// Prints device |focus_device| of |snapshot| (every device with
// UINT32_MAX), marking waits nothing in the whole snapshot signals, then
// the cycles through it.
static void weft_snapshot_print(const weft_snapshot_t* snapshot,
                                uint32_t focus_device, FILE* stream) {
  weft_signal_ref_t* refs = NULL;
  uint32_t ref_count = 0;
  weft_status_t status =
      weft_snapshot_sort_signals(snapshot, &refs, &ref_count);
  if (!weft_status_is_ok(status)) {
    // No marks and no cycle search (said below).
    weft_status_ignore(status);
    refs = NULL;
    ref_count = 0;
  }
  weft_mark_context_t marks = {refs, ref_count, 0};
  for (uint32_t i = 0; i < snapshot->device_count; ++i) {
    marks.undescribed += snapshot->device_undescribed[i];
  }
  for (uint32_t i = 0; i < snapshot->device_count; ++i) {
    if (focus_device == UINT32_MAX || i == focus_device) {
      weft_snapshot_print_device(snapshot, &marks, i, stream);
    }
  }
  if (snapshot->truncated) {
    fprintf(stream, "(report incomplete: out of memory while collecting)\n");
  }
  if (refs) {
    bool searched = false;
    uint32_t cycles = weft_snapshot_find_cycles(
        snapshot, refs, ref_count, focus_device, stream, &searched);
    if (searched && cycles == 0) {
      fprintf(stream, "no wait-for cycle among them\n");
    }
  } else {
    fprintf(stream,
            "(wait-for cycle search skipped: out of memory sorting signals)\n");
  }
  weft_allocator_free(snapshot->allocator, refs);
}

void weft_device_dump_pending(weft_device_t* device, FILE* stream) {
  if (!device || !stream) return;
  weft_snapshot_t snapshot;
  weft_snapshot_initialize(&snapshot);
  // Every live device is collected (an op elsewhere may be the one that
  // signals what this device's ops wait for); only |device| is printed.
  uint32_t focus = weft_snapshot_all_devices(&snapshot, device);
  weft_snapshot_print(&snapshot, focus, stream);
  weft_snapshot_deinitialize(&snapshot);
}

void weft_diagnostics_dump(FILE* stream) {
  if (!stream) return;
  weft_snapshot_t snapshot;
  weft_snapshot_initialize(&snapshot);
  weft_snapshot_all_devices(&snapshot, NULL);
  if (snapshot.device_count == 0) fprintf(stream, "no live devices\n");
  weft_snapshot_print(&snapshot, UINT32_MAX, stream);
  weft_snapshot_deinitialize(&snapshot);
}

uint32_t weft_diagnostics_find_cycles(FILE* stream) {
  weft_snapshot_t snapshot;
  weft_snapshot_initialize(&snapshot);
  weft_snapshot_all_devices(&snapshot, NULL);
  weft_signal_ref_t* refs = NULL;
  uint32_t ref_count = 0;
  weft_status_t status =
      weft_snapshot_sort_signals(&snapshot, &refs, &ref_count);
  uint32_t cycles = 0;
  if (weft_status_is_ok(status)) {
    bool searched = false;
    cycles = weft_snapshot_find_cycles(&snapshot, refs, ref_count, UINT32_MAX,
                                       stream, &searched);
  } else {
    if (stream) {
      fprintf(stream, "(wait-for cycle search skipped: %s)\n",
              weft_status_message(status));
    }
    weft_status_ignore(status);
  }
  weft_allocator_free(snapshot.allocator, refs);
  weft_snapshot_deinitialize(&snapshot);
  return cycles;
}

void weft_watchdog_report(const char* waiting_on, weft_duration_t waited_ns) {
  fprintf(stderr,
          "weft watchdog: a host wait for %s has been blocked for %.0f ms "
          "(WEFT_WATCHDOG_MS / weft_watchdog_set); pending operations:\n",
          waiting_on, (double)waited_ns / 1e6);
  weft_diagnostics_dump(stderr);
  fflush(stderr);
}
