# Shared by the benchmark scripts: their arguments, a scratch directory,
# timing commands in one run, ratios. A script sources it, then calls
#   bench_setup NAME "$@"      # [SIZE_MIB] [RUNS] [DIR]; sets root size_mib runs paes work
# The timing itself (warm-up, runs, median, min, max) is the benchmark suite's
# harness, bench/suite/paes_bench/runner.py (standard-library Python 3; $PYTHON
# picks the interpreter, python3 by default), so the scripts and the suite
# measure a command the same way.

declare -A median minimum maximum

bench_setup() {
  local name="$1"; shift
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  size_mib="${1:-1024}"
  runs="${2:-5}"
  local base="${3:-${TMPDIR:-/tmp}}"
  # Checked before anything is written: a negative size made 'head -c' copy
  # /dev/urandom without end, filling the disk (or memory, on tmpfs).
  local value
  for value in "$size_mib" "$runs"; do
    [[ "$value" =~ ^[1-9][0-9]*$ ]] || { echo "SIZE_MIB and RUNS are positive whole numbers, got '$value'" >&2; exit 2; }
  done
  command -v openssl > /dev/null || { echo "openssl is not installed: it makes the inputs and keys" >&2; exit 1; }
  paes="${PAES:-$root/build/release/paes}"
  [ -x "$paes" ] || { echo "build paes first (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }
  work="$(mktemp -d "$base/paes-$name.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
}

# measure NAME COMMAND...: runs COMMAND once to warm up, then $runs times,
# deleting $work/out and running `sync` before each run (outside the timing);
# records and prints the median, min and max wall seconds. COMMAND's own
# standard output goes to standard error.
measure() {
  local name="$1"; shift
  local figures
  figures=$("${PYTHON:-python3}" "$root/bench/suite/paes_bench/runner.py" --runs "$runs" --delete "$work/out" -- "$@")
  read -r "median[$name]" "minimum[$name]" "maximum[$name]" <<< "$figures"
  printf '%-36s median %7ss  min %7ss  max %7ss\n' "$name" "${median[$name]}" "${minimum[$name]}" "${maximum[$name]}"
}

# ratio A B: median[A] / median[B], two decimals.
ratio() { awk -v a="${median[$1]}" -v b="${median[$2]}" 'BEGIN { printf "%.2f", a / b }'; }
