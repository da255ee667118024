#!/usr/bin/env bash
# Pipes: paes between two processes against age and a plain `cat`, in one run.
# Each command reads a page-cached file through `cat` and writes to /dev/null,
# so what is measured is the pipe and the program, not the disk:
#   cat big | cat > /dev/null                    the floor a pipe allows
#   cat big | age -r R > /dev/null               age, sealed
#   cat big | paes encrypt --key-file K > /dev/null   paes, sealed (the default)
# and the same for decryption of each one's own sealed stream. Commands run
# round-robin (bench/suite/paes_bench/runner.py: one warm-up round, then RUNS
# rounds), so a drift of the machine weighs on all alike; the figures are
# medians, and the ratios are between medians of this run. paes' peak memory
# (ru_maxrss) is read from one more run of each direction.
#
#   bench/pipes.sh [SIZE_MIB] [RUNS] [DIR]     (defaults: 1024 7 $TMPDIR or /tmp)
set -euo pipefail

source "$(dirname "$0")/lib.sh"
bench_setup pipes "${1:-1024}" "${2:-7}" "${3:-}"
command -v age >/dev/null || { echo "age is not installed (scripts/setup.sh installs it)" >&2; exit 1; }

head -c "$((size_mib << 20))" /dev/urandom > "$work/big"
"$paes" keygen -o "$work/key" >/dev/null
age-keygen -o "$work/identity" 2>/dev/null
recipient="$(age-keygen -y "$work/identity")"
"$paes" encrypt --key-file "$work/key" "$work/big" -o "$work/big.paes"
age -r "$recipient" -o "$work/big.age" "$work/big"

echo "input: $size_mib MiB random, warm page cache, $runs round-robin runs after a warm-up, $(nproc) CPUs"
echo "       $(age --version 2>/dev/null | head -1 | sed 's/^/age /'), $("$paes" --version | head -1)"
WORK="$work" PAES="$paes" RECIPIENT="$recipient" RUNS="$runs" "${PYTHON:-python3}" - "$root/bench/suite" <<'EOF'
import os, resource, subprocess, sys
sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure

w, paes, recipient = os.environ["WORK"], os.environ["PAES"], os.environ["RECIPIENT"]
big, sealed, aged = f"{w}/big", f"{w}/big.paes", f"{w}/big.age"
commands = {
    "encrypt: cat | cat": f"cat {big} | cat",
    "encrypt: cat | age": f"cat {big} | age -r {recipient}",
    "encrypt: cat | paes": f"cat {big} | '{paes}' encrypt --key-file {w}/key",
    "decrypt: cat | cat": f"cat {sealed} | cat",
    "decrypt: cat | age -d": f"cat {aged} | age -d -i {w}/identity",
    "decrypt: cat | paes": f"cat {sealed} | '{paes}' decrypt --key-file {w}/key",
}
cands = [{"argv": ["sh", "-c", cmd + " > /dev/null"], "src": big, "out": None, "parse_json": False,
          "stdout": subprocess.DEVNULL, "rec": {"name": name, "bytes": os.path.getsize(big)}}
         for name, cmd in commands.items()]
recs = {r["name"]: r for r in measure(cands, int(os.environ["RUNS"]))}
for name, r in recs.items():
    print(f"{name:<24} median {r['seconds']:7.3f}s  min {r['min_seconds']:7.3f}s  max {r['max_seconds']:7.3f}s"
          f"  {r['gbps']:6.2f} GB/s")

def peak_mib(args, source):
    cat = subprocess.Popen(["cat", source], stdout=subprocess.PIPE)
    proc = subprocess.Popen([paes] + args, stdin=cat.stdout, stdout=subprocess.DEVNULL)
    cat.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    cat.wait()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"paes {args[0]} failed")
    return usage.ru_maxrss / 1024

ratio = lambda a, b: recs[a]["seconds"] / recs[b]["seconds"]
print("\nratios of medians (time / time; lower is faster for paes):")
for d, peer in (("encrypt", "cat | age"), ("decrypt", "cat | age -d")):
    print(f"  {d}: paes / age : {ratio(f'{d}: cat | paes', f'{d}: {peer}'):.2f}   (target <= 1.00)")
    print(f"  {d}: paes / cat : {ratio(f'{d}: cat | paes', f'{d}: cat | cat'):.2f}   (target <= 1.00)")
print(f"peak memory of paes: encrypt {peak_mib(['encrypt', '--key-file', f'{w}/key'], big):.0f} MiB, "
      f"decrypt {peak_mib(['decrypt', '--key-file', f'{w}/key'], sealed):.0f} MiB   (target <= 128 MiB)")
EOF
