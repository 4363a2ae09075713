// weft: lock-free multi-producer single-consumer intrusive list.
//
// Any thread may push; only one consumer thread at a time may pop. Push is a
// CAS loop on the head (Treiber stack); the consumer takes the whole stack
// with one exchange, so there is no ABA: nothing ever pops a single node
// concurrently with a push. pop_all returns entries in FIFO (push) order.
#ifndef WEFT_BASE_MPSC_LIST_H_
#define WEFT_BASE_MPSC_LIST_H_

#include <stdbool.h>
#include <stddef.h>

#include "base/atomics.h"

typedef struct weft_mpsc_entry_t {
  struct weft_mpsc_entry_t* next;
} weft_mpsc_entry_t;

typedef struct weft_mpsc_list_t {
  _Atomic(weft_mpsc_entry_t*) head;
} weft_mpsc_list_t;

void weft_mpsc_list_initialize(weft_mpsc_list_t* list);

// Pushes |entry|; safe from any thread. Returns true if the list was empty.
bool weft_mpsc_list_push(weft_mpsc_list_t* list, weft_mpsc_entry_t* entry);

// Takes every entry, oldest first, as a NULL-terminated chain. Consumer only.
weft_mpsc_entry_t* weft_mpsc_list_pop_all(weft_mpsc_list_t* list);

// True when the list looks empty (a racy snapshot).
bool weft_mpsc_list_is_empty(weft_mpsc_list_t* list);

// Recovers the containing struct from an entry pointer.
#define weft_container_of(ptr, type, member) \
  ((type*)((char*)(ptr) - offsetof(type, member)))

#endif  // WEFT_BASE_MPSC_LIST_H_
