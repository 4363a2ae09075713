#!/usr/bin/env bash
# Installs the dependencies, builds weft with the `release` preset and runs
# the main job: a two-layer MLP written in the weft VM's text format
# (examples/mlp/mlp.wvm), run by weft-run on a device, local-task unless
# one is given, its output checked against a plain-C reference; then the C
# example pipeline (file -> buffer -> kernel -> buffer -> file):
#   ./scripts/run-example.sh [DEVICE] [COUNT]
# It builds those and everything `cmake --install build/release` installs
# (target weft_installable: libweft.so, libweft.a, weft-info, weft-asm,
# weft-run, weft-trace), so the README's install step works right after it;
# not the tests or the benchmarks, which only scripts/test.sh needs.
set -euo pipefail
cd "$(dirname "$0")/.."

device="${1:-local-task}"
./scripts/install-deps.sh
cmake --preset release
cmake --build --preset release -j "${JOBS:-$(nproc)}" \
  --target weft-example-pipeline weft-run weft_example_mlp_kernels \
  weft-example-mlp-reference weft_installable
./build/release/tools/weft-info

# The MLP: its weights and input as .npy files, weft-run, the check.
data=build/release/examples/mlp-data
mkdir -p "$data"
./build/release/examples/weft-example-mlp-reference generate "$data"
echo "weft-run: examples/mlp/mlp.wvm forward on $device"
./build/release/tools/weft-run --module=examples/mlp/mlp.wvm \
  --function=forward --device="$device" \
  --kernels=build/release/examples/libmlp_kernels.so \
  --input=@"$data/x.npy" --input=@"$data/w1.npy" --input=@"$data/b1.npy" \
  --input=@"$data/w2.npy" --input=@"$data/b2.npy"
./build/release/tools/weft-run --module=examples/mlp/mlp.wvm \
  --function=forward --device="$device" \
  --kernels=build/release/examples/libmlp_kernels.so \
  --input=@"$data/x.npy" --input=@"$data/w1.npy" --input=@"$data/b1.npy" \
  --input=@"$data/w2.npy" --input=@"$data/b2.npy" --output=@"$data/y.npy"
./build/release/examples/weft-example-mlp-reference check "$data/y.npy" \
  "$data/expected.npy"

./build/release/examples/weft-example-pipeline "$device" ${2:+"$2"}
