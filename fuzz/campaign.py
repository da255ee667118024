#!/usr/bin/env python3
"""A long fuzz campaign outside CI (scripts/fuzz.sh runs it; docs/FUZZING.md).

Every target fuzzes at once, each as one plain libFuzzer process, from a
scratch copy of its committed corpus (fuzz/corpus/<target>/) with its
dictionary. SECONDS is CPU time per target, not wall time: the fuzzer's
user+system time is read from /proc/<pid>/stat every half second and the
fuzzer is stopped with SIGINT when it reaches SECONDS (libFuzzer prints its
final stats and exits 72). On a shared or niced machine every target still
gets its full share of fuzzing, however long that takes in wall time;
--wall-limit stops a target early all the same, and the report then shows the
CPU time it really had.

A crash, leak, timeout or out-of-memory input goes to build/fuzz/artifacts/
(libFuzzer's crash-/leak-/timeout-/oom-<sha1> names) and the target is started
again from its scratch corpus for the CPU time it has left (at most
--max-crashes times); the script exits 1 if any target found one.

Afterwards each target's corpus is minimised with libFuzzer's -merge=1 into a
fresh directory: the committed seeds with names of their own (hand-made
inputs and regression-* reproducers, everything not a 40-hex sha1 name) are
kept as they are, first; the sha1-named inputs of earlier campaigns and
everything this run found are merged after them, and only inputs that add
coverage are kept. The merged corpus's cov/ft (one -runs=0 pass) must be at
least the committed corpus's, or the tree is left alone; otherwise
fuzz/corpus/<target>/ is replaced by the merged directory.

The report gives per target: CPU seconds, executions, cov/ft of the old and
the merged corpus, files and bytes before -> after, crashes.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

TARGETS = ["fuzz_sealed_header", "fuzz_segment_decoder", "fuzz_salted_header", "fuzz_cli_options",
           "fuzz_ssh_key_line", "fuzz_plugin_protocol"]
SHA1_NAME = re.compile(r"^[0-9a-f]{40}$")
ARTIFACT = re.compile(r"^(crash|leak|timeout|oom|slow-unit)-")
CLK_TCK = os.sysconf("SC_CLK_TCK")
INTERRUPTED = 72  # libFuzzer's -interrupted_exitcode default


def cpu_seconds(pid):
    """User + system CPU seconds of a live process, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def corpus_stats(directory):
    files = [p for p in Path(directory).iterdir() if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


@dataclass
class Target:
    name: str
    fuzzer: Path
    seeds: Path
    dictionary: Path
    work: Path
    log: Path
    cpu: float = 0.0          # CPU seconds of finished runs
    executions: int = 0
    runs: int = 0
    crashes: list = field(default_factory=list)
    process: subprocess.Popen = None
    started: float = 0.0
    last_cpu: float = 0.0
    stopped: bool = False     # SIGINT sent for this run
    done: bool = False
    note: str = ""
    max_crashes: int = 10
    result: dict = field(default_factory=dict)


def start(target, args, artifacts):
    scratch = target.work / "corpus"
    log = open(target.log, "a")
    command = [str(target.fuzzer), f"-dict={target.dictionary}", "-timeout=10", "-rss_limit_mb=2048",
               "-print_final_stats=1", f"-artifact_prefix={artifacts}/{target.name}-",
               f"-max_total_time={max(1, int(args.wall_limit - (time.monotonic() - args.t0)))}",
               str(scratch)]
    log.write(f"\n### run {target.runs + 1}: {' '.join(command)}\n")
    log.flush()
    target.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=target.work)
    log.close()
    target.runs += 1
    target.started = time.monotonic()
    target.last_cpu = 0.0
    target.stopped = False


def reap(target):
    """True once the run has exited; its exact CPU time is then in last_cpu."""
    pid, status, usage = os.wait4(target.process.pid, os.WNOHANG)
    if pid == 0:
        return False
    target.process.returncode = os.waitstatus_to_exitcode(status)
    target.last_cpu = usage.ru_utime + usage.ru_stime
    return True


