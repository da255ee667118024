#!/usr/bin/env bash
# A long fuzz campaign, outside CI (docs/FUZZING.md, "Long campaigns").
#
#   scripts/fuzz.sh SECONDS [TARGET...] [--wall-limit S] [--no-replace] [--json FILE]
#
# Builds the fuzz preset (clang, ASan + UBSan + libFuzzer) into build/fuzz if
# needed, then fuzz/campaign.py runs every target (or the ones named) side by
# side, one plain libFuzzer process each, from a scratch copy of the committed
# corpus fuzz/corpus/<target>/ with fuzz/dict/<target>.dict.
#
# SECONDS is CPU seconds per target (user + system time of the fuzzer, read
# from /proc/<pid>/stat; the fuzzer is stopped with SIGINT when it has had
# them), so a shared or busy machine changes how long the campaign takes, not
# how much fuzzing each target gets. --wall-limit S stops everything after S
# wall seconds regardless; the report then shows the CPU time really used.
#
# Then each grown corpus is minimised with libFuzzer's -merge=1 into a fresh
# directory (named seeds such as regression-* kept first, as they are) and,
# if the merge succeeded and covers at least what the committed corpus did,
# replaces fuzz/corpus/<target>/: review with `git status fuzz/corpus` and
# commit. Printed per target: CPU seconds, executions, cov/ft of the committed
# and the merged corpus, corpus files and bytes before -> after, crashes.
# Crash, leak, timeout and OOM inputs are kept in build/fuzz/artifacts/; the
# exit status is 1 if there is any.
#
# Everything runs under `nice -n 19`, so other work on the machine comes first.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [ $# -lt 1 ] || [[ "$1" == -* ]]; then
  sed -n '2,26s/^# \{0,1\}//p' "$0" >&2
  exit 2
fi

targets=()
for arg in "${@:2}"; do
  case "$arg" in fuzz_*) targets+=("$arg") ;; esac
done
if [ ${#targets[@]} -eq 0 ]; then
  targets=(fuzz_sealed_header fuzz_segment_decoder fuzz_salted_header fuzz_cli_options fuzz_ssh_key_line
           fuzz_plugin_protocol)
fi

if [ ! -f build/fuzz/CMakeCache.txt ]; then
  nice -n 19 cmake --preset fuzz
fi
nice -n 19 cmake --build --preset fuzz -j"$(nproc)" --target "${targets[@]}"

exec nice -n 19 python3 fuzz/campaign.py --build build/fuzz --source "$root" "$@"
