#!/usr/bin/env bash
# Installs the dependencies, builds weft with the `release` preset and runs
# the example pipeline (file -> buffer -> kernel -> buffer -> file) on a
# device, local-task unless one is given:
#   ./scripts/run-example.sh [DEVICE] [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "${JOBS:-$(nproc)}" \
  --target weft-example-pipeline weft-info
./build/release/tools/weft-info
./build/release/examples/weft-example-pipeline "${1:-local-task}" ${2:+"$2"}
