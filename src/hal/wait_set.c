// weft: wait sets (see wait_set.h).
//
// Counting: |pending_count| starts at count + 1. Every entry is counted down
// exactly once: by its own callback when its timepoint fires, by whoever
// cancels it successfully, or by start when it never registers it (a failure
// was already seen). The extra one is start's guard, dropped after the last
// registration, so the ready function cannot run while start still walks the
// entries. Whoever takes the count to zero calls the ready function, and
// nothing touches the set afterwards.
//
// Deciding: the first decisive callback (a failure; in ANY mode also the
// first entry reached) publishes its entry and sweeps the other entries
// with weft_semaphore_cancel_timepoint. An entry start has not yet
// registered cannot be cancelled then, so start re-checks for a decision
// after each registration and cancels that entry itself; the semaphore's
// lock orders the two, so one of them always sees the other.
#include "hal/wait_set.h"

#include <inttypes.h>

#include "hal/semaphore_impl.h"

size_t weft_wait_set_storage_size(uint32_t wait_count) {
  return sizeof(weft_wait_set_t) +
         (size_t)wait_count * sizeof(weft_wait_set_entry_t);
}

// Drops |count| from the pending count; the thread taking it to zero calls
// the ready function.
static void weft_wait_set_count_down(weft_wait_set_t* set, uint32_t count) {
  // Acq_rel: every entry's writes (its failure) happen-before the ready call
  // made by whichever thread finishes the count.
  if (weft_atomic_fetch_sub(&set->pending_count, count,
                            memory_order_acq_rel) != count) {
    return;
  }
  weft_status_t status = WEFT_OK;
  weft_wait_set_entry_t* decided_entry =
      weft_atomic_load(&set->decided_entry, memory_order_relaxed);
  // Acq_rel: takes the reason weft_wait_set_cancel published (exactly one
  // of the finisher and the canceller's take-back gets it).
  weft_status_t cancel_reason =
      weft_atomic_load(&set->cancel_reason, memory_order_relaxed)
          ? weft_atomic_exchange(&set->cancel_reason, WEFT_OK,
                                 memory_order_acq_rel)
          : WEFT_OK;
  if (decided_entry && !weft_status_is_ok(decided_entry->failure)) {
    weft_status_free(cancel_reason);
    char label[WEFT_SEMAPHORE_LABEL_CAPACITY];
    weft_semaphore_label(decided_entry->semaphore, label, sizeof(label));
    status = weft_status_annotate(decided_entry->failure,
                                  "while waiting for semaphore %s to reach "
                                  "%" PRIu64,
                                  label, decided_entry->value);
  } else if (decided_entry) {
    // ANY: one entry was reached before any cancel took the set.
    weft_status_free(cancel_reason);
  } else {
    status = cancel_reason;
  }
  weft_wait_set_ready_fn_t fn = set->fn;
  void* user_data = set->user_data;
  fn(user_data, status);
}

// True once some entry decided the set.
static bool weft_wait_set_is_decided(weft_wait_set_t* set) {
  // Acquire: pairs with the publishing compare-exchange.
  return weft_atomic_load(&set->decided_entry, memory_order_acquire) != NULL;
}

// Cancels every other entry after |decided| decided the set.
static void weft_wait_set_cancel_others(weft_wait_set_t* set,
                                        weft_wait_set_entry_t* decided) {
  uint32_t cancelled_count = 0;
  for (uint32_t i = 0; i < set->count; ++i) {
    weft_wait_set_entry_t* entry = &set->entries[i];
    // A false return: not registered yet (start handles it), or already
    // fired or firing (its own callback counts it down).
    if (entry != decided &&
        weft_semaphore_cancel_timepoint(entry->semaphore, &entry->timepoint)) {
      ++cancelled_count;
    }
  }
  // Our own entry still holds the count up, so this never reaches zero.
  if (cancelled_count) weft_wait_set_count_down(set, cancelled_count);
}

static void weft_wait_set_timepoint_fired(void* user_data,
                                          weft_timepoint_t* timepoint,
                                          weft_status_t status) {
  weft_wait_set_entry_t* entry = (weft_wait_set_entry_t*)user_data;
  weft_wait_set_t* set = entry->set;
  if (!weft_status_is_ok(status) || set->mode == WEFT_WAIT_MODE_ANY) {
    entry->failure = status;
    weft_wait_set_entry_t* expected = NULL;
    // Acq_rel on success: releases |entry->failure| to readers of
    // |decided_entry|, and orders the decision before our cancel sweep.
    if (weft_atomic_compare_exchange_strong(&set->decided_entry, &expected,
                                            entry, memory_order_acq_rel,
                                            memory_order_acquire)) {
      weft_wait_set_cancel_others(set, entry);
    } else {
      weft_status_free(status);  // another entry decided first
      entry->failure = WEFT_OK;
    }
  }
  weft_wait_set_count_down(set, 1);
}

