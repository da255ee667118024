#!/usr/bin/env python3
"""One smoke run of a libFuzzer target, as ctest runs it (fuzz/CMakeLists.txt).

The fuzzer gets a fresh temporary directory as its first corpus directory,
where it writes what it finds, and the committed seeds as the second, which it
only reads: the source tree is never written. Crash, leak and timeout inputs
go to --artifacts. libFuzzer's final "Done N runs in S second(s)" line is
printed; the exit status is the fuzzer's (non-zero on any finding).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fuzzer", required=True, help="the fuzz target's executable")
    parser.add_argument("--seeds", required=True, help="the committed seed corpus (read only)")
    parser.add_argument("--dict", help="a libFuzzer dictionary")
    parser.add_argument("--artifacts", required=True, help="where crash, leak and timeout inputs go")
    parser.add_argument("--seconds", type=int, default=60, help="how long to fuzz")
    args = parser.parse_args()

    if not os.path.isdir(args.seeds) or not os.listdir(args.seeds):
        sys.exit(f"run_smoke: no seeds in {args.seeds}")
    name = os.path.basename(args.fuzzer)
    os.makedirs(args.artifacts, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as corpus:
        command = [args.fuzzer, f"-max_total_time={args.seconds}", "-timeout=10",
                   "-print_final_stats=1", f"-artifact_prefix={os.path.join(args.artifacts, name)}-"]
        if args.dict:
            command.append(f"-dict={args.dict}")
        command += [corpus, args.seeds]
        print(" ".join(command), flush=True)
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
        output = result.stdout
        found = len(os.listdir(corpus))
    done = re.findall(r"^Done \d+ runs in \d+ second\(s\)$", output, re.MULTILINE)
    if result.returncode != 0 or not done:
        print(output[-20000:])
        print(f"run_smoke: {name} failed (exit {result.returncode}); its input is in {args.artifacts}")
        return result.returncode or 1
    stats = dict(re.findall(r"^stat::(\w+):\s+(\d+)$", output, re.MULTILINE))
    print(done[-1])
    print(f"{name}: {stats.get('number_of_executed_units', '?')} executions, "
          f"{stats.get('average_exec_per_sec', '?')} per second, peak RSS {stats.get('peak_rss_mb', '?')} MB, "
          f"{found} new corpus inputs, 0 crashes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
