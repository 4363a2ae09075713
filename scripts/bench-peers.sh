#!/usr/bin/env bash
# weft's decode beside llama.cpp and ik_llama.cpp on the same GGUF files:
#
#   ./scripts/bench-peers.sh --llama=DIR --ik=DIR [--shapes=110M,1.1B]
#       [--types=f32,f16,q8_0,q4_0,q4_k_m] [--threads=2] [--rounds=3]
#       [--prompts=128,512] [--gen=64] [--work=DIR] [--build-only]
#
# DIR is a checkout of each peer that the user made (never vendored here,
# never committed): mainline llama.cpp (or a fork such as
# unslothai/llama.cpp) and ikawrakow/ik_llama.cpp. Either may be left out
# (the table then has no column for it). The script
#  1. builds weft's release preset (weft-decode, weft-decode-gen,
#     weft_bench) and each peer's CPU build (GGML_NATIVE, OpenMP) into
#     WORK/build-<peer>, once;
#  2. writes one random-weight f32 GGUF per shape with weft-decode-gen and
#     quantizes it with llama.cpp's own llama-quantize into F16, Q8_0,
#     Q4_0 and Q4_K_M, so the three read the very same files;
#  3. runs ROUNDS interleaved rounds: in each, for every file, weft-decode
#     (generation from a 1-token prompt, GEN steps; then each prompt
#     length; each after one untimed run, --warmup=1, as llama-bench warms
#     up before it counts) and `llama-bench -t THREADS -p PROMPTS -n GEN`
#     of each peer;
#  4. prints the medians as a markdown table (tokens per second, and weft
#     over each peer), with the machine's read bandwidth, FmaPeak and
#     Int8DotPeak from weft_bench in the same run.
# Run it with nothing else on the machine: the peers and weft share it.
# WORK defaults to build/peers (ignored by git); the files there are
# reused by later runs.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

llama="" ik="" shapes="110M,1.1B" types="f32,f16,q8_0,q4_0,q4_k_m"
threads=2 rounds=3 prompts="128,512" gen=64 work="$root/build/peers"
build_only=0
for arg in "$@"; do
  case "$arg" in
    --llama=*) llama="${arg#*=}" ;;
    --ik=*) ik="${arg#*=}" ;;
    --shapes=*) shapes="${arg#*=}" ;;
    --types=*) types="${arg#*=}" ;;
    --threads=*) threads="${arg#*=}" ;;
    --rounds=*) rounds="${arg#*=}" ;;
    --prompts=*) prompts="${arg#*=}" ;;
    --gen=*) gen="${arg#*=}" ;;
    --work=*) work="${arg#*=}" ;;
    --build-only) build_only=1 ;;
    -h | --help)
      sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "bench-peers: unknown argument $arg (--help lists them)" >&2
      exit 2
      ;;
  esac
done
for n in "$threads" "$rounds" "$gen"; do
  if ! [[ "$n" =~ ^[1-9][0-9]{0,3}$ ]]; then
    echo "bench-peers: --threads, --rounds and --gen take 1 to 9999" \
      "(got $n)" >&2
    exit 2
  fi
done
if [ -z "$llama" ] && [ -z "$ik" ]; then
  echo "bench-peers: give --llama=DIR and/or --ik=DIR (checkouts of the" \
    "peers; llama.cpp's is needed to quantize)" >&2
  exit 2
fi
for dir in "$llama" "$ik"; do
  if [ -n "$dir" ] && [ ! -f "$dir/CMakeLists.txt" ]; then
    echo "bench-peers: $dir is not a llama.cpp checkout (no CMakeLists.txt)" >&2
    exit 2
  fi
done
mkdir -p "$work"
log="$work/log"
: > "$log"

# --- 1. builds ---------------------------------------------------------
cmake --preset release >> "$log"
cmake --build --preset release -j "${JOBS:-$(nproc)}" \
  --target weft-decode weft-decode-gen weft_bench >> "$log"
bin="$root/build/release"
decode="$bin/examples/decode/weft-decode"
gen_model="$bin/examples/decode/weft-decode-gen"

build_peer() {  # NAME DIR -> the build's bin directory
  local name="$1" dir="$2" out="$work/build-$1"
  if [ ! -x "$out/bin/llama-bench" ] || [ ! -x "$out/bin/llama-quantize" ]; then
    echo "bench-peers: building $name from $dir into $out" >&2
    cmake -S "$dir" -B "$out" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
      -DGGML_OPENMP=ON -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF \
      -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_UI=OFF >> "$log" 2>&1
    cmake --build "$out" -j "${JOBS:-$(nproc)}" \
      --target llama-bench llama-quantize llama-batched-bench >> "$log" 2>&1
  fi
  echo "$out/bin"
}
peers=()
declare -A peer_bin
if [ -n "$llama" ]; then peer_bin[llama.cpp]=$(build_peer llama.cpp "$llama"); peers+=(llama.cpp); fi
if [ -n "$ik" ]; then peer_bin[ik]=$(build_peer ik "$ik"); peers+=(ik); fi
quantize="${peer_bin[llama.cpp]:-${peer_bin[ik]}}/llama-quantize"

# --- 2. the files ------------------------------------------------------
declare -A ggml_type=([f16]=F16 [q8_0]=Q8_0 [q4_0]=Q4_0 [q4_k_m]=Q4_K_M
  [q4_k_s]=Q4_K_S [q5_k_m]=Q5_K_M [q6_k]=Q6_K [q4_1]=Q4_1 [q5_0]=Q5_0)
