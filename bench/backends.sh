#!/usr/bin/env bash
# The CPU cipher backends against each other in one run (issue #13's goals):
# in memory, `paes bench` with OpenSSL and ipsec-mb side by side (1 and 2
# threads, CTR and sealed, AES-256); then whole programs, one thread, a file
# in the page cache encrypted and decrypted to /dev/null with --backend
# openssl and --backend ipsec-mb. Ratios are between medians of this run.
#
#   bench/backends.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 1024 5 $TMPDIR or /tmp)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup backends "$@"
if ! "$paes" info --json | "${PYTHON:-python3}" -c '
import json, sys
info = {b["name"]: b for b in json.load(sys.stdin)["backends"]}
sys.exit(0 if info["ipsec-mb"]["available"] else 1)'; then
  echo "not run: ipsec-mb is unavailable in this paes ($("$paes" info | grep 'ipsec-mb:'))" >&2
  exit 1
fi

echo "in memory, 64 MiB, medians of 9 round-robin runs ($(nproc) CPUs; $("$paes" info | grep -A2 '^Backends' | tr -s ' ' | paste -sd' '))"
"$paes" bench --modes ctr,sealed --key-bits 256 --backend openssl,ipsec-mb --thread-counts 1,2 --size 64M --repeat 9

head -c "$((size_mib << 20))" /dev/urandom > "$work/in.bin"
cat "$work/in.bin" > /dev/null
"$paes" keygen -o "$work/key"
iv="$(openssl rand -hex 16)"
"$paes" encrypt --key-file "$work/key" "$work/in.bin" -o "$work/in.paes"
"$paes" encrypt --mode ctr --iv "$iv" --key-file "$work/key" "$work/in.bin" -o "$work/in.ctr"

echo
echo "whole program, $size_mib MiB in the page cache to /dev/null, --threads 1, $runs runs after a warm-up:"
for backend in openssl ipsec-mb; do
  measure "seal $backend" sh -c "'$paes' encrypt --threads 1 --backend $backend --key-file '$work/key' '$work/in.bin' > /dev/null"
  measure "open $backend" sh -c "'$paes' decrypt --threads 1 --backend $backend --key-file '$work/key' '$work/in.paes' > /dev/null"
  measure "ctr $backend" sh -c "'$paes' encrypt --threads 1 --backend $backend --mode ctr --iv $iv --key-file '$work/key' '$work/in.bin' > /dev/null"
done

echo
echo "ratios of medians (ipsec-mb time / openssl time; lower is faster):"
echo "  sealed encrypt : $(ratio "seal ipsec-mb" "seal openssl")   (target <= 0.70)"
echo "  sealed decrypt : $(ratio "open ipsec-mb" "open openssl")"
echo "  ctr encrypt    : $(ratio "ctr ipsec-mb" "ctr openssl")"
