"""One run of the suite: its profile, scratch files and keys, the records, and the driver over the experiments.

An experiment (exp_*.py) gets the Suite and uses its helpers: make_file() for a random input in the page
cache, bench() for `paes bench` (compute only), paes_cand()/cand() and measure() for whole programs.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import machine, report

# The MPI launchers' layer the mpi tests use (tests/mpi/launchers.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "mpi"))
import launchers  # noqa: E402
from .experiments import EXPERIMENTS
from .runner import CommandFailed, log, run_checked
from .runner import measure as time_commands
from .units import GIB, KIB, MIB, human

PROFILES = {
    "full": {
        "runs": 5,
        "sweep_bytes": 256 * MIB,          # experiments a and b, and the peers' file
        "sweep_key_bits": [128, 256],
        "polarssl": [2 * KIB, 10 * KIB, 50 * KIB, 100 * KIB, 500 * KIB, 1 * MIB, 10 * MIB, 50 * MIB, 100 * MIB],
        "dual": [k * 1000 * KIB for k in range(1, 7)],
        "thesis_mb": [107, 207, 654, 1080],
        "thesis_scale": 1.0,               # scaled down further when memory is short
        "mpi_ranks": [1, 2, 4],
        "mpi_file": "thesis-largest",
        "speed_seconds": 1,
        "speed_algos": ["aes-128-ctr", "aes-256-ctr", "aes-256-gcm"],
    },
    "quick": {
        "runs": 3,
        "sweep_bytes": 16 * MIB,
        "sweep_key_bits": [128, 256],
        "polarssl": [2 * KIB, 100 * KIB, 2 * MIB],
        "dual": [1000 * KIB, 3000 * KIB, 6000 * KIB],
        "thesis_mb": [107, 207, 654, 1080],
        "thesis_scale": 1.0 / 64,
        "mpi_ranks": [1, 2],
        "mpi_file": "sweep",
        "speed_seconds": 1,
        "speed_algos": ["aes-256-ctr"],
    },
}


def seed(exp):
    return EXPERIMENTS[exp].SEED


class Suite:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.p = dict(PROFILES["quick" if args.quick else "full"])
        if args.runs:
            self.p["runs"] = args.runs
        self.runs = self.p["runs"]
        self.records = []
        self.experiments = {}
        self.notes = []
        self.t_start = time.time()
        self.ncpu = machine.online_cpus()

    def setup(self):
        base = self.args.work_dir or os.environ.get("TMPDIR") or "/tmp"
        self.work = Path(tempfile.mkdtemp(prefix="paes-suite.", dir=base))
        src = Path(self.args.paes).resolve()
        if not src.is_file():
            sys.exit(f"run_suite: {src} not found: build paes first (cmake --preset release && cmake --build --preset release)")
        # A private copy, so that a rebuild during the run neither breaks nor changes it,
        # with paes-mpi beside it where it was built (paes hands --engine mpi to it).
        self.paes = str(self.work / "paes")
        for attempt in range(10):
            try:
                shutil.copy2(src, self.paes)
                if (src.parent / "paes-mpi").is_file():
                    shutil.copy2(src.parent / "paes-mpi", self.work / "paes-mpi")
                run_checked([self.paes, "--version"])
                break
            except (OSError, CommandFailed):
                if attempt == 9:
                    raise
                time.sleep(3)
        self.paes_src = str(src)
        self.info = json.loads(run_checked([self.paes, "info", "--json"]).stdout)
        self.engines = self.info.get("engines", "").split()
        # The launcher of the MPI this paes-mpi links: $MPIEXEC, else the one its build tree
        # found; another MPI's would start each rank as a job of its own.
        self.mpi_launcher, self.mpi_launcher_why = None, "this paes was built without the mpi engine"
        if "mpi" in self.engines:
            mpiexec = os.environ.get("MPIEXEC") or launchers.build_mpiexec(src.parent)
            try:
                self.mpi_launcher = launchers.Launcher(mpiexec) if mpiexec else None
                self.mpi_launcher_why = f"no launcher in {src.parent}/CMakeCache.txt: set MPIEXEC"
            except (OSError, launchers.Unsupported) as e:
                self.mpi_launcher_why = f"launcher {mpiexec}: {e}"
        # threads: 1..N (powers of two and N), then 2N for oversubscription
        counts = sorted({1, self.ncpu} | {2 ** k for k in range(0, 16) if 2 ** k <= self.ncpu})
        self.thread_counts = counts + [2 * self.ncpu]
        self.machine = machine.describe(self.ncpu, self.info, self.paes_src, self.work, self.mpi_launcher)
        mem_avail = self.machine["mem_available_bytes"] or 0
        scale = self.p["thesis_scale"]
        if mem_avail and mem_avail < 8 * GIB:
            scale *= mem_avail / (8 * GIB)
            self.notes.append(f"MemAvailable {mem_avail / GIB:.1f} GiB < 8 GiB: thesis sizes scaled by {scale:.3f}")
        self.thesis_scale = scale
        self.thesis_sizes = [(mb, max(16, int(mb * MIB * scale) // 16 * 16)) for mb in self.p["thesis_mb"]]
        self.key = self.work / "key"
        run_checked([self.paes, "keygen", "-o", str(self.key)])
        self.key_hex = self.key.read_text().strip()
        self.iv = "000102030405060708090a0b0c0d0e0f"
        self.pool = None
        self.files = {}

    # ---------------------------------------------------------------- files
    def make_file(self, nbytes, name=None):
        """A random file of nbytes (prefix of one random pool), read once so it sits in the page cache."""
        name = name or f"in-{nbytes}.bin"
        path = self.work / name
        if path.exists():
            return path
        if self.pool is None or self.pool_size < nbytes:
            pool = self.work / "pool.bin"
            size = max(nbytes, self.max_file_bytes())
            log(f"generating {human(size)} of random data")
            with open(pool, "wb") as f:
                left = size
                while left:
                    n = min(left, 256 * MIB)
                    f.write(run_checked(["openssl", "rand", str(n)]).stdout)
                    left -= n
            self.pool, self.pool_size = pool, size
        with open(self.pool, "rb") as src, open(path, "wb") as dst:
            left = nbytes
            while left:
                buf = src.read(min(left, 16 * MIB))
                dst.write(buf)
                left -= len(buf)
        return path

    def max_file_bytes(self):
        sizes = [self.p["sweep_bytes"]] + self.p["polarssl"] + self.p["dual"] + [b for _, b in self.thesis_sizes]
        return max(sizes)

    def ciphertexts(self, plain):
        """CTR and sealed ciphertexts of a plaintext file (made once, outside any timing)."""
        key = str(plain)
        if key in self.files:
            return self.files[key]
        ctr = plain.with_suffix(".ctr")
        sealed = plain.with_suffix(".paes")
        run_checked([self.paes, "encrypt", "--mode", "ctr", "--key-file", str(self.key), "--iv", self.iv,
                     "--no-progress", "-f", str(plain), "-o", str(ctr)])
        run_checked([self.paes, "encrypt", "--key-file", str(self.key), "--no-progress", "-f", str(plain), "-o", str(sealed)])
        self.files[key] = {"ctr": ctr, "sealed": sealed}
        return self.files[key]

    def thesis_label(self, nbytes):
        for mb, b in self.thesis_sizes:
            if abs(b - nbytes) <= 64:
                return f"{mb} MB" + ("" if self.thesis_scale == 1 else f" (scaled x{self.thesis_scale:.4g}: {human(b)})")
        return human(nbytes)

    # ---------------------------------------------------------------- measuring
    def measure(self, cands):
        """Times whole programs (runner.measure) and keeps their records."""
        recs = time_commands(cands, self.runs)
        self.records.extend(recs)
        return recs

    def bench(self, *, modes, directions, key_bits, sizes, threads, repeat=None):
        """`paes bench --json`: compute-only records, with speed-ups against the serial engine (not yet kept:
        see add())."""
        argv = [self.paes, "bench", "--json", "--modes", ",".join(modes), "--directions", ",".join(directions),
                "--key-bits", ",".join(map(str, key_bits)), "--size", ",".join(str(s) for s in sizes),
                "--thread-counts", ",".join(map(str, threads)), "--repeat", str(repeat or self.runs)]
        log("paes bench " + " ".join(argv[2:]))
        recs = json.loads(run_checked(argv, timeout=1800).stdout)
        for r in recs:
            r["kind"] = "compute"
            r["runs"] = r.get("repeat")
            r["command"] = shlex.join(["paes"] + argv[1:])
        report.add_speedups(recs, base_engine="serial")
        return recs

    def add(self, exp, recs):
        for r in recs:
            r["experiment"] = exp
            r["seed"] = seed(exp)
        self.records.extend(recs)

    def cand(self, *, exp, tool, mode, direction, key_bits, engine, threads, nbytes, argv, src, out,
             parse_json=False, stdout=subprocess.DEVNULL, extra=None):
        """A whole-program command to time with measure()."""
        rec = {
            "experiment": exp, "seed": seed(exp), "kind": "whole-program", "tool": tool, "mode": mode,
            "direction": direction, "key_bits": key_bits, "engine": engine, "threads": threads, "bytes": nbytes,
            "command": shlex.join(str(a) for a in argv),
        }
        rec.update(extra or {})
        return {"argv": [str(a) for a in argv], "src": src, "out": out, "parse_json": parse_json, "stdout": stdout,
                "rec": rec}

    def mpi_prefix(self, ranks):
        """The words that start `ranks` ranks of a command under this paes-mpi's launcher."""
        return launchers.prefix(self.mpi_launcher, ranks)

    def paes_cand(self, exp, mode, direction, plain, engine, threads, launcher=(), ranks=None, extra=None):
        """`paes encrypt|decrypt` on a file (whole program), AES-256; bytes is the plaintext size."""
        ct = self.ciphertexts(plain)
        src = plain if direction == "encrypt" else ct[mode]
        out = self.work / "out.bin"
        argv = list(launcher) + [self.paes, direction, "--key-file", str(self.key), "--no-progress", "--json",
                                 "--engine", engine]
        if mode == "ctr":
            argv += ["--mode", "ctr", "--iv", self.iv]
        if engine != "serial":
            argv += ["--threads", str(threads)]
        argv += [str(src), "-o", str(out)]
        x = {"ranks": ranks, "threads_per_rank": threads} if ranks else {}
        x["input_bytes"] = src.stat().st_size
        x.update(extra or {})
        return self.cand(exp=exp, tool="paes", mode=mode, direction=direction, key_bits=256, engine=engine,
                         threads=threads * (ranks or 1), nbytes=plain.stat().st_size, argv=argv, src=src, out=out,
                         parse_json=True, extra=x)

    # ---------------------------------------------------------------- driver
    def run(self):
        self.setup()
        log(f"work dir {self.work}; machine {self.machine['slug']}; threads {self.thread_counts}; "
            f"{'quick' if self.quick else 'full'} run, {self.runs} runs per figure")
        only = set(self.args.only.split(",")) if self.args.only else set(EXPERIMENTS)
        try:
            for exp, module in EXPERIMENTS.items():
                if exp not in only:
                    self.experiments[exp] = {"status": "not run", "reason": "left out with --only"}
                    continue
                t0 = time.time()
                log(f"experiment {exp}: {module.TITLE}")
                try:
                    self.experiments[exp] = module.run(self)
                except CommandFailed as e:
                    self.experiments[exp] = {"status": "failed", "reason": str(e)[-1000:]}
                    log(f"experiment {exp} failed: {e}")
                self.experiments[exp]["wall_seconds"] = round(time.time() - t0, 1)
                log(f"experiment {exp}: {self.experiments[exp]['status']} in {time.time() - t0:.1f} s")
        finally:
            if not self.args.keep_work:
                shutil.rmtree(self.work, ignore_errors=True)
        for exp in self.experiments:
            self.experiments[exp]["id"] = exp
            self.experiments[exp]["title"] = EXPERIMENTS[exp].TITLE
            self.experiments[exp]["seed"] = EXPERIMENTS[exp].SEED
        return report.write(self)