IFS=, read -r -a shape_list <<< "$shapes"
IFS=, read -r -a type_list <<< "$types"
for shape in "${shape_list[@]}"; do
  base="$work/$shape-f32.gguf"
  if [ ! -f "$base" ]; then
    "$gen_model" --shape="$shape" --format=gguf --dtype=f32 --out="$base.tmp"
    mv "$base.tmp" "$base"
  fi
  for type in "${type_list[@]}"; do
    [ "$type" = f32 ] && continue
    target="${ggml_type[$type]:-}"
    if [ -z "$target" ]; then
      echo "bench-peers: no llama-quantize type for $type" >&2
      exit 2
    fi
    file="$work/$shape-$type.gguf"
    if [ ! -f "$file" ]; then
      "$quantize" "$base" "$file.tmp" "$target" >> "$log" 2>&1
      mv "$file.tmp" "$file"
    fi
  done
done
[ "$build_only" = 1 ] && { echo "bench-peers: built; files in $work"; exit 0; }

# --- 3. the rounds -----------------------------------------------------
results="$work/results.tsv"  # round shape type impl test tokens/s
: > "$results"
ids() {  # N ids of ordinary tokens (1 is BOS-free: 100.. are words)
  seq -s, 100 $((99 + $1))
}
IFS=, read -r -a prompt_list <<< "$prompts"
peaks() {  # the machine's limits, in this run
  "$bin/bench/weft_bench" \
    --benchmark_filter='^(MemoryBandwidth|FmaPeak|Int8DotPeak)/' \
    --benchmark_min_time=0.5 --benchmark_format=json 2>> "$log" \
    > "$work/peaks-$1.json" || true
}
peaks before
for round in $(seq 1 "$rounds"); do
  for shape in "${shape_list[@]}"; do
    for type in "${type_list[@]}"; do
      file="$work/$shape-$type.gguf"
      echo "bench-peers: round $round, $shape $type" >&2
      rate=$("$decode" --model="$file" --workers="$threads" --prompt-ids=1 \
        --steps=$((gen + 1)) --warmup=1 2>> "$log" \
        | sed -n 's/^generation: .*: \([0-9.]*\) tokens\/s.*/\1/p')
      printf '%s\t%s\t%s\tweft\ttg%s\t%s\n' "$round" "$shape" "$type" \
        "$gen" "${rate:-nan}" >> "$results"
      for p in "${prompt_list[@]}"; do
        rate=$("$decode" --model="$file" --workers="$threads" \
          --prompt-ids="$(ids "$p")" --steps=1 --warmup=1 2>> "$log" \
          | sed -n 's/^prompt: .*: \([0-9.]*\) tokens\/s.*/\1/p')
        printf '%s\t%s\t%s\tweft\tpp%s\t%s\n' "$round" "$shape" "$type" \
          "$p" "${rate:-nan}" >> "$results"
      done
      for peer in "${peers[@]}"; do
        "${peer_bin[$peer]}/llama-bench" -m "$file" -t "$threads" \
          -p "$prompts" -n "$gen" -r 1 -o csv 2>> "$log" \
          | python3 -c '
import csv, sys
round_, shape, type_, peer = sys.argv[1:5]
for row in csv.DictReader(sys.stdin):
    test = ("pp%s" % row["n_prompt"]) if int(row["n_gen"]) == 0 else ("tg%s" % row["n_gen"])
    print("\t".join([round_, shape, type_, peer, test, row["avg_ts"]]))
' "$round" "$shape" "$type" "$peer" >> "$results"
      done
    done
  done
done

peaks after

# --- 4. the table ------------------------------------------------------
python3 - "$results" "$work" "$threads" "$rounds" "${peers[@]}" <<'EOF'
import json, statistics, sys
results, work, threads, rounds, *peers = sys.argv[1:]
rates = {}
for line in open(results):
    _, shape, type_, impl, test, rate = line.rstrip("\n").split("\t")
    try:
        value = float(rate)
    except ValueError:
        continue
    if value == value:
        rates.setdefault((shape, type_, impl, test), []).append(value)
def median(key):
    values = rates.get(key)
    return statistics.median(values) if values else None
tests = sorted({k[3] for k in rates}, key=lambda t: (t[:2] != "tg", int(t[2:])))
rows = list(dict.fromkeys((k[0], k[1]) for k in rates))  # as measured
print(f"\n{threads} threads, medians of {rounds} rounds, tokens/s "
      "(weft/peer > 1: weft faster)\n")
header = ["file"]
for test in tests:
    header += [f"weft {test}"] + [f"{p} {test}" for p in peers] + \
              [f"weft/{p} {test}" for p in peers]
print("| " + " | ".join(header) + " |")
print("|" + " --- |" * len(header))
for shape, type_ in rows:
    cells = [f"{shape} {type_}"]
    for test in tests:
        w = median((shape, type_, "weft", test))
        cells.append(f"{w:.1f}" if w else "-")
        others = [median((shape, type_, p, test)) for p in peers]
        cells += [f"{o:.1f}" if o else "-" for o in others]
        cells += [f"{w / o:.2f}" if w and o else "-" for o in others]
    print("| " + " | ".join(cells) + " |")
print()
for when in ("before", "after"):
    try:
        runs = json.load(open(f"{work}/peaks-{when}.json"))["benchmarks"]
    except (OSError, ValueError, KeyError):
        continue
    found = []
    for run in runs:
        for counter in ("GBps", "GFLOPs", "GOPs"):
            if counter in run:
                found.append(f"{run['name'].split('/real_time')[0]} "
                             f"{run[counter] / 1e9 if run[counter] > 1e6 else run[counter]:.1f} {counter}")
    print(f"{when} the rounds: " + "; ".join(found))
EOF
