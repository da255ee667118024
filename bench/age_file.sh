#!/usr/bin/env bash
# age v1 files end to end on one file, file to file, against age itself and
# paes' own sealed format, with the same X25519 key (age-keygen's) throughout:
#   - encrypt: `age -e -r R`, `paes encrypt --format age -r R` and
#     `paes encrypt -r R` (paes' sealed format, AES-256-GCM);
#   - decrypt: `age -d -i ID` and `paes decrypt -i ID` of the same age file
#     (age's own), and `paes decrypt -i ID` of the paes sealed file.
# paes runs its default threads (the online CPUs). Each group of three runs
# round-robin (bench/suite/paes_bench/runner.py's measure: the inputs read
# once, a warm-up round, then RUNS rounds, the output deleted and `sync` run
# before every run, outside the timing), so a shared machine's drift weighs on
# all alike; figures are medians with min and max, ratios are of medians in
# this run. Every output is checked with cmp once, before the timing. paes
# fsyncs its -o output before the rename, age does not (cheap on tmpfs, the
# default here). The targets (issue: 1 GiB on tmpfs, 2 cores): paes' age
# encrypt and decrypt each >= 1.8x as fast as age's (time <= 1/1.8 = 0.556x),
# and within 1.1x of the time of paes' own sealed format. It asserts nothing.
#
#   bench/age_file.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 1024 7 /dev/shm)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup age-file "${1:-1024}" "${2:-7}" "${3:-/dev/shm}"
for tool in age age-keygen; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed (scripts/setup.sh installs age)" >&2; exit 1; }
done

head -c "$((size_mib << 20))" /dev/urandom > "$work/in.bin"
age-keygen -o "$work/age.id" 2> /dev/null
recipient="$(age-keygen -y "$work/age.id")"

# The ciphertexts the decryptions read, and each output checked once: every
# file opens with the other tool too where it can (age reads paes' age files).
age -e -r "$recipient" -o "$work/in.age" "$work/in.bin"
"$paes" encrypt --format age -r "$recipient" -o "$work/in.paes.age" "$work/in.bin"
"$paes" encrypt -r "$recipient" -o "$work/in.paes" "$work/in.bin"
age -d -i "$work/age.id" -o "$work/check" "$work/in.paes.age"
cmp "$work/check" "$work/in.bin"; rm -f "$work/check"
"$paes" decrypt -i "$work/age.id" -o "$work/check" "$work/in.age"
cmp "$work/check" "$work/in.bin"; rm -f "$work/check"
"$paes" decrypt -i "$work/age.id" -o "$work/check" "$work/in.paes"
cmp "$work/check" "$work/in.bin"; rm -f "$work/check"
age -d -i "$work/age.id" -o "$work/check" "$work/in.age"
cmp "$work/check" "$work/in.bin"; rm -f "$work/check"

echo "input: $size_mib MiB random, file to file in $work, warm page cache, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "paes: $paes ($("$paes" --version | head -1)), default threads; age $(age --version)"
echo "$runs round-robin runs per command after a warm-up round, each group of three alternated"

"${PYTHON:-python3}" - "$root/bench/suite" "$paes" "$runs" "$work" "$recipient" <<'EOF'
import sys

sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure  # noqa: E402

paes, runs, work, recipient = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
out = f"{work}/out"
ident = f"{work}/age.id"
plain = f"{work}/in.bin"

# (label, argv, input), each group timed round-robin
groups = [
    [("age -e", ["age", "-e", "-r", recipient, "-o", out, plain], plain),
     ("paes encrypt --format age", [paes, "encrypt", "--format", "age", "-r", recipient, "-o", out, plain], plain),
     ("paes encrypt (sealed)", [paes, "encrypt", "-r", recipient, "-o", out, plain], plain)],
    [("age -d", ["age", "-d", "-i", ident, "-o", out, f"{work}/in.age"], f"{work}/in.age"),
     ("paes decrypt (age file)", [paes, "decrypt", "-i", ident, "-o", out, f"{work}/in.age"], f"{work}/in.age"),
     ("paes decrypt (sealed)", [paes, "decrypt", "-i", ident, "-o", out, f"{work}/in.paes"], f"{work}/in.paes")],
]

median = {}
for group in groups:
    cands = [{"argv": argv, "src": src, "out": out, "parse_json": False, "stdout": None, "rec": {"bytes": 1}}
             for _, argv, src in group]
    for (label, *_), rec in zip(group, measure(cands, runs)):
        median[label] = rec["seconds"]
        print(f"{label:36} median {rec['seconds']:7.3f}s  min {rec['min_seconds']:7.3f}s  "
              f"max {rec['max_seconds']:7.3f}s", flush=True)

ratios = [
    ("paes age encrypt / age -e", "paes encrypt --format age", "age -e", "<= 0.556: >= 1.8x as fast"),
    ("paes age decrypt / age -d", "paes decrypt (age file)", "age -d", "<= 0.556: >= 1.8x as fast"),
    ("paes age encrypt / paes sealed encrypt", "paes encrypt --format age", "paes encrypt (sealed)", "<= 1.10"),
    ("paes age decrypt / paes sealed decrypt", "paes decrypt (age file)", "paes decrypt (sealed)", "<= 1.10"),
]
print()
print("ratios of medians (time / time; lower is faster for the first):")
for what, a, b, target in ratios:
    print(f"  {what:40}: {median[a] / median[b]:.2f}   (target {target})")
EOF
