#!/usr/bin/env bash
# The flagship workload: installs the dependencies, builds weft-decode and
# weft-decode-gen with the `release` preset, writes a checkpoint of random
# weights (no download) and decodes with it:
#   ./scripts/run-decode.sh [SHAPE] [STEPS] [DEVICE]
# SHAPE: 15M (default), 110M or 1.1B (llama2.c f32 checkpoints, written
# once into build/release/decode-models); STEPS: tokens to generate
# (default 64); DEVICE: a weft device string (default local-task).
set -euo pipefail
cd "$(dirname "$0")/.."

shape="${1:-15M}"
steps="${2:-64}"
device="${3:-local-task}"
./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "${JOBS:-$(nproc)}" \
  --target weft-decode weft-decode-gen
models=build/release/decode-models
mkdir -p "$models"
model="$models/$shape-f32.bin"
if [ ! -f "$model" ]; then
  ./build/release/examples/decode/weft-decode-gen --shape="$shape" \
    --out="$model.tmp"
  mv "$model.tmp" "$model"
fi
./build/release/examples/decode/weft-decode --model="$model" \
  --steps="$steps" --prompt-ids=1 --device="$device"