def finish_run(target, artifacts, before):
    """Account for a run that has exited; True if the target should run again."""
    rc = target.process.returncode
    target.cpu += target.last_cpu
    text = target.log.read_text(errors="replace")
    run_text = text[text.rindex("### run "):]
    stats = dict(re.findall(r"^stat::(\w+):\s+(\d+)$", run_text, re.MULTILINE))
    if "number_of_executed_units" in stats:
        target.executions += int(stats["number_of_executed_units"])
    else:
        counts = re.findall(r"^#(\d+)\s", run_text, re.MULTILINE)
        target.executions += int(counts[-1]) if counts else 0
    found = sorted(p.name for p in artifacts.iterdir()
                   if p.name.startswith(target.name + "-") and ARTIFACT.match(p.name[len(target.name) + 1:])
                   and p.name not in before)
    new = [f for f in found if f not in target.crashes]
    target.crashes += new
    if rc in (0, INTERRUPTED) and not new:
        return False
    if not new:
        target.crashes.append(f"(exit {rc}, no artifact: see {target.log})")
    return len(target.crashes) < target.max_crashes


def coverage(fuzzer, directory, work, log):
    """cov and ft of a corpus directory: one -runs=0 pass over it."""
    result = subprocess.run([str(fuzzer), "-runs=0", "-timeout=10", "-rss_limit_mb=2048", str(directory)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                            cwd=work)
    with open(log, "a") as out:
        out.write(f"\n### coverage of {directory}\n{result.stdout}")
    match = re.findall(r"INITED cov: (\d+) ft: (\d+)", result.stdout)
    if result.returncode != 0 or not match:
        raise RuntimeError(f"{fuzzer.name}: the -runs=0 pass over {directory} failed (see {log})")
    return int(match[-1][0]), int(match[-1][1])


def minimise(target, replace):
    """Merges the grown corpus into a fresh directory; replaces the committed one."""
    merged = target.work / "merged"
    shutil.rmtree(merged, ignore_errors=True)
    merged.mkdir()
    kept = 0
    for seed in sorted(target.seeds.iterdir()):
        if seed.is_file() and not SHA1_NAME.match(seed.name):
            shutil.copy2(seed, merged / seed.name)
            kept += 1
    command = [str(target.fuzzer), "-merge=1", "-timeout=10", "-rss_limit_mb=2048",
               f"-merge_control_file={target.work / 'merge.control'}", str(merged), str(target.work / "corpus")]
    with open(target.log, "a") as log:
        log.write(f"\n### merge: {' '.join(command)}\n")
        log.flush()
        merge = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, cwd=target.work)
    if merge.returncode != 0:
        raise RuntimeError(f"{target.name}: the merge failed (exit {merge.returncode}, see {target.log})")
    old_cov = coverage(target.fuzzer, target.seeds, target.work, target.log)
    new_cov = coverage(target.fuzzer, merged, target.work, target.log)
    result = {"named_seeds_kept": kept, "cov_before": old_cov[0], "ft_before": old_cov[1],
              "cov": new_cov[0], "ft": new_cov[1]}
    result["files_before"], result["bytes_before"] = corpus_stats(target.seeds)
    result["files_after"], result["bytes_after"] = corpus_stats(merged)
    if new_cov[0] < old_cov[0] or new_cov[1] < old_cov[1]:
        result["replaced"] = False
        result["why"] = "the merged corpus covers less than the committed one"
    elif not replace:
        result["replaced"] = False
        result["why"] = "--no-replace"
    else:
        for old in target.seeds.iterdir():
            if old.is_file():
                old.unlink()
        for new in merged.iterdir():
            shutil.copy2(new, target.seeds / new.name)
        result["replaced"] = True
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seconds", type=float, help="CPU seconds of fuzzing per target")
    parser.add_argument("targets", nargs="*", help=f"targets (default: all of {', '.join(TARGETS)})")
    parser.add_argument("--build", default="build/fuzz", help="the fuzz preset's build directory")
    parser.add_argument("--source", default=str(Path(__file__).resolve().parent.parent), help="the source tree")
    parser.add_argument("--wall-limit", type=float, default=float("inf"),
                        help="stop every target after this many wall seconds, CPU time reached or not")
    parser.add_argument("--max-crashes", type=int, default=10,
                        help="stop a target after this many crashes (default 10)")
    parser.add_argument("--no-replace", action="store_true",
                        help="merge and report, but leave fuzz/corpus/ alone")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    args.t0 = time.monotonic()
    if args.wall_limit == float("inf"):
        args.wall_limit = 10 ** 8

    source = Path(args.source)
    build = Path(args.build).resolve()
    names = args.targets or TARGETS
    for name in names:
        if name not in TARGETS:
            parser.error(f"unknown target {name} (one of {', '.join(TARGETS)})")
    artifacts = build / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    before = {p.name for p in artifacts.iterdir()}
    campaign = build / "campaign"

    targets = []
    for name in names:
        work = campaign / name
        shutil.rmtree(work, ignore_errors=True)
        (work / "corpus").mkdir(parents=True)
        seeds = source / "fuzz" / "corpus" / name
        for seed in seeds.iterdir():
            if seed.is_file():
                shutil.copy2(seed, work / "corpus" / seed.name)
        target = Target(name, build / "fuzz" / name, seeds, source / "fuzz" / "dict" / f"{name}.dict",
                        work, work / "fuzz.log")
        target.max_crashes = args.max_crashes
        if not target.fuzzer.exists():
            sys.exit(f"fuzz.sh: no {target.fuzzer}; build the fuzz preset first")
        targets.append(target)

    print(f"fuzzing {', '.join(names)} for {args.seconds:g} CPU seconds each, side by side; "
          f"logs in {campaign}/<target>/fuzz.log", flush=True)
    for target in targets:
        start(target, args, artifacts)

    def stop_all(signum, frame):
        for t in targets:
            if t.process and t.process.returncode is None:
                try:
                    os.kill(t.process.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        for t in targets:
            t.note = "stopped by the user"
            t.max_crashes = 0
    signal.signal(signal.SIGINT, stop_all)
    signal.signal(signal.SIGTERM, stop_all)

    last_report = time.monotonic()
    while not all(t.done for t in targets):
        time.sleep(0.5)
        for target in targets:
            if target.done:
                continue
            if not reap(target):
                cpu = cpu_seconds(target.process.pid)
                if cpu is not None:
                    target.last_cpu = cpu
                wall = time.monotonic() - args.t0
                if not target.stopped and (target.cpu + target.last_cpu >= args.seconds or wall >= args.wall_limit):
                    os.kill(target.process.pid, signal.SIGINT)
                    target.stopped = True
                    if wall >= args.wall_limit and target.cpu + target.last_cpu < args.seconds:
                        target.note = f"stopped by --wall-limit at {target.cpu + target.last_cpu:.0f} CPU s"
                continue
            again = finish_run(target, artifacts, before)
            left = args.seconds - target.cpu
            if again and left > 1 and time.monotonic() - args.t0 < args.wall_limit - 1:
                start(target, args, artifacts)
            else:
                target.done = True
        if time.monotonic() - last_report >= 300:
            last_report = time.monotonic()
            print(time.strftime("%H:%M:%S ") + "; ".join(
                f"{t.name} {t.cpu + (0 if t.done else t.last_cpu):.0f} CPU s" + (" done" if t.done else "")
                for t in targets), flush=True)

    failed = False
    for target in targets:
        try:
            target.result = minimise(target, not args.no_replace)
        except RuntimeError as error:
            print(f"fuzz.sh: {error}", file=sys.stderr)
            target.result = {"replaced": False, "why": str(error)}
            failed = True

    rows = []
    print()
    print("| target | CPU s | executions | cov/ft before | cov/ft merged | corpus files before -> after "
          "| bytes before -> after | crashes |")
    print("|---|---|---|---|---|---|---|---|")
    for t in targets:
        r = t.result
        row = {"target": t.name, "cpu_seconds": round(t.cpu, 1), "executions": t.executions, "runs": t.runs,
               "crashes": t.crashes, "note": t.note, **r}
        rows.append(row)
        merged = f"{r.get('cov', '?')}/{r.get('ft', '?')}"
        print(f"| {t.name} | {t.cpu:.0f} | {t.executions:,} | {r.get('cov_before', '?')}/{r.get('ft_before', '?')} "
              f"| {merged} | {r.get('files_before', '?')} -> {r.get('files_after', '?')} "
              f"| {r.get('bytes_before', '?')} -> {r.get('bytes_after', '?')} | {len(t.crashes)} |")
    for t in targets:
        r = t.result
        if t.note:
            print(f"{t.name}: {t.note}")
        if not r.get("replaced"):
            print(f"{t.name}: fuzz/corpus/{t.name}/ left as it was: {r.get('why')}")
        for crash in t.crashes:
            print(f"{t.name}: found {crash} (in {artifacts})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    if any(t.crashes for t in targets):
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
