#!/usr/bin/env bash
# Builds the release preset and runs weft_mpi_bench (a weft channel's
# allreduce against MPI_Allreduce called directly) under mpiexec, on
# RANKS ranks (default 2) of this machine over shared memory. Extra
# arguments go to the benchmark (--sizes=4096,262144 --reps=9).
# Needs Open MPI (scripts/install-deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
ranks="${RANKS:-2}"
./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target weft_mpi_bench -j "$(nproc)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
mpiexec -n "$ranks" build/release/bench/weft_mpi_bench "$@"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
