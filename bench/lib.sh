# Shared by the benchmark scripts: their arguments, a scratch directory,
# timing commands in one run, medians, ratios. A script sources it, then calls
#   bench_setup NAME "$@"      # [SIZE_MIB] [RUNS] [DIR]; sets root size_mib runs paes work

declare -A median minimum maximum

bench_setup() {
  local name="$1"; shift
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  size_mib="${1:-1024}"
  runs="${2:-5}"
  local base="${3:-${TMPDIR:-/tmp}}"
  paes="${PAES:-$root/build/release/paes}"
  [ -x "$paes" ] || { echo "build paes first (cmake --preset release && cmake --build --preset release)" >&2; exit 1; }
  work="$(mktemp -d "$base/paes-$name.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
}

# measure NAME COMMAND...: runs COMMAND once to warm up, then $runs times,
# deleting $work/out before each run (outside the timing); records and prints
# the median, min and max wall seconds.
measure() {
  local name="$1"; shift
  local times=() i start end sorted
  for ((i = 0; i <= runs; i++)); do
    rm -f "$work/out"
    sync
    start=$(date +%s%N)
    "$@"
    end=$(date +%s%N)
    ((i == 0)) || times+=("$(((end - start) / 1000))")
  done
  sorted=$(printf '%s\n' "${times[@]}" | sort -n)
  median[$name]=$(echo "$sorted" | awk -v n="$runs" 'NR == int((n + 1) / 2) { printf "%.3f", $1 / 1e6 }')
  minimum[$name]=$(echo "$sorted" | head -1 | awk '{ printf "%.3f", $1 / 1e6 }')
  maximum[$name]=$(echo "$sorted" | tail -1 | awk '{ printf "%.3f", $1 / 1e6 }')
  printf '%-36s median %7ss  min %7ss  max %7ss\n' "$name" "${median[$name]}" "${minimum[$name]}" "${maximum[$name]}"
}

# ratio A B: median[A] / median[B], two decimals.
ratio() { awk -v a="${median[$1]}" -v b="${median[$2]}" 'BEGIN { printf "%.2f", a / b }'; }