void weft_wait_set_start(weft_wait_set_t* set, weft_wait_mode_t mode,
                         weft_semaphore_list_t waits, weft_time_t deadline,
                         weft_wait_set_ready_fn_t fn, void* user_data) {
  weft_wait_set_start_issued(set, mode, waits, /*issued_entries=*/0, deadline,
                             fn, user_data);
}

void weft_wait_set_start_issued(weft_wait_set_t* set, weft_wait_mode_t mode,
                                weft_semaphore_list_t waits,
                                uint64_t issued_entries, weft_time_t deadline,
                                weft_wait_set_ready_fn_t fn, void* user_data) {
  set->fn = fn;
  set->user_data = user_data;
  set->mode = mode;
  set->deadline = deadline;
  set->count = waits.count;
  atomic_init(&set->decided_entry, NULL);
  atomic_init(&set->cancel_reason, WEFT_OK);
  atomic_init(&set->pending_count, waits.count + 1);
  for (uint32_t i = 0; i < waits.count; ++i) {
    weft_wait_set_entry_t* entry = &set->entries[i];
    entry->timepoint.fn = weft_wait_set_timepoint_fired;
    entry->timepoint.user_data = entry;
    entry->timepoint.semaphore = NULL;
    entry->timepoint.next = NULL;
    entry->timepoint.prev = NULL;
    entry->set = set;
    entry->semaphore = waits.semaphores[i];
    entry->value = waits.values[i];
    entry->failure = WEFT_OK;
  }
  // Waits that failed already: the earliest failure decides, whatever the
  // order of the list, and nothing is registered.
  const uint32_t failed_index = weft_semaphore_list_earliest_failure(waits);
  if (failed_index != UINT32_MAX) {
    weft_wait_set_entry_t* entry = &set->entries[failed_index];
    uint64_t value = 0;
    // A clone of the semaphore's failure, as its timepoint would carry.
    entry->failure = weft_semaphore_query(entry->semaphore, &value);
    weft_atomic_store(&set->decided_entry, entry, memory_order_relaxed);
    weft_wait_set_count_down(set, waits.count + 1);
    return;
  }
  uint32_t skipped_count = 0;
  for (uint32_t i = 0; i < waits.count; ++i) {
    weft_wait_set_entry_t* entry = &set->entries[i];
    if (weft_wait_set_is_decided(set)) {
      // Already decided: never register the rest.
      ++skipped_count;
      continue;
    }
    if (i < 64 && (issued_entries >> i) & 1u) {
      weft_semaphore_register_issued_timepoint(entry->semaphore, entry->value,
                                               &entry->timepoint);
    } else {
      weft_semaphore_register_timepoint(entry->semaphore, entry->value,
                                        &entry->timepoint);
    }
    // A decision published before this registration may have swept past
    // this entry while it was unregistered: cancel it here instead.
    if (weft_wait_set_is_decided(set) &&
        weft_semaphore_cancel_timepoint(entry->semaphore, &entry->timepoint)) {
      ++skipped_count;
    }
  }
  // Drop the skipped entries and start's own guard.
  weft_wait_set_count_down(set, skipped_count + 1);
}

uint32_t weft_wait_set_cancel(weft_wait_set_t* set, weft_status_t reason) {
  weft_status_t expected = WEFT_OK;
  // Release: the reason's contents are visible to whoever takes it.
  if (!weft_atomic_compare_exchange_strong(&set->cancel_reason, &expected,
                                           reason, memory_order_release,
                                           memory_order_relaxed)) {
    weft_status_free(reason);  // cancelled twice: the first reason stands
  }
  uint32_t cancelled_count = 0;
  for (uint32_t i = 0; i < set->count; ++i) {
    weft_wait_set_entry_t* entry = &set->entries[i];
    // False: already fired or firing (its callback counts it down), or
    // never registered (start skipped it after a failure).
    if (weft_semaphore_cancel_timepoint(entry->semaphore, &entry->timepoint)) {
      ++cancelled_count;
    }
  }
  if (cancelled_count) {
    weft_wait_set_count_down(set, cancelled_count);
  } else {
    // Nothing of ours holds the set open: it finished (or is finishing)
    // on its own. Take the reason back unless the finisher took it.
    weft_status_free(weft_atomic_exchange(&set->cancel_reason, WEFT_OK,
                                          memory_order_acq_rel));
  }
  return cancelled_count;
}

bool weft_wait_set_check_deadline(weft_wait_set_t* set, weft_time_t now) {
  const bool due = now >= set->deadline;
  if (due) {
    weft_wait_set_cancel(set,
                         weft_status_from_code(WEFT_STATUS_DEADLINE_EXCEEDED));
  }
  return due;
}
