// weft: channels over MPI (libweft_mpi; link weft::weft_mpi).
//
// A channel duplicates the communicator it is made from, so its traffic
// never matches the application's own messages, and sets MPI_ERRORS_RETURN
// on the duplicate: every MPI error comes back as a status naming the
// call, the rank, the peer or root and MPI's own error string.
//
// Each channel has one progress engine, a thread that starts the MPI
// non-blocking call of each op once its waits are reached and polls the
// requests in flight (MPI_Testsome, backing off to sleeps when nothing
// completes), then publishes the op's signals. No queue thread is held
// while a transfer is in flight. The engine calls MPI concurrently with
// the application, so MPI must provide MPI_THREAD_MULTIPLE.
//
// NULL: pointer arguments are required unless the function's comment says
// "|x| may be NULL" (see "NULL arguments" in weft/status.h).
#ifndef WEFT_MPI_H_
#define WEFT_MPI_H_

#include <mpi.h>

#include "weft/allocator.h"
#include "weft/channel.h"
#include "weft/status.h"

#ifdef __cplusplus
extern "C" {
#endif

// Makes a channel of |comm| (the application keeps owning |comm|; the
// channel works on a duplicate). |name| is the channel's name in messages
// (copied; may be NULL: "mpi"). FAILED_PRECONDITION when MPI is not
// initialised or was initialised below MPI_THREAD_MULTIPLE. Collective
// over |comm|.
weft_status_t weft_mpi_channel_create(MPI_Comm comm, const char* name,
                                      weft_channel_flags_t flags,
                                      weft_allocator_t allocator,
                                      weft_channel_t** out_channel);

// Makes a channel of MPI_COMM_WORLD ("world"), initialising MPI with
// MPI_THREAD_MULTIPLE first when nobody has (as mpirun's environment
// describes the job). MPI initialised by weft is finalised at exit
// (atexit), so release every channel before main returns. FAILED_PRECONDITION
// when the MPI library cannot provide MPI_THREAD_MULTIPLE.
weft_status_t weft_mpi_channel_create_from_environment(
    weft_channel_flags_t flags, weft_allocator_t allocator,
    weft_channel_t** out_channel);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // WEFT_MPI_H_
