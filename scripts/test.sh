#!/usr/bin/env bash
# Installs the dependencies, then builds and tests weft with the `default`
# preset (RelWithDebInfo, warnings as errors) in build/default:
#   cmake --preset default && cmake --build --preset default &&
#   ctest --preset default
# JOBS (default: the number of cores) sets build and test parallelism.
# PRESET picks another preset (asan, tsan, release).
set -euo pipefail
cd "$(dirname "$0")/.."

jobs="${JOBS:-$(nproc)}"
preset="${PRESET:-default}"

./scripts/install-deps.sh
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$jobs"
ctest --preset "$preset" -j "$jobs"
