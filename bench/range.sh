#!/usr/bin/env bash
# Random access into a sealed file: `paes decrypt --range` of 1 MiB at the
# middle against a decryption of the whole file, in one run (round-robin,
# bench/suite/paes_bench/runner.py: a warm-up round, then RUNS rounds;
# medians; both write to /dev/null). The file is sealed from zeros (its
# ciphertext is random whatever the plaintext) and stays in the page cache.
# Issue #16's goal: the range takes <= 1% of the whole decryption's time.
#
#   bench/range.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 4096 7 $TMPDIR or /tmp)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup range "${1:-4096}" "${2:-7}" "${3:-}"

"$paes" keygen -o "$work/key" >/dev/null
head -c "$((size_mib << 20))" /dev/zero | "$paes" encrypt --key-file "$work/key" -o "$work/big.paes"
middle=$(( (size_mib << 20) / 2 ))

echo "input: a $size_mib MiB sealed file (1 MiB segments), warm page cache, $runs round-robin runs after a warm-up, $(nproc) CPUs"
WORK="$work" PAES="$paes" RUNS="$runs" MIDDLE="$middle" "${PYTHON:-python3}" - "$root/bench/suite" <<'EOF'
import os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure

w, paes = os.environ["WORK"], os.environ["PAES"]
base = [paes, "decrypt", "--key-file", f"{w}/key", f"{w}/big.paes", "-o", "/dev/null"]
commands = {
    "whole file": base,
    "--range 1M at the middle": base + ["--range", f"{os.environ['MIDDLE']}:1M"],
}
cands = [{"argv": argv, "src": f"{w}/big.paes", "out": None, "parse_json": False, "stdout": subprocess.DEVNULL,
          "rec": {"name": name, "bytes": os.path.getsize(f"{w}/big.paes")}} for name, argv in commands.items()]
recs = {r["name"]: r for r in measure(cands, int(os.environ["RUNS"]))}
for name, r in recs.items():
    print(f"{name:<26} median {r['seconds']:8.4f}s  min {r['min_seconds']:8.4f}s  max {r['max_seconds']:8.4f}s")
ratio = recs["--range 1M at the middle"]["seconds"] / recs["whole file"]["seconds"]
print(f"\nrange / whole: {100 * ratio:.2f}%   (target <= 1%)")
EOF
