#!/usr/bin/env bash
# Small jobs, whole processes, where start-up weighs most, and armor on a large
# file (issues 32 and 43): paes' sealed format against age with the same
# X25519 key, a small sealed decryption on the default threads against one,
# and -a against the binary format.
#   - 2 KiB encrypt: `paes encrypt -r age1...` against `age -r age1...`;
#   - 2 KiB decrypt: `paes decrypt -i ID` against `age -d -i ID`;
#   each into a file (-o: paes' temporary, fsync and rename; age writes in
#   place and does not sync) and to standard output (/dev/null: neither syncs,
#   like for like);
#   - 1 MiB sealed decrypt into a file: default threads against --threads 1;
#   - ARMOR_MIB (1 GiB) sealed to the recipient with -a against without, both
#   ways, into files.
# Beside them, in the same rounds, two floors, the least work that does the
# same:
#   - bench/start_up_floor.c (built here with cc and libcrypto) seals the
#   2 KiB file to the recipient, and opens it, with OpenSSL loaded as paes
#   loads it and nothing else: floor / age is what OpenSSL 3's start-up leaves
#   to anything built on it, paes / floor what paes adds;
#   - dd writing as many bytes as the armored file and as the binary one, for
#   the 1 GiB encrypt: on a file system that writes one file at a time, -a
#   can't take less than those bytes' time.
# Each case runs round-robin and alternated (bench/suite/paes_bench/runner.py's
# measure: a warm-up round, then RUNS rounds, every other one in the reverse
# order, `sync` before every run outside the timing), so a shared machine's
# drift and the order weigh on both alike; figures are
# medians with min..max, ratios are of medians. It reports and asserts
# nothing; the goals (printed beside each ratio): paes / age <= 1.0 for the
# 2 KiB encrypt and decrypt into a file, default threads / --threads 1 <= 1.0
# for the 1 MiB decrypt, -a / binary <= 1.15 encrypting and <= 1.25
# decrypting. Quote it from an idle machine: the load average is printed.
#
#   bench/start_up_and_armor.sh [RUNS] [DIR] [ARMOR_MIB]   (defaults: 41, $TMPDIR or /tmp, 1024)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup start-up "${3:-1024}" "${1:-41}" "${2:-}"
for tool in age age-keygen; do
  command -v "$tool" > /dev/null || { echo "$tool is not installed (scripts/setup.sh installs age)" >&2; exit 1; }
done

head -c 2048 /dev/urandom > "$work/in2k"
head -c $((1 << 20)) /dev/urandom > "$work/in1m"
age-keygen -o "$work/age.id" 2> /dev/null
recipient="$(age-keygen -y "$work/age.id")"
"$paes" keygen -o "$work/key"
# Each tool's 2 KiB file, and paes opening age's own key: the same key on both sides.
"$paes" encrypt -r "$recipient" "$work/in2k" -o "$work/in2k.paes"
age -r "$recipient" -o "$work/in2k.age" "$work/in2k"
"$paes" decrypt -i "$work/age.id" "$work/in2k.paes" -o "$work/check"
cmp "$work/check" "$work/in2k"
rm -f "$work/check"
"$paes" encrypt --key-file "$work/key" "$work/in1m" -o "$work/in1m.paes"
# The large file, sealed to the recipient in both formats; the armor must hold
# the binary file's plaintext.
head -c $((size_mib << 20)) /dev/urandom > "$work/big"
"$paes" encrypt -r "$recipient" "$work/big" -o "$work/big.paes"
"$paes" encrypt -a -r "$recipient" "$work/big" -o "$work/big.paes.asc"
"$paes" decrypt -i "$work/age.id" "$work/big.paes.asc" -o "$work/check"
cmp "$work/check" "$work/big"
rm -f "$work/check"

floor="$work/start_up_floor"
if ! "${CC:-cc}" -std=c11 -O2 -o "$floor" "$root/bench/start_up_floor.c" -lcrypto 2> "$work/floor.log"; then
  echo "no OpenSSL floor: building bench/start_up_floor.c failed (a C compiler and libssl-dev):" >&2
  cat "$work/floor.log" >&2
  floor=""
else
  "$floor" seal "$recipient" "$work/in2k" "$work/in2k.floor"
  "$floor" open "$work/age.id" "$work/in2k.floor" "$work/check"
  cmp "$work/check" "$work/in2k"
  rm -f "$work/check"
fi

echo "paes: $paes ($("$paes" --version | head -1)); age $(age --version)"
echo "$runs round-robin runs per command after a warm-up round, $(nproc) CPUs, files in $work;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"

"${PYTHON:-python3}" - "$root/bench/suite" "$paes" "$runs" "$work" "$recipient" "$size_mib" "$floor" <<'EOF'
import os
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure  # noqa: E402

paes, runs, work, recipient, size_mib, floor = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
out = f"{work}/out"
ident = f"{work}/age.id"
to_file = {"parse_json": False, "stdout": None, "out": out}
to_null = {"parse_json": False, "stdout": subprocess.DEVNULL, "out": out}

