#!/usr/bin/env bash
# Random access into a sealed file: `paes decrypt --range` of 1 MiB at the
# middle against a decryption of the whole file, in one run (round-robin,
# bench/suite/paes_bench/runner.py: a warm-up round, then RUNS rounds;
# medians; both write to /dev/null). The file is sealed from zeros (its
# ciphertext is random whatever the plaintext) and stays in the page cache.
# Issue #16's goal: the range takes <= 1% of the whole decryption's time.
# Two ratios: of the seconds paes itself reports (--json: from opening the
# input to committing the output), and of whole processes. The second adds
# what any paes command costs to start and end (dynamic linking, page faults
# of a fresh process: ~2 ms on a VM), printed as `paes --version`'s share.
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
base = [paes, "decrypt", "--key-file", f"{w}/key", f"{w}/big.paes", "-o", "/dev/null", "--json"]
commands = {
    "whole file": base,
    "--range 1M at the middle": base + ["--range", f"{os.environ['MIDDLE']}:1M"],
    "paes --version": [paes, "--version"],
}
cands = [{"argv": argv, "src": f"{w}/big.paes", "out": None, "parse_json": "--json" in argv,
          "stdout": subprocess.DEVNULL, "rec": {"name": name, "bytes": os.path.getsize(f"{w}/big.paes")}}
         for name, argv in commands.items()]
recs = {r["name"]: r for r in measure(cands, int(os.environ["RUNS"]))}
print(f"{'':<26} {'wall (median, min-max)':>30}   paes' own --json seconds (median)")
for name, r in recs.items():
    own = f"{r['paes_reported_seconds']:9.5f}s" if "paes_reported_seconds" in r else "-"
    print(f"{name:<26} {r['seconds']:9.5f}s ({r['min_seconds']:.5f}-{r['max_seconds']:.5f}s)   {own}")
whole, part = recs["whole file"], recs["--range 1M at the middle"]
print(f"\nrange / whole, in paes (open, read, verify, write): "
      f"{100 * part['paes_reported_seconds'] / whole['paes_reported_seconds']:.2f}%   (target <= 1%)")
print(f"range / whole, whole processes:                     {100 * part['seconds'] / whole['seconds']:.2f}%")
print(f"of which starting and ending a paes process (paes --version / whole): "
      f"{100 * recs['paes --version']['seconds'] / whole['seconds']:.2f}%")
EOF
