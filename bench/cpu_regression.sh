#!/usr/bin/env bash
# No CPU regression (issue 30): a candidate paes against a baseline paes built
# from the issue's reference commit, on 2 threads of the threads engine:
#   - in memory: `paes bench` on 64 MiB, AES-256 CTR and sealed, encrypt (the
#     threads engine's median of its own --repeat, per run);
#   - file to file on tmpfs: a SIZE_MIB random file encrypted with raw CTR
#     (key file and --iv) and sealed (key file); whole program, wall time.
# Runs alternate (baseline, candidate, baseline, ...) after a warm-up round,
# so a drift of a shared machine weighs on both alike; each side's figure is
# the median of RUNS, with its interquartile range and min..max. It reports
# figures and asserts nothing: the goal is candidate time / baseline time
# <= 1.03 per case.
#
#   bench/cpu_regression.sh --baseline PATH --candidate PATH [--runs 9] [--size-mib 1024] [--dir /dev/shm]
#   bench/cpu_regression.sh --build-baseline DIR    # builds DIR/build/release/paes from the reference
set -euo pipefail

reference="${PAES_REGRESSION_REFERENCE:-c4f93cc}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
  sed -n 's|^#   bench/|usage: bench/|p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

# The reference's sources, from this checkout's history, built as a release
# would be but without the GPU engines or the tests (only the CLI is timed).
build_baseline() {
  local dir="$1"
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    echo "$dir exists and is not empty: give a new directory" >&2
    exit 2
  fi
  git -C "$root" rev-parse --verify --quiet "$reference^{commit}" > /dev/null ||
    { echo "commit $reference is not in $root's history" >&2; exit 1; }
  mkdir -p "$dir"
  git -C "$root" archive "$reference" | tar -x -C "$dir"
  local launcher=()
  if command -v ccache > /dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  (cd "$dir" && cmake --preset release "${launcher[@]}" \
     -DPAES_WITH_CUDA=OFF -DPAES_WITH_OPENCL=OFF -DPAES_BUILD_TESTS=OFF > /dev/null)
  cmake --build "$dir/build/release" -j"$(nproc)" --target paes_cli
  echo "baseline ($reference): $dir/build/release/paes"
}

baseline="" candidate="" runs=9 size_mib=1024 base=/dev/shm
while [ $# -gt 0 ]; do
  case "$1" in
    --build-baseline) [ $# -eq 2 ] || usage; build_baseline "$2"; exit 0 ;;
    --baseline) [ $# -ge 2 ] || usage; baseline="$2"; shift 2 ;;
    --candidate) [ $# -ge 2 ] || usage; candidate="$2"; shift 2 ;;
    --runs) [ $# -ge 2 ] || usage; runs="$2"; shift 2 ;;
    --size-mib) [ $# -ge 2 ] || usage; size_mib="$2"; shift 2 ;;
    --dir) [ $# -ge 2 ] || usage; base="$2"; shift 2 ;;
    *) usage ;;
  esac
done
if [ -z "$baseline" ] || [ -z "$candidate" ]; then usage; fi
# Checked before anything is written: a negative size would have 'head -c'
# copy /dev/urandom without end onto tmpfs.
for value in "$size_mib" "$runs"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || { echo "--size-mib and --runs are positive whole numbers, got '$value'" >&2; exit 2; }
done
for bin in "$baseline" "$candidate"; do
  [ -x "$bin" ] || { echo "$bin is not an executable paes (--build-baseline DIR builds the baseline)" >&2; exit 1; }
done
[ -d "$base" ] || { echo "--dir $base is not a directory" >&2; exit 2; }
command -v openssl > /dev/null || { echo "openssl is not installed: it makes the key and IV" >&2; exit 1; }

work="$(mktemp -d "$base/paes-cpu-regression.XXXXXX")"
trap 'rm -rf "$work"' EXIT

head -c "$((size_mib << 20))" /dev/urandom > "$work/in.bin"
openssl rand -hex 32 > "$work/key" && chmod 600 "$work/key"
iv="$(openssl rand -hex 16)"

