#!/usr/bin/env python3
"""paes benchmark suite: the seeds' experiments, paes' peers, tables and plots.

One command measures this machine and writes docs/benchmarks/<machine>/:

    .venv/bin/python bench/suite/run_suite.py [--quick] [--out DIR] [--paes PATH]

Outputs: results.json (every record plus a machine description), results.csv
(flat rows), tables.md (one Markdown section per experiment, each naming the
seed table or figure it mirrors) and PNG plots (matplotlib, Agg backend).
The work is done by the package paes_bench/ beside this file: one module per
experiment (exp_a_threads.py ... exp_f_peers.py), runner.py (running and
timing commands), report.py and plots.py (the outputs).

Experiments (../shared/seeds/):
  a  threads sweep 1..N and 2N, in memory       thesis tables 5.1/5.2/5.5/5.6, figs 5.1/5.2/5.5/5.6
  b  compute vs whole-program speed-up, Amdahl  Bielecki & Burak, table 1
  c  file sizes: whole-program and compute-only PolarSSL slides; dual-core paper table 1/2; thesis sizes
  d  MPI ranks x threads on a file              thesis tables 5.3/5.4/5.7/5.8
  e  GPU work-size sweep                        thesis table 5.9 (recorded as not run without a GPU engine)
  f  peers on the same files                    openssl enc, age, gpg, cp, cat, openssl speed

Every timing is the median of --runs runs (5 by default, 3 with --quick) after
one warm-up run, with min and max. The page cache is warm: every input file is
read once before it is timed, and outputs are deleted (then `sync`) between
runs, outside the timing. Nothing here checks speed; it only measures.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from paes_bench.suite import Suite  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--quick", action="store_true", help="small sizes and 3 runs per figure (< 2 minutes): a smoke run")
    ap.add_argument("--out", help="output directory (default docs/benchmarks/<machine>/)")
    ap.add_argument("--paes", default=str(ROOT / "build" / "release" / "paes"), help="the paes binary")
    ap.add_argument("--work-dir", help="where the scratch files go (default $TMPDIR or /tmp)")
    ap.add_argument("--runs", type=int, help="timed runs per figure (default 5; 3 with --quick)")
    ap.add_argument("--only", help="comma-separated experiments to run, e.g. a,f (the others are recorded as not run)")
    ap.add_argument("--keep-work", action="store_true", help="keep the scratch directory")
    args = ap.parse_args()
    if args.runs is not None and args.runs < 1:
        ap.error("--runs must be >= 1")
    # Said before the minutes of measuring, not only in results.json after them: a system
    # python3 runs everything else and would end without a plot.
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        print(f"run_suite.py: plots skipped: matplotlib is not importable by {sys.executable} ({e}); "
              f"scripts/setup.sh makes {ROOT / '.venv' / 'bin' / 'python'}, which has it", file=sys.stderr, flush=True)
    sys.exit(Suite(args).run())


if __name__ == "__main__":
    main()
