#!/usr/bin/env bash
# Where a small job's time goes: `perf record -e cpu-clock` over RUNS runs of a
# 2 KiB encrypt to an age recipient into a file on tmpfs (and the decrypt of
# it with the identity), then each sample put in a bucket by the object it
# ran in: the kernel (exec, page faults, mmap, exit), the dynamic loader,
# libc, libcrypto, ipsec-mb, libstdc++, the other libraries, and paes' own
# code with CLI11's apart. Prints CPU milliseconds per run for each bucket
# (samples / frequency / runs), so two builds compare side by side
# (docs/PERFORMANCE.md section 8 has a before and an after).
#
# cpu-clock is a software event: it needs no hardware PMU (this VM has none),
# and perf_event_paranoid must allow it (root, or <= 1). Needs perf (Debian:
# linux-perf) and age-keygen.
#
#   bench/start_up_profile.sh [PAES] [RUNS] [DIR]   (defaults: build/release/paes, 300, /dev/shm)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
paes="${1:-$root/build/release/paes}"
runs="${2:-300}"
base="${3:-/dev/shm}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "RUNS is a positive whole number, got '$runs'" >&2; exit 2; }
[ -x "$paes" ] || { echo "no paes at $paes: build it first, or name it" >&2; exit 1; }
for tool in perf age-keygen; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed (Debian: linux-perf, age)" >&2; exit 1; }
done
work="$(mktemp -d "$base/paes-profile.XXXXXX")"
trap 'rm -rf "$work"' EXIT

head -c 2048 /dev/urandom > "$work/in2k"
age-keygen -o "$work/age.id" 2> /dev/null
recipient="$(age-keygen -y "$work/age.id")"
"$paes" encrypt -r "$recipient" "$work/in2k" -o "$work/in2k.paes"
frequency=20000

profile() {  # NAME COMMAND...: records RUNS runs of COMMAND, prints the buckets
  local name="$1"; shift
  local quoted
  printf -v quoted '%q ' "$@"
  perf record -q -e cpu-clock -F "$frequency" -o "$work/perf.data" -- \
    sh -c "i=0; while [ \$i -lt $runs ]; do $quoted> /dev/null || exit 1; i=\$((i + 1)); done" 2> /dev/null
  perf script -i "$work/perf.data" -F comm,ip,sym,dso 2> /dev/null |
    "${PYTHON:-python3}" -c '
import collections, re, sys
name, runs, frequency, paes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
buckets = collections.Counter()
for line in sys.stdin:
    fields = line.split(None, 1)
    if len(fields) < 2 or fields[0] != "paes":
        continue
    dso = re.search(r"\(([^()]*)\)\s*$", fields[1])
    dso = dso.group(1) if dso else "?"
    if dso.startswith("[kernel"):
        bucket = "kernel: exec, page faults, mmap, exit"
    elif "/ld-linux" in dso:
        bucket = "dynamic loader"
    elif "/libc.so" in dso or "/libm.so" in dso:
        bucket = "libc"
    elif "/libcrypto" in dso:
        bucket = "libcrypto (OpenSSL)"
    elif "/libIPSec_MB" in dso:
        bucket = "ipsec-mb"
    elif "/libstdc++" in dso or "/libgcc_s" in dso:
        bucket = "libstdc++, libgcc (shared)"
    elif dso == paes or dso.endswith("/paes"):
        bucket = "paes: CLI11" if "CLI::" in fields[1] else "paes: its own code (libstdc++ if linked in)"
    else:
        bucket = "other libraries: " + dso.rsplit("/", 1)[-1].split(".so")[0]
    buckets[bucket] += 1
total = sum(buckets.values())
print(f"{name}: {total / frequency / runs * 1e3:.2f} ms of CPU a run ({runs} runs, {total} samples at {frequency} Hz)")
others = sum(n for b, n in buckets.items() if b.startswith("other libraries"))
for bucket, n in sorted(buckets.items(), key=lambda kv: -kv[1]):
    if bucket.startswith("other libraries") and n < total / 200:
        continue
    print(f"  {n / frequency / runs * 1e3:6.3f} ms  {100 * n / total:5.1f}%  {bucket}")
small = sum(n for b, n in buckets.items() if b.startswith("other libraries") and n < total / 200)
if small:
    print(f"  {small / frequency / runs * 1e3:6.3f} ms  {100 * small / total:5.1f}%  other libraries, each under 0.5%")
' "$name" "$runs" "$frequency" "$(readlink -f "$paes")"
}

echo "paes: $paes ($("$paes" --version | head -1)); $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
profile "2 KiB encrypt -r, -o file" "$paes" encrypt -r "$recipient" "$work/in2k" -o "$work/out" -f
profile "2 KiB decrypt -i, -o file" "$paes" decrypt -i "$work/age.id" "$work/in2k.paes" -o "$work/out" -f
profile "paes --version" "$paes" --version