# Same bytes from both before any timing: a faster wrong answer is no figure.
# CTR must match byte for byte; each side must open the other's sealed file.
"$baseline" encrypt --mode ctr --key-file "$work/key" --iv "$iv" "$work/in.bin" -o "$work/base.out"
"$candidate" encrypt --mode ctr --key-file "$work/key" --iv "$iv" "$work/in.bin" -o "$work/cand.out"
cmp "$work/base.out" "$work/cand.out" || { echo "the two binaries' CTR outputs differ" >&2; exit 1; }
rm -f "$work/base.out" "$work/cand.out"
for pair in "$baseline $candidate" "$candidate $baseline"; do
  read -r sealer opener <<< "$pair"
  "$sealer" encrypt --key-file "$work/key" "$work/in.bin" -o "$work/sealed"
  "$opener" decrypt --key-file "$work/key" "$work/sealed" -o "$work/opened"
  cmp "$work/opened" "$work/in.bin" || { echo "$opener does not open $sealer's sealed file" >&2; exit 1; }
  rm -f "$work/sealed" "$work/opened"
done

echo "baseline : $baseline"
echo "candidate: $candidate"
echo "$runs alternated runs per side after a warm-up round, 2 threads, AES-256, $(nproc) CPUs, inputs on $base"

"${PYTHON:-python3}" - "$root/bench/suite" "$baseline" "$candidate" "$runs" "$work" "$iv" "$size_mib" <<'EOF'
import json
import statistics
import sys

sys.path.insert(0, sys.argv[1])
from paes_bench.runner import measure, run_checked  # noqa: E402

baseline, candidate, runs, work, iv, size_mib = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
sides = (("baseline", baseline), ("candidate", candidate))
results = []  # (case, unit, baseline times, candidate times)


def bench_seconds(paes):
    """One `paes bench` run: the threads engine's median seconds on 2 threads, per mode."""
    argv = [paes, "bench", "--modes", "ctr,sealed", "--key-bits", "256", "--directions", "encrypt",
            "--size", "64M", "--thread-counts", "2", "--repeat", "5", "--json"]
    records = json.loads(run_checked(argv).stdout)
    found = {r["mode"]: r["seconds"] for r in records if r["engine"] == "threads" and r["threads"] == 2}
    if set(found) != {"ctr", "sealed"}:
        sys.exit(f"{paes} bench gave no 2-thread figure for ctr and sealed: {sorted(found)}")
    return found


times = {(mode, side): [] for mode in ("ctr", "sealed") for side, _ in sides}
for i in range(runs + 1):
    for side, paes in sides:
        figures = bench_seconds(paes)
        if i > 0:
            for mode, seconds in figures.items():
                times[(mode, side)].append(seconds)
for mode in ("ctr", "sealed"):
    results.append((f"memory {mode} 64 MiB", times[(mode, "baseline")], times[(mode, "candidate")]))

src, out = f"{work}/in.bin", f"{work}/out"
commands = {
    "ctr": ["encrypt", "--mode", "ctr", "--engine", "threads", "--threads", "2", "--key-file", f"{work}/key",
            "--iv", iv, src, "-o", out],
    "sealed": ["encrypt", "--engine", "threads", "--threads", "2", "--key-file", f"{work}/key", src, "-o", out],
}
for mode, args in commands.items():
    cands = [{"argv": [paes] + args, "src": src, "out": out, "parse_json": False, "stdout": None,
              "rec": {"bytes": int(size_mib) << 20}} for _, paes in sides]
    recs = measure(cands, runs)
    results.append((f"file {mode} {size_mib} MiB", recs[0]["all_seconds"], recs[1]["all_seconds"]))

def quartiles(t):
    """The first and third quartiles: a spread that a shared machine's odd slow run leaves alone."""
    q1, _, q3 = statistics.quantiles(t, n=4, method="inclusive") if len(t) > 1 else (t[0], t[0], t[0])
    return q1, q3


width = max(len(case) for case, _, _ in results)
print()
for case, base, cand in results:
    for side, t in (("baseline", base), ("candidate", cand)):
        q1, q3 = quartiles(t)
        print(f"{case:<{width}}  {side:<9}  median {statistics.median(t) * 1e3:9.2f} ms"
              f"  IQR {q1 * 1e3:.2f}..{q3 * 1e3:.2f} ms  min..max {min(t) * 1e3:.2f}..{max(t) * 1e3:.2f} ms")
print()
print("candidate time / baseline time, ratio of medians:")
for case, base, cand in results:
    print(f"  {case:<{width}}  ratio {statistics.median(cand) / statistics.median(base):.2f} (goal <= 1.03)")
EOF
