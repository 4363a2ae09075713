// weft_mpi_channel_create refuses an MPI it cannot use: before MPI_Init,
// and when MPI was initialised below MPI_THREAD_MULTIPLE (the progress
// engine calls MPI beside the application's threads). Run on one rank.
#include <stdio.h>
#include <string.h>

#include "weft/mpi.h"

static int expect_refused(const char* what, const char* needle) {
  weft_channel_t* channel = (weft_channel_t*)0x1;
  weft_status_t status = weft_mpi_channel_create(
      MPI_COMM_WORLD, "world", 0, weft_allocator_system(), &channel);
  const int ok = weft_status_is(status, WEFT_STATUS_FAILED_PRECONDITION) &&
                 strstr(weft_status_message(status), needle) != NULL &&
                 channel == NULL;
  if (!ok) {
    fprintf(stderr, "%s: expected FAILED_PRECONDITION with '%s', got: ", what,
            needle);
    weft_status_fprint(stderr, status);
  }
  weft_status_free(status);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  int failures = expect_refused("before MPI_Init", "MPI is not initialized");
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    failures += expect_refused("below MULTIPLE", "needs MPI_THREAD_MULTIPLE");
  }
  MPI_Finalize();
  failures += expect_refused("after MPI_Finalize", "MPI is finalized");
  if (!failures) printf("ok\n");
  return failures ? 1 : 0;
}
