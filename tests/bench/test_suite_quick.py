#!/usr/bin/env python3
"""CI smoke test of the benchmark suite (bench/suite/run_suite.py --quick).

Runs the quick suite into a temporary directory with the given Python (the one
with matplotlib, normally .venv/bin/python) and checks that every output is
produced and sane. It never checks speed: only that figures exist, parse, and
are positive and finite. It also runs the suite (no experiment) under a Python
that can't import matplotlib, which must say so. Uses the standard library only.

    python3 tests/bench/test_suite_quick.py --python .venv/bin/python --paes build/release/paes

Exit 77 (ctest: skipped) with the reason printed when the Python lacks
matplotlib or the paes binary is missing.
"""

import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import run_unittest  # noqa: E402
from harness.bench_scripts import BenchScriptChecks  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "bench" / "suite" / "run_suite.py"
ARGS = None
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REQUIRED_FIELDS = ("mode", "direction", "key_bits", "engine", "threads", "bytes", "seconds", "gbps")
MACHINE_FIELDS = ("cpu_model", "online_cpus", "aes_features", "openssl_version", "compiler", "kernel",
                  "mem_total_bytes", "page_cache")
EXPERIMENTS = "abcdef"
SEED_WORDS = {"a": "thesis tables 5.1", "b": "Bielecki", "c": "PolarSSL", "d": "thesis tables 5.3", "e": "thesis table 5.9",
              "f": "openssl"}


