#!/usr/bin/env bash
# Installs the dependencies, builds weft with the `release` preset and runs
# the example pipeline (file -> buffer -> kernel -> buffer -> file) on a
# device, local-task unless one is given:
#   ./scripts/run-example.sh [DEVICE] [COUNT]
# It builds the example and everything `cmake --install build/release`
# installs (target weft_installable: libweft.so, libweft.a, weft-info,
# weft-asm, weft-trace), so the README's install step works right after it; not the
# tests or the benchmarks, which only scripts/test.sh needs.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "${JOBS:-$(nproc)}" \
  --target weft-example-pipeline weft_installable
./build/release/tools/weft-info
./build/release/examples/weft-example-pipeline "${1:-local-task}" ${2:+"$2"}
