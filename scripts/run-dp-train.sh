#!/usr/bin/env bash
# Builds the release preset and runs the data-parallel training example
# (examples/dp_train) on RANKS ranks (default 2) of this machine through
# mpiexec: the queued step and the blocking-MPI_Allreduce baseline, each
# checked against one process on the whole batch. Extra arguments go to
# weft-example-dp-train (--steps=N --batch=B --dims=IN,HIDDEN,OUT
# --device=STRING --mode=queue|blocking|both). Needs Open MPI
# (scripts/install-deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
ranks="${RANKS:-2}"
./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target weft-example-dp-train -j "$(nproc)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
mpiexec -n "$ranks" build/release/examples/weft-example-dp-train \
  "--device=local-task?workers=1" "$@"