class QuickSuite(BenchScriptChecks, unittest.TestCase):
    out = None
    proc = None
    wall = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="paes-suite-test.")
        cls.out = Path(cls.tmp.name) / "out"
        cmd = [ARGS.python, str(SUITE), "--quick", "--out", str(cls.out), "--paes", ARGS.paes]
        work = Path(cls.tmp.name) / "work"
        work.mkdir()
        cmd += ["--work-dir", str(work)]
        print("running:", " ".join(cmd), flush=True)
        t0 = time.time()
        cls.proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=ARGS.timeout)
        cls.wall = time.time() - t0
        print(cls.proc.stdout[-6000:], flush=True)
        print(f"quick suite: exit {cls.proc.returncode} in {cls.wall:.1f} s", flush=True)
        cls.doc = None
        if (cls.out / "results.json").is_file():
            cls.doc = json.loads((cls.out / "results.json").read_text())
        # the scratch directory must be gone (the suite removes its work files)
        cls.leftovers = [p.name for p in work.iterdir()]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_files_exist(self):
        for name in ("results.json", "results.csv", "tables.md"):
            p = self.out / name
            self.assertTrue(p.is_file(), f"{name} missing")
            self.assertGreater(p.stat().st_size, 0, f"{name} empty")

    def test_pngs(self):
        self.assertIsNotNone(self.doc)
        plots = self.doc.get("plots", [])
        names = {p["file"] for p in plots}
        for required in ("threads_time.png", "threads_throughput.png", "threads_speedup.png", "sizes_throughput.png",
                         "mpi_ranks.png", "peers.png"):
            if required == "mpi_ranks.png" and self.experiment("d")["status"] != "run":
                continue
            self.assertIn(required, names)
        pngs = list(self.out.glob("*.png"))
        self.assertGreaterEqual(len(pngs), 5)
        for p in plots:
            self.assertTrue(p.get("mirrors"), f"plot {p['file']} names no seed figure")
            path = self.out / p["file"]
            self.assertTrue(path.is_file(), f"{p['file']} missing")
            data = path.read_bytes()
            self.assertGreater(len(data), 1000, f"{p['file']} is too small to be a plot")
            self.assertEqual(data[:8], PNG_MAGIC, f"{p['file']} is not a PNG")

    def test_machine_description(self):
        m = self.doc["machine"]
        for k in MACHINE_FIELDS:
            self.assertIn(k, m)
            self.assertNotIn(m[k], (None, ""), f"machine field {k} is empty")
        self.assertGreaterEqual(m["online_cpus"], 1)
        self.assertIsInstance(m["aes_features"], dict)
        self.assertIn("aes_ni", m["aes_features"])
        self.assertIn("OpenSSL", m["openssl_version"])
        run = self.doc["run"]
        self.assertTrue(run["quick"])
        self.assertIn("command_line", run)
        self.assertIn("date", run)
        self.assertIn("page_cache", run)
        self.assertGreaterEqual(run["runs_per_figure"], 3)

    def experiment(self, eid):
        for e in self.doc["experiments"]:
            if e["id"] == eid:
                return e
        self.fail(f"experiment {eid} missing from results.json")

    def test_experiments_name_their_seeds(self):
        tables = (self.out / "tables.md").read_text()
        for eid in EXPERIMENTS:
            e = self.experiment(eid)
            self.assertIn(SEED_WORDS[eid].lower(), e["seed"].lower(), f"experiment {eid} seed: {e['seed']}")
            self.assertIn(e["status"], ("run", "skipped", "not run"), f"experiment {eid}: {e}")
            if e["status"] != "run":
                self.assertTrue(e.get("reason"), f"experiment {eid} not run without a reason")
            self.assertIn(f"## {eid}. ", tables)
            self.assertIn(e["seed"], tables)
        for eid in "abcf":
            self.assertEqual(self.experiment(eid)["status"], "run")
        # GPU: never faked
        e = self.experiment("e")
        if e["status"] != "run":
            self.assertFalse([r for r in self.doc["records"] if r.get("experiment") == "e"])
            self.assertIn("NOT RUN", tables)

    def test_records(self):
        recs = self.doc["records"]
        self.assertGreater(len(recs), 20)
        for r in recs:
            for k in REQUIRED_FIELDS:
                self.assertIn(k, r, f"record lacks {k}: {r}")
            self.assertTrue(r.get("seed"), r)
            for k in ("seconds", "gbps"):
                self.assertIsInstance(r[k], (int, float))
                self.assertTrue(math.isfinite(r[k]), r)
            self.assertGreater(r["seconds"], 0, r)
            self.assertGreater(r["gbps"], 0, r)
            self.assertLess(r["gbps"], 1000, r)
            self.assertGreater(r["bytes"], 0, r)
            self.assertGreaterEqual(r["threads"], 1, r)
            if "min_seconds" in r:
                self.assertLessEqual(r["min_seconds"], r["seconds"] * (1 + 1e-9), r)
                self.assertGreaterEqual(r["max_seconds"], r["seconds"] * (1 - 1e-9), r)
            for k in ("speedup", "efficiency"):
                if r.get(k) is not None:
                    self.assertGreater(r[k], 0, r)
                    self.assertTrue(math.isfinite(r[k]), r)
        engines = {r["engine"] for r in recs}
        self.assertIn("openssl", engines)
        self.assertIn("serial", engines)
        self.assertIn("threads", engines)
        kinds = {r.get("kind") for r in recs}
        self.assertIn("compute", kinds)
        self.assertIn("whole-program", kinds)
        # experiment a covers every mode of the issue, both key sizes, 1..N and 2N threads
        a = [r for r in recs if r.get("experiment") == "a"]
        got = {(r["mode"], r["direction"], r["key_bits"]) for r in a}
        for mode, d in (("ctr", "encrypt"), ("ecb", "encrypt"), ("cbc", "decrypt"), ("sealed", "encrypt"),
                        ("sealed", "decrypt")):
            for bits in (128, 256):
                self.assertIn((mode, d, bits), got)
        n = self.doc["machine"]["online_cpus"]
        threads = {r["threads"] for r in a if r["engine"] == "threads"}
        self.assertIn(1, threads)
        self.assertIn(n, threads)
        self.assertIn(2 * n, threads)
        # whole-program and compute-only at the file sizes; peers include openssl enc
        self.assertTrue([r for r in recs if r.get("experiment") == "c" and r.get("kind") == "whole-program"])
        self.assertTrue([r for r in recs if r.get("experiment") == "c" and r.get("kind") == "compute"])
        tools = {r.get("tool") for r in recs if r.get("experiment") == "f"}
        for t in ("openssl enc", "cp", "cat", "paes", "openssl speed"):
            self.assertIn(t, tools)

    def test_derived(self):
        d = self.doc["derived"]
        rows = d["bielecki_table1"]
        self.assertTrue(rows)
        for row in rows:
            for k, v in row.items():
                if "speedup" in k and v is not None:
                    self.assertGreater(v, 0, row)
            f = row.get("amdahl_serial_fraction")
            if f is not None:
                self.assertTrue(math.isfinite(f), row)
        self.assertTrue(d["peer_ratios"])
        for x in d["peer_ratios"]:
            self.assertGreater(x["time_ratio"], 0)

    def test_csv(self):
        with open(self.out / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), len(self.doc["records"]))
        for k in REQUIRED_FIELDS:
            self.assertIn(k, rows[0])
        for row in rows:
            self.assertGreater(float(row["seconds"]), 0)
            self.assertGreater(float(row["gbps"]), 0)


