#!/usr/bin/env bash
# End-to-end file benchmark: paes against openssl enc and cp on the same file,
# in one run. Each command runs once to warm up, then RUNS times; the median
# wall time is reported with min and max, and ratios are taken between medians
# of this run only. The input stays in the page cache (warm cache: it is read
# once before timing); each output is deleted between runs, outside the timing.
#
#   bench/e2e_file.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 1024 5 $TMPDIR or /tmp)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup e2e "$@"

head -c "$((size_mib << 20))" /dev/urandom > "$work/in.bin"
cat "$work/in.bin" > /dev/null
openssl rand 32 > "$work/key" && chmod 600 "$work/key"
key_hex="$(od -An -tx1 -v "$work/key" | tr -d ' \n')"
iv="$(openssl rand -hex 16)"
export PAES_CACHE_DIR="$work/cache"

echo "input: $size_mib MiB random, warm page cache, $runs runs after a warm-up, $(nproc) CPUs, $(openssl version)"
measure "cp" cp "$work/in.bin" "$work/out"
# paes fsyncs its output before renaming it into place; cp does not, so this
# is the like-for-like peer.
measure "cp + sync" sh -c "cp '$work/in.bin' '$work/out' && sync '$work/out'"
measure "cat > /dev/null" sh -c "cat '$work/in.bin' > /dev/null"
measure "openssl enc -aes-256-ctr" openssl enc -aes-256-ctr -K "$key_hex" -iv "$iv" -in "$work/in.bin" -out "$work/out"
measure "paes encrypt ctr (serial)" "$paes" encrypt --mode ctr --engine serial --key-file "$work/key" --iv "$iv" "$work/in.bin" -o "$work/out"
measure "paes encrypt ctr (threads)" "$paes" encrypt --mode ctr --key-file "$work/key" --iv "$iv" "$work/in.bin" -o "$work/out"
# --engine auto with a rate cache of this run's (PAES_CACHE_DIR): the warm-up
# looks for a GPU (and measures one) and keeps what it found; the timed runs
# decide from that.
measure "paes encrypt ctr (auto)" "$paes" encrypt --mode ctr --engine auto --key-file "$work/key" --iv "$iv" "$work/in.bin" -o "$work/out"
openssl enc -aes-256-cbc -K "$key_hex" -iv "$iv" -in "$work/in.bin" -out "$work/in.cbc"
measure "openssl enc -d -aes-256-cbc" openssl enc -d -aes-256-cbc -K "$key_hex" -iv "$iv" -in "$work/in.cbc" -out "$work/out"
measure "paes decrypt cbc (threads)" "$paes" decrypt --mode cbc --key-file "$work/key" --iv "$iv" "$work/in.cbc" -o "$work/out"
cmp "$work/out" "$work/in.bin"

echo
echo "ratios of medians (time / time; lower is faster for paes):"
echo "  paes ctr threads / openssl enc ctr : $(ratio "paes encrypt ctr (threads)" "openssl enc -aes-256-ctr")   (target <= 0.60)"
echo "  paes ctr threads / cp              : $(ratio "paes encrypt ctr (threads)" cp)   (target <= 1.20, set before paes synced its output)"
echo "  paes ctr threads / cp + sync       : $(ratio "paes encrypt ctr (threads)" "cp + sync")   (both durable on disk)"
echo "  paes ctr threads / paes serial     : $(ratio "paes encrypt ctr (threads)" "paes encrypt ctr (serial)")"
echo "  paes ctr auto / paes ctr threads   : $(ratio "paes encrypt ctr (auto)" "paes encrypt ctr (threads)")   (target <= 1.05 where threads is the better)"
echo "  paes cbc-d threads / openssl cbc-d : $(ratio "paes decrypt cbc (threads)" "openssl enc -d -aes-256-cbc")"
