#!/usr/bin/env bash
# End-to-end file benchmark: paes against openssl enc and cp on the same file,
# in one run. Each command runs once to warm up, then RUNS times; the median
# wall time is reported with min and max, and ratios are taken between medians
# of this run only. The input stays in the page cache (warm cache: it is read
# once before timing); each output is deleted between runs, outside the timing.
#
#   bench/e2e_file.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 1024 5 $TMPDIR or /tmp)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
size_mib="${1:-1024}"
runs="${2:-5}"
base="${3:-${TMPDIR:-/tmp}}"
paes="${PAES:-$root/build/release/paes}"
[ -x "$paes" ] || { echo "build paes first (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }

work="$(mktemp -d "$base/paes-e2e.XXXXXX")"
trap 'rm -rf "$work"' EXIT
head -c "$((size_mib << 20))" /dev/urandom > "$work/in.bin"
cat "$work/in.bin" > /dev/null
openssl rand 32 > "$work/key"
key_hex="$(od -An -tx1 -v "$work/key" | tr -d ' \n')"
iv="$(openssl rand -hex 16)"

declare -A median minimum maximum
measure() {  # name, then the command; its output is $work/out
  local name="$1"; shift
  local times=()
  for ((i = 0; i <= runs; i++)); do
    rm -f "$work/out"
    sync
    local start end
    start=$(date +%s%N)
    "$@"
    end=$(date +%s%N)
    ((i == 0)) || times+=("$(((end - start) / 1000))")
  done
  local sorted
  sorted=$(printf '%s\n' "${times[@]}" | sort -n)
  median[$name]=$(echo "$sorted" | awk -v n="$runs" 'NR == int((n + 1) / 2) { printf "%.3f", $1 / 1e6 }')
  minimum[$name]=$(echo "$sorted" | head -1 | awk '{ printf "%.3f", $1 / 1e6 }')
  maximum[$name]=$(echo "$sorted" | tail -1 | awk '{ printf "%.3f", $1 / 1e6 }')
  printf '%-34s median %7ss  min %7ss  max %7ss\n' "$name" "${median[$name]}" "${minimum[$name]}" "${maximum[$name]}"
}

echo "input: $size_mib MiB random, warm page cache, $runs runs after a warm-up, $(nproc) CPUs, $(openssl version)"
measure "cp" cp "$work/in.bin" "$work/out"
measure "cat > /dev/null" sh -c "cat '$work/in.bin' > /dev/null"
measure "openssl enc -aes-256-ctr" openssl enc -aes-256-ctr -K "$key_hex" -iv "$iv" -in "$work/in.bin" -out "$work/out"
measure "paes encrypt ctr (serial)" "$paes" encrypt --mode ctr --engine serial --key-file "$work/key" --iv "$iv" "$work/in.bin" -o "$work/out"
measure "paes encrypt ctr (threads)" "$paes" encrypt --mode ctr --key-file "$work/key" --iv "$iv" "$work/in.bin" -o "$work/out"
openssl enc -aes-256-cbc -K "$key_hex" -iv "$iv" -in "$work/in.bin" -out "$work/in.cbc"
measure "openssl enc -d -aes-256-cbc" openssl enc -d -aes-256-cbc -K "$key_hex" -iv "$iv" -in "$work/in.cbc" -out "$work/out"
measure "paes decrypt cbc (threads)" "$paes" decrypt --mode cbc --key-file "$work/key" --iv "$iv" "$work/in.cbc" -o "$work/out"
cmp "$work/out" "$work/in.bin"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "ratios of medians (time / time; lower is faster for paes):"
echo "  paes ctr threads / openssl enc ctr : $(ratio "${median[paes encrypt ctr (threads)]}" "${median[openssl enc -aes-256-ctr]}")   (target <= 0.60)"
echo "  paes ctr threads / cp              : $(ratio "${median[paes encrypt ctr (threads)]}" "${median[cp]}")   (target <= 1.20)"
echo "  paes ctr threads / paes serial     : $(ratio "${median[paes encrypt ctr (threads)]}" "${median[paes encrypt ctr (serial)]}")"
echo "  paes cbc-d threads / openssl cbc-d : $(ratio "${median[paes decrypt cbc (threads)]}" "${median[openssl enc -d -aes-256-cbc]}")"