class WithoutMatplotlib(unittest.TestCase):
    """Under a Python that can't import matplotlib, the suite says at once, on stderr, that it draws no plots,
    which Python that is and where one with matplotlib comes from (issue 32: it said nothing and wrote none)."""

    def test_says_plots_are_skipped(self):
        with tempfile.TemporaryDirectory(prefix="paes-suite-test.") as tmp:
            # Any Python lacks matplotlib with this first on its path, whether or not it has one.
            hidden = Path(tmp) / "hidden"
            hidden.mkdir()
            (hidden / "matplotlib.py").write_text('raise ImportError("hidden by test_suite_quick.py")\n')
            path = [str(hidden), os.environ.get("PYTHONPATH")]
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, path)))
            out, work = Path(tmp) / "out", Path(tmp) / "work"
            work.mkdir()
            # --only with no experiment's id: the machine description and the report, nothing measured.
            proc = subprocess.run([sys.executable, str(SUITE), "--quick", "--only", "none", "--out", str(out),
                                   "--paes", ARGS.paes, "--work-dir", str(work)],
                                  capture_output=True, text=True, env=env, timeout=120)
            self.assertEqual(proc.returncode, 0, proc.stderr[-3000:])
            said = [line for line in proc.stderr.splitlines() if "matplotlib" in line]
            self.assertEqual(len(said), 1, proc.stderr)
            for words in ("plots skipped", f"not importable by {sys.executable} ", "scripts/setup.sh",
                          str(ROOT / ".venv" / "bin" / "python")):
                self.assertIn(words, said[0])
            self.assertEqual(list(out.glob("*.png")), [])


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=str(ROOT / ".venv" / "bin" / "python"),
                    help="the Python that runs the suite (needs matplotlib)")
    ap.add_argument("--paes", default=str(ROOT / "build" / "release" / "paes"))
    ap.add_argument("--timeout", type=int, default=600, help="seconds the quick suite may take")
    ARGS, rest = ap.parse_known_args()
    if not Path(ARGS.python).exists():
        print(f"SKIPPED: {ARGS.python} does not exist (scripts/setup.sh creates .venv)")
        sys.exit(77)
    r = subprocess.run([ARGS.python, "-c", "import matplotlib"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        print(f"SKIPPED: {ARGS.python} has no matplotlib ({r.stdout.strip().splitlines()[-1] if r.stdout.strip() else 'import failed'}); "
              f"install it: {ARGS.python} -m pip install matplotlib")
        sys.exit(77)
    if not os.access(ARGS.paes, os.X_OK):
        print(f"SKIPPED: {ARGS.paes} is not an executable paes binary")
        sys.exit(77)
    sys.exit(run_unittest(rest))


if __name__ == "__main__":
    main()
