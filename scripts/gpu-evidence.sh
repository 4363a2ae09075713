#!/usr/bin/env bash
# Everything weft can say about a real NVIDIA GPU, in one run: the cuda
# driver built with the CUDA toolkit, its tests on the GPU (the CTS in both
# semaphore forms, the GPU drivers' cross-driver suite, the decode's
# reference test), the cuda tests under compute-sanitizer where it is, and
# the cuda benchmark rows beside the raw driver API's:
#   ./scripts/gpu-evidence.sh [OUT_DIR]
# OUT_DIR (default build/gpu-evidence) receives the logs and the benchmark
# JSON. Needs CMake, ninja, a C/C++ compiler, the CUDA toolkit and the
# driver; cmocka and Google Benchmark from the system, or unpacked Debian
# packages under DEPS (a folder of `dpkg -x` output, for machines without
# apt: PKG_CONFIG and the loader are pointed there). A step that fails is
# reported and the next one runs; the exit status says whether any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

out="${1:-build/gpu-evidence}"
mkdir -p "$out"
build="${BUILD_DIR:-build/gpu}"
jobs="${JOBS:-$(nproc)}"
failed=0

step() { echo "=== $* ($(date -u +%H:%M:%S))"; }

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [[ -n "${DEPS:-}" ]]; then
  export PATH="$DEPS/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  export PKG_CONFIG_LIBDIR="$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$DEPS"
  cmake_args+=(-DPKG_CONFIG_EXECUTABLE="$DEPS/usr/bin/pkgconf"
               -DCMAKE_PREFIX_PATH="$DEPS/usr")
fi

step "the GPU"
nvidia-smi -L 2>&1 | tee "$out/gpu.txt" || failed=1

step "configure and build ($build)"
if ! cmake -S . -B "$build" "${cmake_args[@]}" > "$out/configure.log" 2>&1 ||
   ! cmake --build "$build" -j "$jobs" > "$out/build.log" 2>&1; then
  tail -40 "$out/configure.log" "$out/build.log"
  exit 1
fi
grep -E "weft: CUDA" "$out/configure.log"

step "tests on the GPU: cts.cuda.*, cts.cuda-memory.*, cuda.cross_driver.*, decode.cuda"
(cd "$build" && ctest -R "^cts\.cuda(-memory)?\.|^cuda\.cross_driver\.|^decode\.cuda$" \
   -j 4 --timeout 300 --output-on-failure) > "$out/ctest-gpu.log" 2>&1 ||
  failed=1
grep -E "tests passed|tests failed|\(Failed|Timeout|Skipped" \
  "$out/ctest-gpu.log" | head -40

if command -v compute-sanitizer > /dev/null; then
  step "compute-sanitizer (memcheck) over the cuda CTS"
  for suite in dispatch command_buffer queue_ordering failure_order; do
    for driver in cuda "cuda?semaphores=memory"; do
      compute-sanitizer --error-exitcode 9 \
        "$build/tests/cts/cts_$suite" --driver "$driver" \
        > "$out/sanitizer-$suite-${driver//[?=]/_}.log" 2>&1 ||
        { failed=1; echo "compute-sanitizer: $suite on $driver failed"; }
    done
  done
  grep -h "ERROR SUMMARY" "$out"/sanitizer-*.log | sort | uniq -c
else
  echo "compute-sanitizer not found: skipped"
fi

step "benchmarks (cuda rows beside the raw driver API)"
filter='^(QueueRoundTrip|QueueChain|DispatchRoundTrip|SmallDispatchChain)/(cuda|raw)'
filter+='|^SemaphoreEdge/.*/cuda|^CrossDeviceHandoff|^FileRead/'
filter+='|^CudaCompletion/|^Decode/(110M|1\.1B)-f16/cuda|^MemoryBandwidth'
"$build/bench/weft_bench" --benchmark_filter="$filter" \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json \
  > "$out/bench.txt" 2>&1 || failed=1
grep -E "_median|error" "$out/bench.txt" | head -80

exit "$failed"
