#!/usr/bin/env bash
# What armor (-a, base64 text) costs on top of the binary sealed format, end
# to end on one file, file to file, with one X25519 recipient (age-keygen's):
#   - encrypt: `paes encrypt -r R` against `paes encrypt -r R -a`;
#   - decrypt: `paes decrypt -i ID` of the binary file against the armored one.
# paes runs its default threads (the online CPUs). Each pair runs alternated
# (bench/suite/paes_bench/runner.py's measure: the inputs read once, a
# warm-up round, then RUNS rounds, every other one in the reverse order, the
# output deleted and `sync` run before every run, outside the timing), so a
# shared machine's drift weighs on both alike; figures are medians with min
# and max, ratios are of medians in this run. Every output is checked with
# cmp once, before the timing, and the armored file opened by age where it
# is installed. The targets (issue: 1 GiB on tmpfs, 2 cores): armored
# encryption <= 1.15x and decryption <= 1.25x the binary format's time. It
# asserts nothing.
#
#   bench/armor_file.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 1024 9 /dev/shm)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup armor-file "${1:-1024}" "${2:-9}" "${3:-/dev/shm}"
command -v age-keygen > /dev/null || { echo "age-keygen is not installed (scripts/setup.sh installs age)" >&2; exit 1; }

head -c "$((size_mib << 20))" /dev/urandom > "$work/in.bin"
age-keygen -o "$work/age.id" 2> /dev/null
recipient="$(age-keygen -y "$work/age.id")"

"$paes" encrypt -r "$recipient" -o "$work/in.paes" "$work/in.bin"
"$paes" encrypt -r "$recipient" -a -o "$work/in.paes.asc" "$work/in.bin"
for sealed in in.paes in.paes.asc; do
  "$paes" decrypt -i "$work/age.id" -o "$work/check" "$work/$sealed"
  cmp "$work/check" "$work/in.bin"; rm -f "$work/check"
done
# The armor holds the very binary file's format: age's armor reader takes its lines.
if command -v age > /dev/null; then
  "$paes" encrypt --format age -r "$recipient" -a -o "$work/check.age" "$work/in.bin"
  age -d -i "$work/age.id" -o "$work/check" "$work/check.age"
  cmp "$work/check" "$work/in.bin"; rm -f "$work/check" "$work/check.age"
fi

echo "input: $size_mib MiB random, file to file in $work, warm page cache, $(nproc) CPUs," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
code="$("$paes" info --json | sed -n 's/.*"armor_base64": "\(.*\)".*/\1/p')"
echo "paes: $paes ($("$paes" --version | head -1)), default threads, base64 on ${code:-OpenSSL} code"
echo "$runs alternated runs per command after a warm-up round"

"${PYTHON:-python3}" - "$root/bench/suite" "$paes" "$runs" "$work" "$recipient" <<'PY'
import sys

sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure  # noqa: E402

paes, runs, work, recipient = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
out = f"{work}/out"
ident = f"{work}/age.id"
plain = f"{work}/in.bin"

# (label, argv, input), each pair timed alternated
pairs = [
    [("paes encrypt (binary)", [paes, "encrypt", "-r", recipient, "-o", out, plain], plain),
     ("paes encrypt -a", [paes, "encrypt", "-r", recipient, "-a", "-o", out, plain], plain)],
    [("paes decrypt (binary)", [paes, "decrypt", "-i", ident, "-o", out, f"{work}/in.paes"], f"{work}/in.paes"),
     ("paes decrypt (armored)", [paes, "decrypt", "-i", ident, "-o", out, f"{work}/in.paes.asc"],
      f"{work}/in.paes.asc")],
]

median = {}
for pair in pairs:
    cands = [{"argv": argv, "src": src, "out": out, "parse_json": False, "stdout": None, "rec": {"bytes": 1}}
             for _, argv, src in pair]
    for (label, *_), rec in zip(pair, measure(cands, runs, alternate=True)):
        median[label] = rec["seconds"]
        print(f"{label:36} median {rec['seconds']:7.3f}s  min {rec['min_seconds']:7.3f}s  "
              f"max {rec['max_seconds']:7.3f}s", flush=True)

ratios = [
    ("armored encrypt / binary encrypt", "paes encrypt -a", "paes encrypt (binary)", "<= 1.15"),
    ("armored decrypt / binary decrypt", "paes decrypt (armored)", "paes decrypt (binary)", "<= 1.25"),
]
print()
print("ratios of medians (time / time):")
for what, a, b, target in ratios:
    print(f"  {what:40}: {median[a] / median[b]:.2f}   (target {target})")
PY
