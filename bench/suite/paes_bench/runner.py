"""Running commands and timing them: the one timing harness of bench/.

The suite's experiments time whole programs with measure() (round-robin over
the candidates of a figure); the shell scripts bench/*.sh time one command at a
time through this file's command line (bench/lib.sh `measure`; it imports
nothing from the package, so it runs as a plain script):

    python3 bench/suite/paes_bench/runner.py --runs 5 --delete OUT -- COMMAND...

prints "MEDIAN MIN MAX" in seconds. Either way: one warm-up run, then `runs`
timed runs; the output is deleted and `sync` runs before every run, outside the
timing; the figure is the median (median()), with min and max.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

MIB = 1024 * 1024


def log(msg):
    print(f"[suite {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def median(values):
    """The median of a list of timings: the middle one, or the mean of the two middle ones."""
    return statistics.median(values)


def summarize(times):
    return {
        "seconds": median(times),
        "min_seconds": min(times),
        "max_seconds": max(times),
        "runs": len(times),
        "all_seconds": [round(t, 6) for t in times],
    }


def run_text(argv, **kw):
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60, **kw)
        return r.stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unavailable ({e})"


class CommandFailed(RuntimeError):
    pass


def run_checked(argv, *, stdin=None, stdout=subprocess.PIPE, env=None, timeout=900, retries=5):
    """Runs argv; retries when the binary is being rebuilt (text file busy)."""
    for attempt in range(retries + 1):
        try:
            r = subprocess.run(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=env, timeout=timeout)
        except OSError as e:
            if e.errno == 26 and attempt < retries:
                time.sleep(2)
                continue
            raise CommandFailed(f"{shlex.join(map(str, argv))}: {e}") from e
        err = r.stderr.decode(errors="replace") if r.stderr else ""
        if r.returncode != 0:
            if "Text file busy" in err and attempt < retries:
                time.sleep(2)
                continue
            raise CommandFailed(f"{shlex.join(map(str, argv))}: exit {r.returncode}: {err.strip()[-800:]}")
        return r
    raise CommandFailed(f"{argv}: gave up")


def unlink(path):
    if path:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def warm(*paths):
    """Reads files once in full, so that their timed reads come from the page cache."""
    for p in paths:
        with open(p, "rb") as f:
            while f.read(16 * MIB):
                pass


def measure(cands, runs, alternate=False):
    """Wall time of whole programs, round-robin: one warm-up round, then `runs` rounds, one run of each
    candidate per round, so that a drift of the (shared) machine weighs on all of them alike; with
    `alternate`, every other round runs them in the reverse order, so that none always runs first. Outputs are
    deleted and `sync` runs before every run, outside the timing; the inputs are read once beforehand.
    A candidate is a dict: argv, src (the input to warm), out (deleted between runs), parse_json (read
    paes' --json line), stdout (where the command's output goes) and rec (the record to fill in); and,
    optionally, prepare: a callable run before each of its runs (and after the last), outside the timing,
    for outputs that one path does not name (a data set's files). Returns the records, in the order of
    the candidates."""
    warm(*{str(c["src"]) for c in cands})
    times = [[] for _ in cands]
    reported = [[] for _ in cands]
    last = [None for _ in cands]
    for i in range(runs + 1):
        order = list(enumerate(cands))
        for k, c in (order[::-1] if alternate and i % 2 == 1 else order):
            unlink(c["out"])
            if c.get("prepare"):
                c["prepare"]()
            os.sync()
            t0 = time.perf_counter()
            r = run_checked(c["argv"], stdout=subprocess.PIPE if c["parse_json"] else c["stdout"],
                            stdin=subprocess.DEVNULL)
            t1 = time.perf_counter()
            if i == 0:
                continue
            times[k].append(t1 - t0)
            if c["parse_json"]:
                try:
                    last[k] = json.loads(r.stdout.decode().strip().splitlines()[-1])
                    reported[k].append(float(last[k]["seconds"]))
                except (ValueError, KeyError, IndexError):
                    pass
    out = []
    for k, c in enumerate(cands):
        unlink(c["out"])
        if c.get("prepare"):
            c["prepare"]()
        rec = c["rec"]
        rec.update(summarize(times[k]))
        rec["gbps"] = rec["bytes"] / rec["seconds"] / 1e9
        rec["timing"] = f"round-robin with {len(cands) - 1} other command(s)" if len(cands) > 1 else "alone"
        if reported[k]:
            rec["paes_reported_seconds"] = median(reported[k])
        if last[k] and "ranks" in last[k]:
            rec["rank_detail"] = last[k]["ranks"]
        if last[k] and "backend" in last[k]:  # what ran the AES: --engine auto's choice, or a GPU
            rec["backend"] = last[k]["backend"]
        out.append(rec)
    return out


def main():
    """One command, timed for bench/lib.sh: its own output goes to stderr, the figures to stdout."""
    ap = argparse.ArgumentParser(description="Time one command: a warm-up run, then --runs timed runs.")
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--delete", help="a file to delete (then sync) before every run, outside the timing")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- COMMAND...")
    args = ap.parse_args()
    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv or args.runs < 1:
        ap.error("give --runs N (>= 1) and -- COMMAND...")
    times = []
    for i in range(args.runs + 1):
        unlink(args.delete)
        os.sync()
        t0 = time.perf_counter()
        r = subprocess.run(argv, stdout=sys.stderr)
        t1 = time.perf_counter()
        if r.returncode != 0:
            sys.exit(f"{shlex.join(argv)}: exit {r.returncode}")
        if i > 0:
            times.append(t1 - t0)
    s = summarize(times)
    print(f"{s['seconds']:.3f} {s['min_seconds']:.3f} {s['max_seconds']:.3f}")


if __name__ == "__main__":
    main()
