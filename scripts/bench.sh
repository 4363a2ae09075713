#!/usr/bin/env bash
# Builds weft_bench in the `release` preset and runs every benchmark with 5
# repetitions, writing Google Benchmark JSON, then prints a Markdown table
# of the medians with the ratios docs/PERFORMANCE.md uses (python3).
#
#   scripts/bench.sh [OUTPUT.json] [weft_bench flags...]
#
# OUTPUT.json defaults to build/release/bench.json. Extra flags go to
# weft_bench after the defaults, e.g.
#   scripts/bench.sh /tmp/queue.json --benchmark_filter=Queue
# Needs Google Benchmark (libbenchmark-dev); the OpenMP and pthreadpool
# baselines appear when libgomp and libpthreadpool-dev were found.
#
#   scripts/bench.sh --table RUN.json...
#
# only prints the table, from one or more earlier outputs (for example one
# run per benchmark family; a later file's row replaces an earlier one's).
set -euo pipefail
# Paths given on the command line are relative to where it was typed.
paths=()
if [ "${1:-}" = "--table" ]; then
  for path in "${@:2}"; do paths+=("$(realpath -m "$path")"); done
elif [ "$#" -gt 0 ]; then
  paths+=("$(realpath -m "$1")")
fi
cd "$(dirname "$0")/.."

print_table() {
  python3 - "$@" <<'PY'
import json
import sys

benchmarks = []
for path in sys.argv[1:]:
    with open(path) as f:
        benchmarks.extend(json.load(f)["benchmarks"])

# name without "/real_time" -> median entry (or the error entry).
rows = {}
order = []
cvs = {}
for b in benchmarks:
    name = b["run_name"].replace("/real_time", "")
    if b.get("aggregate_name") == "cv":
        cvs[name] = b["real_time"]
    if b.get("error_occurred"):
        if name not in rows:
            order.append(name)
        rows[name] = {"error": b.get("error_message", "error")}
    elif b.get("aggregate_name") == "median":
        if name not in rows:
            order.append(name)
        rows[name] = b

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def ns(name):
    b = rows.get(name)
    if not b or "error" in b:
        return None
    return b["real_time"] * UNIT_NS[b["time_unit"]]


def counter(name, key):
    b = rows.get(name)
    if not b or "error" in b:
        return None
    return b.get(key)


def fmt_time(value_ns):
    if value_ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if value_ns >= scale:
            return "%.3g %s" % (value_ns / scale, unit)
    return "%.3g ns" % value_ns


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(r, label):
    return "-" if r is None else "%.2fx %s" % (r, label)


def fmt_number(v):
    return "%.0f" % v if v >= 100 else "%.3g" % v


def per_item(name):
    for key, label in (("ns_per_op", "ns/op"),
                       ("ns_per_workgroup", "ns/workgroup"),
                       ("ns_per_dispatch", "ns/dispatch")):
        v = counter(name, key)
        if v is not None:
            return "%s %s" % (fmt_number(v), label)
    gbps = counter(name, "GBps")
    if gbps is not None:
        cold_ok = counter(name, "cold_ok")
        if cold_ok is not None and cold_ok < 1:
            return "%.2f GB/s (pages left cached)" % gbps
        return "%.2f GB/s" % gbps
    g = counter(name, "GFLOPS")
    if g is None:
        return ""
    if (counter(name, "workers") or 1) > 1:
        return "%.1f GFLOP/s, efficiency %.2f" % (g, counter(name, "efficiency"))
    return "%.1f GFLOP/s" % g


def compare(name):
    family, _, impl = name.partition("/")
    out = []
    if family in ("QueueRoundTrip", "DispatchRoundTrip"):
        out.append(fmt_ratio(ratio(ns(name), ns("SpinPingPong")), "spin"))
        out.append(fmt_ratio(ratio(ns(name), ns("FutexPingPong")), "futex"))
    elif family in ("DispatchTiles", "SmallDispatchChain") and impl in (
            "local-task", "local-sync"):
        for base in ("OpenMP", "pthreadpool"):
            out.append(fmt_ratio(ratio(ns(name), ns(family + "/" + base)),
                                 base))
    elif family == "Matmul" and impl != "OpenMP" and (
            counter(name, "workers") or 1) > 1:
        out.append(fmt_ratio(ratio(counter(name, "efficiency"),
                                   counter("Matmul/OpenMP", "efficiency")),
                             "OpenMP eff."))
    elif family in ("FileRead", "ParameterStream") and impl.startswith(
            "weft"):
        # Throughput ratios: above 1 is faster. FileRead compares with the
        # faster of its baselines in the same cache state.
        cache = impl.rsplit("/", 1)[-1]
        bases = (("pread", "mmap") if family == "FileRead" else
                 ("pread-sequential",))
        best = None
        for base in bases:
            v = counter(family + "/" + base + "/" + cache, "GBps")
            if v is not None and (best is None or v > best[1]):
                best = (base, v)
        if best is not None:
            out.append(fmt_ratio(ratio(counter(name, "GBps"), best[1]),
                                 best[0] + "'s GB/s"))
    return ", ".join(o for o in out if o != "-")


print()
print("| Benchmark | Median (cv) | Per item | Ratio |")
print("| --- | ---: | ---: | --- |")
for name in order:
    b = rows[name]
    if "error" in b:
        print("| %s | skipped | | %s |" % (name, b["error"].split(" [")[0]))
        continue
    median = fmt_time(ns(name))
    if name in cvs:
        median += " (%.0f%%)" % (100 * cvs[name])
    print("| %s | %s | %s | %s |" % (name, median, per_item(name),
                                     compare(name)))
PY
}

if [ "${1:-}" = "--table" ]; then
  print_table "${paths[@]}"
  exit 0
fi

output="build/release/bench.json"
if [ "$#" -gt 0 ]; then
  output="${paths[0]}"
  shift
fi

cmake --preset release >/dev/null
cmake --build --preset release --target weft_bench
bench=build/release/bench/weft_bench
if [ ! -x "$bench" ]; then
  echo "bench: $bench was not built; is Google Benchmark installed" \
       "(scripts/install-deps.sh)?" >&2
  exit 1
fi

mkdir -p "$(dirname "$output")"
"$bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$output" --benchmark_out_format=json "$@"
echo "bench: wrote $output"

if ! command -v python3 >/dev/null 2>&1; then
  echo "bench: python3 not found; no table printed" >&2
  exit 0
fi
print_table "$output"