# The floors' sides: a 2 KiB seal or open by bench/start_up_floor.c, and dd
# writing as many bytes as a file (the least that puts them on this file system).
def floor_side(action, key, src):
    return [(f"OpenSSL floor {action}", [floor, action, key, src, out], src, to_file)] if floor else []


def write_side(label, like):
    size = os.path.getsize(like)
    return (label, ["dd", "if=/dev/zero", f"of={out}", "bs=1M", "iflag=count_bytes", f"count={size}", "status=none"],
            like, to_file)


# (case, [(label, argv, src, where the output goes)], [(numerator, denominator, goal)] as indexes of the sides)
floor_ratio = [(2, 1, ""), (0, 2, "")] if floor else []
cases = [
    ("2 KiB encrypt -o file",
     [("paes encrypt -r", [paes, "encrypt", "-r", recipient, f"{work}/in2k", "-o", out], f"{work}/in2k", to_file),
      ("age -r", ["age", "-r", recipient, "-o", out, f"{work}/in2k"], f"{work}/in2k", to_file)]
     + floor_side("seal", recipient, f"{work}/in2k"),
     [(0, 1, "<= 1.0")] + floor_ratio),
    ("2 KiB encrypt to stdout",
     [("paes encrypt -r", [paes, "encrypt", "-r", recipient, f"{work}/in2k"], f"{work}/in2k", to_null),
      ("age -r", ["age", "-r", recipient, f"{work}/in2k"], f"{work}/in2k", to_null)],
     [(0, 1, "<= 1.0")]),
    ("2 KiB decrypt -o file",
     [("paes decrypt -i", [paes, "decrypt", "-i", ident, f"{work}/in2k.paes", "-o", out], f"{work}/in2k.paes",
       to_file),
      ("age -d -i", ["age", "-d", "-i", ident, "-o", out, f"{work}/in2k.age"], f"{work}/in2k.age", to_file)]
     + floor_side("open", ident, f"{work}/in2k.floor"),
     [(0, 1, "<= 1.0")] + floor_ratio),
    ("2 KiB decrypt to stdout",
     [("paes decrypt -i", [paes, "decrypt", "-i", ident, f"{work}/in2k.paes"], f"{work}/in2k.paes", to_null),
      ("age -d -i", ["age", "-d", "-i", ident, f"{work}/in2k.age"], f"{work}/in2k.age", to_null)],
     [(0, 1, "")]),
    ("1 MiB decrypt, threads",
     [("paes, default threads", [paes, "decrypt", "--key-file", f"{work}/key", f"{work}/in1m.paes", "-o", out],
       f"{work}/in1m.paes", to_file),
      ("paes --threads 1", [paes, "decrypt", "--key-file", f"{work}/key", "--threads", "1", f"{work}/in1m.paes",
                            "-o", out], f"{work}/in1m.paes", to_file)],
     [(0, 1, "<= 1.0")]),
    (f"{size_mib} MiB sealed encrypt -o file",
     [("paes encrypt -a", [paes, "encrypt", "-a", "-r", recipient, f"{work}/big", "-o", out], f"{work}/big", to_file),
      ("paes encrypt", [paes, "encrypt", "-r", recipient, f"{work}/big", "-o", out], f"{work}/big", to_file),
      write_side("dd, the armored bytes", f"{work}/big.paes.asc"),
      write_side("dd, the binary bytes", f"{work}/big.paes")],
     [(0, 1, "<= 1.15"), (2, 3, "")]),
    (f"{size_mib} MiB sealed decrypt -o file",
     [("paes decrypt, armored", [paes, "decrypt", "-i", ident, f"{work}/big.paes.asc", "-o", out],
       f"{work}/big.paes.asc", to_file),
      ("paes decrypt, binary", [paes, "decrypt", "-i", ident, f"{work}/big.paes", "-o", out], f"{work}/big.paes",
       to_file)],
     [(0, 1, "<= 1.25")]),
]

ratios = []
for case, sides, wanted in cases:
    cands = [dict(where, argv=argv, src=src, rec={"bytes": 1}) for _, argv, src, where in sides]
    recs = measure(cands, runs, alternate=True)
    for (label, *_), rec in zip(sides, recs):
        print(f"{case:32} {label:24} median {rec['seconds'] * 1e3:7.2f} ms  "
              f"min..max {rec['min_seconds'] * 1e3:.2f}..{rec['max_seconds'] * 1e3:.2f} ms", flush=True)
    for num, den, goal in wanted:
        ratios.append((case, f"{sides[num][0]} / {sides[den][0]}", recs[num]["seconds"] / recs[den]["seconds"], goal))

print()
print("ratios of medians (time / time; lower is faster for the first):")
for case, what, ratio, goal in ratios:
    print(f"  {case:32} {what:48} {ratio:5.2f}" + (f"   (goal {goal})" if goal else ""))
EOF
