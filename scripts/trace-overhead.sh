#!/usr/bin/env bash
# Measures what the trace zones cost while tracing is off: builds weft_bench
# twice in Release (the zones compiled in, as shipped, and compiled out with
# -DWEFT_TRACE_ZONES=OFF), then runs the two binaries alternately, ROUNDS
# rounds of REPS repetitions each, and prints the median of each and their
# ratio. Alternating rounds spread the machine's drift over both builds.
#
#   scripts/trace-overhead.sh [FILTER] [ROUNDS] [REPS]
#
# FILTER defaults to SmallDispatchChain/local-task (issue 5's yardstick).
# Needs Google Benchmark (libbenchmark-dev) and python3.
set -euo pipefail
filter="${1:-SmallDispatchChain/local-task}"
rounds="${2:-6}"
reps="${3:-5}"
cd "$(dirname "$0")/.."

build() {  # build DIR ZONES
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release -DWEFT_WERROR=ON \
    -DWEFT_BUILD_TESTS=OFF -DWEFT_BUILD_EXAMPLES=OFF \
    -DWEFT_TRACE_ZONES="$2" >/dev/null
  cmake --build "$1" --target weft_bench >/dev/null
}
build build/trace-zones-on ON
build build/trace-zones-off OFF

out="build/trace-overhead"
mkdir -p "$out"
rm -f "$out"/*.json
for round in $(seq 1 "$rounds"); do
  for zones in on off; do
    "build/trace-zones-$zones/bench/weft_bench" \
      --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
      --benchmark_out="$out/$zones-$round.json" --benchmark_out_format=json \
      >/dev/null 2>&1
  done
done

python3 - "$out" "$filter" <<'PY'
import glob
import json
import statistics
import sys

out, filter_ = sys.argv[1], sys.argv[2]
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
times = {"on": [], "off": []}
for zones in times:
    for path in glob.glob(f"{out}/{zones}-*.json"):
        for b in json.load(open(path))["benchmarks"]:
            if b.get("run_type") == "iteration" and not b.get("error_occurred"):
                times[zones].append(b["real_time"] * UNIT_NS[b["time_unit"]])
if not times["on"] or not times["off"]:
    sys.exit("trace-overhead: no results (is the filter right?)")
on = statistics.median(times["on"])
off = statistics.median(times["off"])
print(f"{filter_}: zones compiled in, tracing off: {on / 1e3:.1f} us "
      f"(median of {len(times['on'])}); zones compiled out: {off / 1e3:.1f} us "
      f"(median of {len(times['off'])})")
print(f"ratio on/off: {on / off:.4f} ({(on / off - 1) * 100:+.2f}%)")
PY
