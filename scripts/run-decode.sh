#!/usr/bin/env bash
# The flagship workload: installs the dependencies, builds weft-decode and
# weft-decode-gen with the `release` preset, writes a checkpoint of random
# weights (no download) and decodes with it from a text prompt to text:
#   ./scripts/run-decode.sh [SHAPE] [STEPS] [DEVICE] [PROMPT]
# SHAPE: 15M (default), 110M or 1.1B (GGUF checkpoints with the
# generator's synthetic SentencePiece vocabulary, written once into
# build/release/decode-models; DTYPE in the environment picks their
# weights: f32 (default), f16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k,
# q4_k_m or q5_k_m); STEPS: tokens
# to generate (default 64);
# DEVICE: a weft device string (default local-task); PROMPT: the text to
# start from (default "Once upon a time"). TEMPERATURE, TOP_K, TOP_P and
# SEED in the environment sample instead of the greedy default (the
# weights are random, so the text is too).
set -euo pipefail
cd "$(dirname "$0")/.."

shape="${1:-15M}"
steps="${2:-64}"
device="${3:-local-task}"
prompt="${4:-Once upon a time}"
./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "${JOBS:-$(nproc)}" \
  --target weft-decode weft-decode-gen
models=build/release/decode-models
mkdir -p "$models"
dtype="${DTYPE:-f32}"
model="$models/$shape-$dtype.gguf"
if [ ! -f "$model" ]; then
  ./build/release/examples/decode/weft-decode-gen --shape="$shape" \
    --format=gguf --dtype="$dtype" --out="$model.tmp"
  mv "$model.tmp" "$model"
fi
./build/release/examples/decode/weft-decode --model="$model" \
  --steps="$steps" --prompt "$prompt" --device="$device" \
  --temperature="${TEMPERATURE:-0}" --top-k="${TOP_K:-0}" \
  --top-p="${TOP_P:-1}" --seed="${SEED:-0}"
