#!/usr/bin/env python3
"""paes benchmark suite: the seeds' experiments, paes' peers, tables and plots.

One command measures this machine and writes docs/benchmarks/<machine>/:

    .venv/bin/python bench/suite/run_suite.py [--quick] [--out DIR] [--paes PATH]

Outputs: results.json (every record plus a machine description), results.csv
(flat rows), tables.md (one Markdown section per experiment, each naming the
seed table or figure it mirrors) and PNG plots (matplotlib, Agg backend).

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
import csv
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KIB = 1024
MIB = 1024 * 1024
GIB = 1024 * MIB

SEEDS = {
    "a": "thesis tables 5.1, 5.2, 5.5, 5.6 and figures 5.1, 5.2, 5.5, 5.6 "
         "(execution time, throughput, speed-up and efficiency against threads)",
    "b": "Bielecki & Burak (Rijndael loop parallelization paper), table 1 "
         "(encryption, decryption and total speed-up; Amdahl serial fraction)",
    "c": "PolarSSL MPI slides (2 KB to 100 MB files), dual-core OpenMP paper tables 1 and 2 "
         "(1000-6000 KB), thesis file sizes 107/207/654/1080 MB (tables 5.1, 5.5)",
    "d": "thesis tables 5.3, 5.4, 5.7, 5.8 and figures 5.3, 5.4, 5.7, 5.8 (processes against file size)",
    "e": "thesis table 5.9 and figure 5.12 (CUDA: GPU threads against file size)",
    "f": "PolarSSL slides' future work (time the entire program), issue 6 peers: "
         "openssl enc, age, gpg --symmetric, cp, cat, openssl speed",
}
TITLES = {
    "a": "Threads sweep in memory (compute only)",
    "b": "Compute-only against whole-program speed-up (Amdahl)",
    "c": "File sizes: whole-program and compute-only",
    "d": "MPI ranks x threads on a file",
    "e": "GPU work-size sweep",
    "f": "Peers on the same files",
}

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


def log(msg):
    print(f"[suite {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def human(n):
    """Bytes as a short label in binary units (K = 1024)."""
    for unit, size in (("G", GIB), ("M", MIB), ("K", KIB)):
        if n >= size:
            v = n / size
            return f"{v:.0f}{unit}" if abs(v - round(v)) < 0.05 else f"{v:.1f}{unit}"
    return f"{n}B"


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


def summarize(times):
    return {
        "seconds": statistics.median(times),
        "min_seconds": min(times),
        "max_seconds": max(times),
        "runs": len(times),
        "all_seconds": [round(t, 6) for t in times],
    }


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
        self.ncpu = os.cpu_count() or 1
        try:
            self.ncpu = len(os.sched_getaffinity(0))
        except AttributeError:
            pass

    # ---------------------------------------------------------------- setup
    def setup(self):
        base = self.args.work_dir or os.environ.get("TMPDIR") or "/tmp"
        self.work = Path(tempfile.mkdtemp(prefix="paes-suite.", dir=base))
        src = Path(self.args.paes).resolve()
        if not src.is_file():
            sys.exit(f"run_suite: {src} not found: build paes first (cmake --preset release && cmake --build --preset release)")
        # A private copy, so that a rebuild during the run neither breaks nor changes it.
        self.paes = str(self.work / "paes")
        for attempt in range(10):
            try:
                shutil.copy2(src, self.paes)
                run_checked([self.paes, "--version"])
                break
            except (OSError, CommandFailed):
                if attempt == 9:
                    raise
                time.sleep(3)
        self.paes_src = str(src)
        self.info = json.loads(run_checked([self.paes, "info", "--json"]).stdout)
        self.engines = self.info.get("engines", "").split()
        # threads: 1..N (powers of two and N), then 2N for oversubscription
        counts = sorted({1, self.ncpu} | {2 ** k for k in range(0, 16) if 2 ** k <= self.ncpu})
        self.thread_counts = counts + [2 * self.ncpu]
        self.machine = self.describe_machine()
        mem_avail = self.machine["mem_available_bytes"] or 0
        scale = self.p["thesis_scale"]
        if mem_avail and mem_avail < 8 * GIB:
            scale *= mem_avail / (8 * GIB)
            self.notes.append(f"MemAvailable {mem_avail / GIB:.1f} GiB < 8 GiB: thesis sizes scaled by {scale:.3f}")
        self.thesis_scale = scale
        self.thesis_sizes = [(mb, max(16, int(mb * MIB * scale) // 16 * 16)) for mb in self.p["thesis_mb"]]
        # keys
        self.key = self.work / "key"
        run_checked([self.paes, "keygen", "-o", str(self.key)])
        self.key_hex = self.key.read_text().strip()
        self.iv = "000102030405060708090a0b0c0d0e0f"
        self.pool = None
        self.files = {}

    def describe_machine(self):
        cpu_model = "unknown"
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        mem = {}
        try:
            for line in open("/proc/meminfo"):
                k, v = line.split(":", 1)
                mem[k] = int(v.split()[0]) * 1024
        except OSError:
            pass
        slug = re.sub(r"\((r|tm|c)\)", "", cpu_model.lower())
        slug = re.sub(r"@.*$", "", slug)
        slug = re.sub(r"\b(cpu|processor|with|radeon graphics|\d+-core)\b", " ", slug)
        slug = re.sub(r"[^a-z0-9]+", "-", slug).strip("-") or "cpu"
        slug = f"{slug}-{self.ncpu}core"
        compiler = self.compiler()
        fs = run_text(["findmnt", "-no", "FSTYPE", "-T", str(self.work)])
        return {
            "slug": slug,
            "cpu_model": cpu_model,
            "online_cpus": self.ncpu,
            "paes_online_cpus": self.info.get("online_cpus"),
            "aes_features": self.info.get("cpu_features", {}),
            "openssl_version": self.info.get("openssl_version") or run_text(["openssl", "version"]),
            "openssl_cli_version": run_text(["openssl", "version"]),
            "paes_version": self.info.get("paes_version"),
            "paes_engines": self.info.get("engines"),
            "openmp": self.info.get("openmp"),
            "compiler": compiler,
            "kernel": f"{platform.system()} {platform.release()}",
            "os": self.os_release(),
            "python": platform.python_version(),
            "mem_total_bytes": mem.get("MemTotal"),
            "mem_available_bytes": mem.get("MemAvailable"),
            "work_dir_filesystem": fs,
            "page_cache": "warm: every input file is read once in full before it is timed; "
                          "outputs are deleted and `sync` runs between runs, outside the timing; "
                          "in-memory figures (paes bench) do no I/O",
            "peers": {
                "age": run_text(["age", "--version"]) if shutil.which("age") else None,
                "gpg": run_text(["gpg", "--version"]).splitlines()[0] if shutil.which("gpg") else None,
                "mpiexec": self.mpi_version(),
            },
        }

    def compiler(self):
        build = Path(self.paes_src).parent
        for f in sorted(build.glob("CMakeFiles/*/CMakeCXXCompiler.cmake")):
            text = f.read_text(errors="replace")
            cid = re.search(r'set\(CMAKE_CXX_COMPILER_ID "([^"]*)"\)', text)
            ver = re.search(r'set\(CMAKE_CXX_COMPILER_VERSION "([^"]*)"\)', text)
            if cid and ver:
                btype = ""
                cache = build / "CMakeCache.txt"
                if cache.is_file():
                    m = re.search(r"^CMAKE_BUILD_TYPE:STRING=(.*)$", cache.read_text(errors="replace"), re.M)
                    btype = f", CMAKE_BUILD_TYPE={m.group(1)}" if m else ""
                return f"{cid.group(1)} {ver.group(1)} (from {f.relative_to(build)}{btype})"
        out = run_text(["c++", "--version"]).splitlines()
        return (out[0] + " (c++ --version; the build's compiler is unknown)") if out else "unknown"

    @staticmethod
    def os_release():
        try:
            for line in open("/etc/os-release"):
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
        except OSError:
            pass
        return platform.platform()

    @staticmethod
    def mpi_version():
        if not shutil.which("mpiexec"):
            return None
        out = run_text(["mpiexec", "--version"])
        m = re.search(r"Version:\s*(\S+)", out)
        if m:
            return f"MPICH (Hydra) {m.group(1)}"
        return out.splitlines()[0] if out else "unknown"

    # ---------------------------------------------------------------- files
    def make_file(self, nbytes, name=None):
        """A random file of nbytes (prefix of one random pool), read once so it sits in the page cache."""
        name = name or f"in-{nbytes}.bin"
        path = self.work / name
        if path.exists():
            return path
        need = nbytes
        if self.pool is None or self.pool_size < need:
            pool = self.work / "pool.bin"
            size = max(need, self.max_file_bytes())
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

    @staticmethod
    def warm(*paths):
        for p in paths:
            with open(p, "rb") as f:
                while f.read(16 * MIB):
                    pass

    # ---------------------------------------------------------------- timing
    def measure(self, cands):
        """Wall time of whole programs, round-robin: one warm-up round, then `runs` rounds, one run of each
        candidate per round, so that a drift of the (shared) machine weighs on all of them alike. Outputs are
        deleted and `sync` runs before every run, outside the timing; the inputs are read once beforehand."""
        self.warm(*{str(c["src"]) for c in cands})
        times = [[] for _ in cands]
        reported = [[] for _ in cands]
        last = [None for _ in cands]
        for i in range(self.runs + 1):
            for k, c in enumerate(cands):
                self.unlink(c["out"])
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
            self.unlink(c["out"])
            rec = c["rec"]
            rec.update(summarize(times[k]))
            rec["gbps"] = rec["bytes"] / rec["seconds"] / 1e9
            rec["timing"] = f"round-robin with {len(cands) - 1} other command(s)" if len(cands) > 1 else "alone"
            if reported[k]:
                rec["paes_reported_seconds"] = statistics.median(reported[k])
            if last[k] and "ranks" in last[k]:
                rec["rank_detail"] = last[k]["ranks"]
            self.records.append(rec)
            out.append(rec)
        return out

    @staticmethod
    def unlink(path):
        if path:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass

    def bench(self, *, modes, directions, key_bits, sizes, threads, repeat=None):
        argv = [self.paes, "bench", "--json", "--modes", ",".join(modes), "--directions", ",".join(directions),
                "--key-bits", ",".join(map(str, key_bits)), "--size", ",".join(str(s) for s in sizes),
                "--thread-counts", ",".join(map(str, threads)), "--repeat", str(repeat or self.runs)]
        log("paes bench " + " ".join(argv[2:]))
        recs = json.loads(run_checked(argv, timeout=1800).stdout)
        for r in recs:
            r["kind"] = "compute"
            r["runs"] = r.get("repeat")
            r["command"] = shlex.join(["paes"] + argv[1:])
        add_speedups(recs, base_engine="serial")
        return recs

    def add(self, exp, recs):
        for r in recs:
            r["experiment"] = exp
            r["seed"] = SEEDS[exp]
        self.records.extend(recs)

    def cand(self, *, exp, tool, mode, direction, key_bits, engine, threads, nbytes, argv, src, out,
             parse_json=False, stdout=subprocess.DEVNULL, extra=None):
        """A whole-program command to time with measure()."""
        rec = {
            "experiment": exp, "seed": SEEDS[exp], "kind": "whole-program", "tool": tool, "mode": mode,
            "direction": direction, "key_bits": key_bits, "engine": engine, "threads": threads, "bytes": nbytes,
            "command": shlex.join(str(a) for a in argv),
        }
        rec.update(extra or {})
        return {"argv": [str(a) for a in argv], "src": src, "out": out, "parse_json": parse_json, "stdout": stdout,
                "rec": rec}

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

    # ---------------------------------------------------------------- experiments
    def exp_a(self):
        size = self.p["sweep_bytes"]
        recs = self.bench(modes=["ctr", "ecb", "sealed"], directions=["encrypt", "decrypt"],
                          key_bits=self.p["sweep_key_bits"], sizes=[size], threads=self.thread_counts)
        # CBC encryption is sequential by construction: the sweep is about CBC decryption.
        recs += self.bench(modes=["cbc"], directions=["decrypt"], key_bits=self.p["sweep_key_bits"], sizes=[size],
                           threads=self.thread_counts)
        self.add("a", recs)
        # the thesis' own axis: threads x thesis file sizes (AES-256 CTR and sealed, encryption)
        recs = self.bench(modes=["ctr", "sealed"], directions=["encrypt"], key_bits=[256],
                          sizes=[b for _, b in self.thesis_sizes], threads=self.thread_counts)
        for r in recs:
            r["series"] = "thesis-sizes"
            r["size_label"] = self.thesis_label(r["bytes"])
        self.add("a", recs)
        self.experiments["a"] = {"status": "run", "buffer_bytes": size,
                                 "notes": "in memory (paes bench): no file I/O; t_serial is the serial engine"}

    def thesis_label(self, nbytes):
        for mb, b in self.thesis_sizes:
            if abs(b - nbytes) <= 64:
                return f"{mb} MB" + ("" if self.thesis_scale == 1 else f" (scaled x{self.thesis_scale:.4g}: {human(b)})")
        return human(nbytes)

    def exp_b(self):
        size = self.p["sweep_bytes"]
        plain = self.make_file(size)
        self.sweep_file = plain
        for mode in ("ctr", "sealed"):
            for direction in ("encrypt", "decrypt"):
                self.measure([self.paes_cand("b", mode, direction, plain, "serial", 1)] +
                             [self.paes_cand("b", mode, direction, plain, "threads", t) for t in self.thread_counts])
        self.experiments["b"] = {"status": "run", "file_bytes": size,
                                 "notes": "compute-only speed-ups come from experiment a (same size, AES-256); "
                                          "whole-program speed-ups time `paes encrypt|decrypt` on the file, "
                                          "serial engine against threads engine"}

    def exp_c(self):
        series = [("polarssl", s) for s in self.p["polarssl"]] + [("dual-core", s) for s in self.p["dual"]] + \
                 [("thesis", b) for _, b in self.thesis_sizes]
        sizes = sorted({s for _, s in series})
        for s in sizes:
            plain = self.make_file(s)
            names = ",".join(n for n, x in series if x == s)
            self.measure([self.paes_cand("c", mode, direction, plain, engine, t, extra={"series": names})
                          for mode in ("ctr", "sealed") for direction in ("encrypt", "decrypt")
                          for engine, t in (("serial", 1), ("threads", self.ncpu))])
            log(f"c: {human(s)} done")
        # compute-only at the same sizes (the thesis sizes come from experiment a's second sweep)
        small = sorted({s for n, s in series if n != "thesis"})
        recs = self.bench(modes=["ctr", "sealed"], directions=["encrypt", "decrypt"], key_bits=[256],
                          sizes=small, threads=[self.ncpu])
        big = self.bench(modes=["ctr", "sealed"], directions=["decrypt"], key_bits=[256],
                         sizes=[b for _, b in self.thesis_sizes], threads=[self.ncpu])
        self.add("c", recs + big)
        self.experiments["c"] = {"status": "run", "sizes": sizes, "thesis_scale": self.thesis_scale,
                                 "notes": "whole-program bytes are the plaintext size in both directions; "
                                          "compute-only encryption at the thesis sizes is in experiment a"}

    def exp_d(self):
        if not shutil.which("mpiexec"):
            self.experiments["d"] = {"status": "skipped", "reason": "mpiexec is not installed (scripts/setup.sh installs MPICH)"}
            return
        if "mpi" not in self.engines:
            self.experiments["d"] = {"status": "skipped",
                                     "reason": f"this paes was built without the mpi engine (paes info engines: {' '.join(self.engines)})"}
            return
        if self.p["mpi_file"] == "thesis-largest":
            mb, size = self.thesis_sizes[-1]
        else:
            mb, size = None, self.p["sweep_bytes"]
        plain = self.make_file(size)
        tcounts = sorted({1, self.ncpu})
        for mode in ("ctr", "sealed"):
            cands = [self.paes_cand("d", mode, "encrypt", plain, "serial", 1, extra={"series": "mpi-baseline"}),
                     self.paes_cand("d", mode, "encrypt", plain, "threads", self.ncpu, extra={"series": "mpi-baseline"})]
            cands += [self.paes_cand("d", mode, "encrypt", plain, "mpi", t, launcher=["mpiexec", "-n", str(ranks)],
                                     ranks=ranks, extra={"series": "mpi", "oversubscribed": ranks * t > self.ncpu})
                      for ranks in self.p["mpi_ranks"] for t in tcounts]
            recs = self.measure(cands)
            base = recs[0]["seconds"]
            for rec in recs:
                rec["speedup"] = base / rec["seconds"]
                rec["efficiency"] = rec["speedup"] / max(1, rec["threads"])
            log(f"d: {mode} done")
        self.experiments["d"] = {"status": "run", "file_bytes": size,
                                 "file_label": f"{mb} MB" if mb else human(size),
                                 "notes": "one machine: ranks share its cores; speed-up S = t(serial engine) / t(ranks x threads), "
                                          "as the thesis' tables 5.4/5.8 divide by the serial time; "
                                          "ranks x threads above the online CPUs are oversubscribed"}

    def exp_e(self):
        gpu = [e for e in self.engines if e in ("cuda", "gpu", "opencl", "hip", "sycl")]
        if not gpu:
            self.experiments["e"] = {"status": "not run",
                                     "reason": f"paes has no GPU engine (paes info engines: {' '.join(self.engines) or 'none'}); "
                                               "no numbers are reported rather than invented"}
        else:
            self.experiments["e"] = {"status": "not run",
                                     "reason": f"paes lists GPU engine(s) {gpu}, but this suite has no driver for a "
                                               "work-size sweep yet"}

    def exp_f(self):
        plain = getattr(self, "sweep_file", None) or self.make_file(self.p["sweep_bytes"])
        size = plain.stat().st_size
        ct = self.ciphertexts(plain)
        out = self.work / "out.bin"
        w = self.work
        skipped = []

        cands = []

        def peer(tool, mode, direction, key_bits, argv, src, stdout=subprocess.DEVNULL):
            cands.append(self.cand(exp="f", tool=tool, mode=mode, direction=direction, key_bits=key_bits, engine=tool,
                                   threads=1, nbytes=size, argv=argv, src=src, out=out, stdout=stdout,
                                   extra={"series": "peers"}))

        peer("cp", "none", "copy", 0, ["cp", str(plain), str(out)], plain)
        peer("cat", "none", "read", 0, ["cat", str(plain)], plain)
        ossl = ["openssl", "enc", "-K", self.key_hex, "-iv", self.iv]
        peer("openssl enc", "ctr", "encrypt", 256, ossl[:2] + ["-aes-256-ctr"] + ossl[2:] + ["-in", str(plain), "-out", str(out)], plain)
        peer("openssl enc", "ctr", "decrypt", 256, ossl[:2] + ["-d", "-aes-256-ctr"] + ossl[2:] + ["-in", str(ct["ctr"]), "-out", str(out)], ct["ctr"])
        cbc = w / "in.cbc"
        run_checked(ossl[:2] + ["-aes-256-cbc"] + ossl[2:] + ["-in", str(plain), "-out", str(cbc)])
        peer("openssl enc", "cbc", "encrypt", 256, ossl[:2] + ["-aes-256-cbc"] + ossl[2:] + ["-in", str(plain), "-out", str(out)], plain)
        peer("openssl enc", "cbc", "decrypt", 256, ossl[:2] + ["-d", "-aes-256-cbc"] + ossl[2:] + ["-in", str(cbc), "-out", str(out)], cbc)
        if shutil.which("age") and shutil.which("age-keygen"):
            ident = w / "age.id"
            run_checked(["age-keygen", "-o", str(ident)])
            recipient = run_checked(["age-keygen", "-y", str(ident)]).stdout.decode().strip()
            aged = w / "in.age"
            run_checked(["age", "-e", "-r", recipient, "-o", str(aged), str(plain)])
            peer("age", "chacha20-poly1305", "encrypt", 256, ["age", "-e", "-r", recipient, "-o", str(out), str(plain)], plain)
            peer("age", "chacha20-poly1305", "decrypt", 256, ["age", "-d", "-i", str(ident), "-o", str(out), str(aged)], aged)
        else:
            skipped.append("age: not installed")
        home = w / "gnupg"
        if shutil.which("gpg"):
            home.mkdir(mode=0o700, exist_ok=True)
            pf = w / "passphrase"
            pf.write_text("paes-suite benchmark passphrase\n")
            g = ["gpg", "--homedir", str(home), "--batch", "--yes", "--no-symkey-cache", "--passphrase-file", str(pf),
                 "--pinentry-mode", "loopback"]
            gpgd = w / "in.gpg"
            try:
                run_checked(g + ["--symmetric", "--cipher-algo", "AES256", "--compress-algo", "none", "-o", str(gpgd), str(plain)])
                peer("gpg --symmetric", "cfb-mdc", "encrypt", 256,
                     g + ["--symmetric", "--cipher-algo", "AES256", "--compress-algo", "none", "-o", str(out), str(plain)], plain)
                peer("gpg --symmetric", "cfb-mdc", "decrypt", 256, g + ["-d", "-o", str(out), str(gpgd)], gpgd)
            except CommandFailed as e:
                skipped.append(f"gpg: failed ({str(e)[-200:]})")
        else:
            skipped.append("gpg: not installed (gnupg)")
        # paes on the same file, in the same rounds
        for mode in ("ctr", "sealed"):
            for direction in ("encrypt", "decrypt"):
                cands.append(self.paes_cand("f", mode, direction, plain, "threads", self.ncpu, extra={"series": "peers"}))
        argv = [self.paes, "decrypt", "--mode", "cbc", "--key-file", str(self.key), "--iv", self.iv, "--no-progress",
                "--json", "--threads", str(self.ncpu), str(cbc), "-o", str(out)]
        cands.append(self.cand(exp="f", tool="paes", mode="cbc", direction="decrypt", key_bits=256, engine="threads",
                               threads=self.ncpu, nbytes=size, argv=argv, src=cbc, out=out, parse_json=True,
                               extra={"series": "peers"}))
        try:
            self.measure(cands)
        finally:
            if home.exists():
                subprocess.run(["gpgconf", "--homedir", str(home), "--kill", "all"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
        # openssl speed: the per-core cipher limit
        for algo in self.p["speed_algos"]:
            vals = []
            argv = ["openssl", "speed", "-mr", "-evp", algo, "-bytes", str(MIB), "-seconds", str(self.p["speed_seconds"])]
            for i in range(self.runs + 1):
                txt = run_checked(argv, timeout=120).stdout.decode(errors="replace")
                m = re.findall(r"^\+F:\d+:[^:]+:([0-9.]+)", txt, re.M)
                if m and i > 0:
                    vals.append(float(m[-1]))
            if not vals:
                skipped.append(f"openssl speed {algo}: no result parsed")
                continue
            secs = [MIB / v for v in vals]
            t = summarize(secs)
            rec = {"experiment": "f", "seed": SEEDS["f"], "kind": "cipher-limit", "tool": "openssl speed",
                   "mode": algo.split("-")[-1], "direction": "encrypt", "key_bits": int(algo.split("-")[1]),
                   "engine": "openssl speed", "threads": 1, "bytes": MIB, "gbps": MIB / t["seconds"] / 1e9,
                   "command": shlex.join(argv), "series": "peers", "algorithm": algo}
            rec.update(t)
            self.records.append(rec)
        self.experiments["f"] = {"status": "run", "file_bytes": size, "skipped_peers": skipped,
                                 "notes": "gpg runs with --compress-algo none (its default zlib compression would time "
                                          "zlib, not the cipher; random data does not compress); age uses "
                                          "ChaCha20-Poly1305 with an X25519 recipient; openssl speed figures are "
                                          "one core, 1 MiB blocks"}

    # ---------------------------------------------------------------- driver
    def run(self):
        self.setup()
        log(f"work dir {self.work}; machine {self.machine['slug']}; threads {self.thread_counts}; "
            f"{'quick' if self.quick else 'full'} run, {self.runs} runs per figure")
        only = set(self.args.only.split(",")) if self.args.only else set("abcdef")
        try:
            for exp in "abcdef":
                if exp not in only:
                    self.experiments[exp] = {"status": "not run", "reason": "left out with --only"}
                    continue
                t0 = time.time()
                log(f"experiment {exp}: {TITLES[exp]}")
                try:
                    getattr(self, f"exp_{exp}")()
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
            self.experiments[exp]["title"] = TITLES[exp]
            self.experiments[exp]["seed"] = SEEDS[exp]
        return self.write()

    def write(self):
        out = Path(self.args.out) if self.args.out else ROOT / "docs" / "benchmarks" / self.machine["slug"]
        out.mkdir(parents=True, exist_ok=True)
        self.machine.pop("slug_source", None)
        meta = {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command_line": shlex.join([sys.executable] + sys.argv),
            "profile": "quick" if self.quick else "full",
            "quick": self.quick,
            "runs_per_figure": self.runs,
            "warm_up_runs": 1,
            "timing": f"median of {self.runs} runs after one warm-up, with min and max"
                      + (" (quick mode: fewer runs and small sizes)" if self.quick else ""),
            "page_cache": self.machine["page_cache"],
            "thread_counts": self.thread_counts,
            "thesis_scale": self.thesis_scale,
            "units": "bytes in binary units (K = 1024, M = 1048576); gbps = 10^9 bytes per second; "
                     "speedup S = t_serial / t_p; efficiency E = S / p; throughput T = size / time",
            "paes": self.paes_src,
            "wall_seconds": round(time.time() - self.t_start, 1),
            "notes": self.notes,
        }
        exps = [self.experiments[e] for e in "abcdef" if e in self.experiments]
        derived = derive_tables(self)
        plots = []
        try:
            plots = make_plots(self, out)
        except ImportError as e:
            self.notes.append(f"plots not drawn: {e} (install matplotlib: .venv/bin/pip install matplotlib)")
        doc = {"suite": "paes benchmark suite", "format": 1, "machine": self.machine, "run": meta,
               "experiments": exps, "records": self.records, "derived": derived, "plots": plots}
        (out / "results.json").write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
        write_csv(out / "results.csv", self.records)
        (out / "tables.md").write_text(render_tables(self, exps, derived, plots))
        meta["wall_seconds"] = round(time.time() - self.t_start, 1)
        (out / "results.json").write_text(json.dumps(doc, indent=1) + "\n")
        log(f"wrote {out} in {meta['wall_seconds']} s")
        failed = [e["id"] for e in exps if e["status"] == "failed"]
        return 1 if failed else 0


# -------------------------------------------------------------------- derived figures
def add_speedups(recs, base_engine="serial"):
    base = {}
    for r in recs:
        if r["engine"] == base_engine:
            base[(r["mode"], r["direction"], r["key_bits"], r["bytes"])] = r["seconds"]
    for r in recs:
        b = base.get((r["mode"], r["direction"], r["key_bits"], r["bytes"]))
        if b and r["seconds"] > 0:
            r["speedup"] = b / r["seconds"]
            r["efficiency"] = r["speedup"] / max(1, r["threads"])


def amdahl_f(s, p):
    """Amdahl's serial fraction from a measured speed-up; undefined (None) where nothing was gained (S <= 1)."""
    if p <= 1 or not s or s <= 1:
        return None
    return (1 / s - 1 / p) / (1 - 1 / p)


def derive_tables(suite):
    """Speed-ups of whole-program records against the serial engine, and experiment b's table."""
    recs = suite.records
    wp = [r for r in recs if r.get("kind") == "whole-program" and r.get("tool") == "paes"]
    serial = {}
    for r in wp:
        if r["engine"] == "serial":
            serial[(r["experiment"], r["mode"], r["direction"], r["bytes"])] = r["seconds"]
    for r in wp:
        if "speedup" in r:
            continue
        b = serial.get((r["experiment"], r["mode"], r["direction"], r["bytes"]))
        if b:
            r["speedup"] = b / r["seconds"]
            r["efficiency"] = r["speedup"] / max(1, r["threads"])
    # Bielecki & Burak table 1
    rows = []
    size = suite.p["sweep_bytes"]
    comp = {(r["mode"], r["direction"], r["threads"], r["engine"]): r for r in recs
            if r.get("experiment") == "a" and r.get("kind") == "compute" and r.get("key_bits") == 256
            and r.get("series") is None}
    whole = {(r["mode"], r["direction"], r["threads"], r["engine"]): r for r in recs if r.get("experiment") == "b"}
    for mode in ("ctr", "sealed"):
        for p in suite.thread_counts:
            row = {"mode": mode, "threads": p, "bytes": size}
            for d in ("encrypt", "decrypt"):
                c = comp.get((mode, d, p, "threads"))
                row[f"compute_speedup_{d}"] = c.get("speedup") if c else None
                w = whole.get((mode, d, p, "threads"))
                row[f"total_speedup_{d}"] = w.get("speedup") if w else None
            se = [whole.get((mode, d, 1, "serial")) for d in ("encrypt", "decrypt")]
            pe = [whole.get((mode, d, p, "threads")) for d in ("encrypt", "decrypt")]
            if all(se) and all(pe):
                s = sum(x["seconds"] for x in se) / sum(x["seconds"] for x in pe)
                row["total_speedup_both"] = s
                row["amdahl_serial_fraction"] = amdahl_f(s, p)
            ce = [comp.get((mode, d, 1, "serial")) for d in ("encrypt", "decrypt")]
            cp = [comp.get((mode, d, p, "threads")) for d in ("encrypt", "decrypt")]
            if all(ce) and all(cp):
                s = sum(x["seconds"] for x in ce) / sum(x["seconds"] for x in cp)
                row["compute_speedup_both"] = s
                row["compute_amdahl_serial_fraction"] = amdahl_f(s, p)
            rows.append(row)
    # peers' ratios
    peers = {}
    for r in recs:
        if r.get("experiment") == "f" and r.get("kind") == "whole-program":
            peers[(r["tool"], r["mode"], r["direction"])] = r
    pairs = [
        (("paes", "ctr", "encrypt"), ("openssl enc", "ctr", "encrypt")),
        (("paes", "ctr", "decrypt"), ("openssl enc", "ctr", "decrypt")),
        (("paes", "cbc", "decrypt"), ("openssl enc", "cbc", "decrypt")),
        (("paes", "sealed", "encrypt"), ("openssl enc", "ctr", "encrypt")),
        (("paes", "sealed", "decrypt"), ("openssl enc", "ctr", "decrypt")),
        (("paes", "sealed", "encrypt"), ("age", "chacha20-poly1305", "encrypt")),
        (("paes", "sealed", "decrypt"), ("age", "chacha20-poly1305", "decrypt")),
        (("paes", "sealed", "encrypt"), ("gpg --symmetric", "cfb-mdc", "encrypt")),
        (("paes", "sealed", "decrypt"), ("gpg --symmetric", "cfb-mdc", "decrypt")),
        (("paes", "ctr", "encrypt"), ("cp", "none", "copy")),
        (("paes", "sealed", "encrypt"), ("cp", "none", "copy")),
        (("paes", "ctr", "encrypt"), ("cat", "none", "read")),
    ]
    ratios = []
    for a, b in pairs:
        if a in peers and b in peers:
            ratios.append({"paes": " ".join(a[1:]), "peer": f"{b[0]} {b[1]} {b[2]}".replace(" none", ""),
                           "paes_seconds": peers[a]["seconds"], "peer_seconds": peers[b]["seconds"],
                           "time_ratio": peers[a]["seconds"] / peers[b]["seconds"]})
    return {"bielecki_table1": rows, "peer_ratios": ratios}


# -------------------------------------------------------------------- outputs
def write_csv(path, records):
    keys = []
    for r in records:
        for k in r:
            if k not in keys:
                keys.append(k)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in records:
            w.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in r.items()})


def fmt(v, spec=".3f"):
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if spec == ".3f" and v != 0 and abs(v) < 0.1:
            return f"{v:.2g}"
        return format(v, spec)
    return str(v)


def ms(s):
    return f"{s * 1000:.3f}" if s < 0.01 else f"{s * 1000:.1f}"


def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def render_tables(suite, exps, derived, plots):
    m = suite.machine
    recs = suite.records
    feats = ", ".join(k for k, v in m["aes_features"].items() if v) or "none"
    lines = [f"# paes benchmark suite: {m['slug']}\n",
             f"- CPU: {m['cpu_model']}, {m['online_cpus']} online CPUs; AES features: {feats}",
             f"- Memory: {fmt((m['mem_total_bytes'] or 0) / GIB, '.1f')} GiB total, "
             f"{fmt((m['mem_available_bytes'] or 0) / GIB, '.1f')} GiB available at the start",
             f"- {m['openssl_version']}; compiler: {m['compiler']}; {m['kernel']}; {m['os']}",
             f"- paes {m['paes_version']}, engines: {m['paes_engines']}; work dir on {m['work_dir_filesystem']}",
             f"- Run: {'QUICK (small sizes, ' + str(suite.runs) + ' runs per figure: a smoke run, not for publication)' if suite.quick else 'full'}, "
             f"{datetime.date.today().isoformat()}, {suite.runs} timed runs after one warm-up per figure (median, min - max)",
             f"- Page cache: {m['page_cache']}",
             "- Units: sizes in binary units (K = 1024 B, M = 1 MiB); GB/s = 10^9 bytes/s; T = size / time; "
             "S = t_serial / t_p (t_serial: the serial engine); E = S / p",
             ""]
    for n in suite.notes:
        lines.append(f"- Note: {n}")
    lines.append("")
    by = {e["id"]: e for e in exps}

    def header(e):
        ex = by.get(e, {"status": "not run", "reason": "not reached"})
        lines.append(f"## {e}. {TITLES[e]}\n")
        lines.append(f"Mirrors: {SEEDS[e]}.\n")
        if ex.get("status") != "run":
            lines.append(f"**{ex.get('status', 'not run').upper()}**: {ex.get('reason', '')}\n")
            return False
        if ex.get("notes"):
            lines.append(f"{ex['notes']}.\n")
        return True

    # a
    if header("a"):
        sweep = [r for r in recs if r["experiment"] == "a" and r.get("series") is None]
        keys = sorted({(r["mode"], r["direction"], r["key_bits"]) for r in sweep},
                      key=lambda k: (["ctr", "ecb", "cbc", "sealed"].index(k[0]), k[1] != "encrypt", k[2]))
        lines.append(f"Buffer: {human(suite.p['sweep_bytes'])}. Per row: OpenSSL one-shot, serial engine, then the "
                     f"threads engine at p = {', '.join(map(str, suite.thread_counts))} "
                     f"({suite.thread_counts[-1]} oversubscribes {suite.ncpu} CPUs).\n")
        rows = []
        for k in keys:
            g = {(r["engine"], r["threads"]): r for r in sweep if (r["mode"], r["direction"], r["key_bits"]) == k}
            for eng, p in [("openssl", 1), ("serial", 1)] + [("threads", t) for t in suite.thread_counts]:
                r = g.get((eng, p))
                if not r:
                    continue
                rows.append([f"{k[0]}-{k[2]} {k[1]}", eng, p, ms(r["seconds"]), f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}",
                             r["gbps"], r.get("speedup"), r.get("efficiency")])
        lines.append(md_table(["mode / direction", "engine", "p", "time ms (median)", "min - max ms", "T GB/s", "S", "E"], rows))
        th = [r for r in recs if r["experiment"] == "a" and r.get("series") == "thesis-sizes"]
        if th:
            lines.append("\nThe thesis' own axes (its tables 5.1/5.5: time against threads and file size; 5.2/5.6: "
                         "speed-up and % efficiency), AES-256 encryption in memory:\n")
            sizes = sorted({r["bytes"] for r in th})
            for mode in ("ctr", "sealed"):
                rows = []
                for eng, p in [("serial", 1)] + [("threads", t) for t in suite.thread_counts]:
                    row = [eng if eng == "serial" else str(p)]
                    for s in sizes:
                        r = next((x for x in th if x["mode"] == mode and x["engine"] == eng and x["threads"] == p and x["bytes"] == s), None)
                        row.append(ms(r["seconds"]) if r else "-")
                    rows.append(row)
                for label, key, mult in (("speed-up at p = N", "speedup", 1), ("% efficiency at p = N", "efficiency", 100)):
                    row = [label]
                    for s in sizes:
                        r = next((x for x in th if x["mode"] == mode and x["engine"] == "threads" and x["threads"] == suite.ncpu and x["bytes"] == s), None)
                        row.append(fmt(r[key] * mult, ".2f") if r and r.get(key) else "-")
                    rows.append(row)
                lines.append(f"\n{mode.upper()} encryption, time in ms:\n")
                lines.append(md_table(["threads"] + [suite.thesis_label(s) for s in sizes], rows))
        lines.append("\nSeed (thesis table 5.5/5.6, OpenMP + OpenSSL, 16 logical cores): 1080 MB took 6880 ms on 1 thread "
                     "and 798 ms on 16 (S = 8.62, E = 53.88 %).\n")
    # b
    if header("b"):
        rows = []
        for r in derived["bielecki_table1"]:
            rows.append([r["mode"], r["threads"], r.get("compute_speedup_encrypt"), r.get("compute_speedup_decrypt"),
                         r.get("total_speedup_encrypt"), r.get("total_speedup_decrypt"), r.get("total_speedup_both"),
                         r.get("amdahl_serial_fraction"), r.get("compute_amdahl_serial_fraction")])
        lines.append(f"File and buffer: {human(suite.p['sweep_bytes'])}, AES-256. Compute-only: paes bench "
                     "(threads engine against the serial engine). Total: whole-program `paes encrypt|decrypt` "
                     "on the file (threads engine against the serial engine); `enc+dec` adds both directions as the "
                     "seed's program did. Amdahl serial fraction f = (1/S - 1/p) / (1 - 1/p), from S of enc+dec "
                     "(- where S <= 1: no parallel gain to attribute; at p above the online CPUs f also counts the "
                     "oversubscription).\n")
        lines.append(md_table(["mode", "p", "S encrypt (compute)", "S decrypt (compute)", "S encrypt (total)",
                               "S decrypt (total)", "S enc+dec (total)", "f (total)", "f (compute)"], rows))
        wb = [r for r in recs if r["experiment"] == "b"]
        rows = [[r["mode"], r["direction"], r["engine"], r["threads"], ms(r["seconds"]),
                 f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}", r["gbps"]] for r in wb]
        lines.append("\nWhole-program timings behind the totals:\n")
        lines.append(md_table(["mode", "direction", "engine", "p", "time ms", "min - max ms", "GB/s"], rows))
        lines.append("\nSeed (Itanium2 SGI Altix, 17 MB, AES-256): p = 2: S = 1.957 encryption, 1.996 decryption, "
                     "1.600 total; p = 16: 5.554, 12.357, 2.300; serial fraction 0.244.\n")
    # c
    if header("c"):
        wp = [r for r in recs if r["experiment"] == "c" and r.get("kind") == "whole-program"]
        cp = {(r["mode"], r["direction"], r["engine"], r["threads"], r["bytes"]): r for r in recs
              if r.get("kind") == "compute" and r.get("key_bits") == 256 and r["experiment"] in ("a", "c")}
        for series, title in (("polarssl", "PolarSSL slides' sizes"), ("dual-core", "dual-core paper's sizes (tables 1 and 2)"),
                              ("thesis", "thesis sizes")):
            rows = []
            sel = [r for r in wp if series in r.get("series", "").split(",")]
            for s in sorted({r["bytes"] for r in sel}):
                label = suite.thesis_label(s) if series == "thesis" else (f"{s // KIB} KB" if series == "dual-core" else human(s))
                for mode in ("ctr", "sealed"):
                    for d in ("encrypt", "decrypt"):
                        ser = next((r for r in sel if (r["bytes"], r["mode"], r["direction"], r["engine"]) == (s, mode, d, "serial")), None)
                        thr = next((r for r in sel if (r["bytes"], r["mode"], r["direction"], r["engine"]) == (s, mode, d, "threads")), None)
                        comp_bytes = s if d == "encrypt" or mode != "sealed" else None
                        c = cp.get((mode, d, "threads", suite.ncpu, comp_bytes)) if comp_bytes else None
                        if c is None and mode == "sealed" and d == "decrypt":
                            c = next((x for k, x in cp.items() if k[:4] == (mode, d, "threads", suite.ncpu)
                                      and 0 <= k[4] - s <= s // 1000 + 4096), None)
                        rows.append([label, mode, d, ms(ser["seconds"]) if ser else "-", ms(thr["seconds"]) if thr else "-",
                                     f"{ms(thr['min_seconds'])} - {ms(thr['max_seconds'])}" if thr else "-",
                                     thr.get("speedup") if thr else None,
                                     (1 - thr["seconds"] / ser["seconds"]) * 100 if thr and ser else None,
                                     thr["gbps"] if thr else None, c["gbps"] if c else None])
            lines.append(f"\n### {title}\n")
            lines.append(md_table(["size", "mode", "direction", "serial ms", f"{suite.ncpu} threads ms", "min - max ms",
                                   "S", "time saved %", "whole-program GB/s", "compute-only GB/s"], rows))
        lines.append("\n`time saved %` is the dual-core paper's measure, (t_seq - t_par) / t_seq x 100 (it reports 38-47 % "
                     "on a Core 2 Duo). Compute-only GB/s: paes bench at the same size, threads engine.\n")
    # d
    if header("d"):
        dd = [r for r in recs if r["experiment"] == "d"]
        ex = by["d"]
        lines.append(f"File: {ex.get('file_label')} ({human(ex.get('file_bytes', 0))}), encryption, AES-256.\n")
        rows = []
        for r in dd:
            cfg = f"{r['ranks']} x {r['threads_per_rank']}" if r.get("ranks") else f"{r['engine']} engine, {r['threads']} thread(s)"
            rank_c = ""
            if r.get("rank_detail"):
                rank_c = " / ".join(f"{x.get('compute_seconds', 0) * 1000:.0f}+{x.get('io_seconds', 0) * 1000:.0f}" for x in r["rank_detail"])
            rows.append([r["mode"], cfg, ms(r["seconds"]), f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}", r["gbps"],
                         r.get("speedup"), "yes" if r.get("oversubscribed") else "", rank_c])
        lines.append(md_table(["mode", "ranks x threads", "time ms", "min - max ms", "GB/s", "S vs serial", "oversubscribed",
                               "per rank compute+I/O ms (last run)"], rows))
        lines.append("\nSeed (thesis table 5.7/5.8, MPICH, 31 nodes x 16 logical cores): 1080 MB took 800 ms on 1 process "
                     "and 52 ms on 31 (S = 132.23 against the 6880 ms serial time).\n")
    # e
    header("e")
    # f
    if header("f"):
        ff = [r for r in recs if r["experiment"] == "f"]
        rows = [[r["tool"], r["mode"], r["direction"], r["threads"] if r["tool"] == "paes" else 1, ms(r["seconds"]),
                 f"{ms(r['min_seconds'])} - {ms(r['max_seconds'])}", r["gbps"]] for r in ff if r["kind"] == "whole-program"]
        lines.append(f"File: {human(by['f'].get('file_bytes', 0))} random, the file of experiment b.\n")
        lines.append(md_table(["tool", "mode", "direction", "threads", "time ms", "min - max ms", "GB/s"], rows))
        if by["f"].get("skipped_peers"):
            lines.append("\nSkipped: " + "; ".join(by["f"]["skipped_peers"]) + "\n")
        lines.append("\nRatios (paes time / peer time, medians of this run; < 1: paes is faster):\n")
        lines.append(md_table(["paes", "peer", "paes ms", "peer ms", "time ratio", "peer time / paes time"],
                              [[x["paes"], x["peer"], ms(x["paes_seconds"]), ms(x["peer_seconds"]), x["time_ratio"],
                                1 / x["time_ratio"]] for x in derived["peer_ratios"]]))
        sp = [r for r in ff if r["kind"] == "cipher-limit"]
        if sp:
            lines.append("\n`openssl speed` (one core, 1 MiB blocks: the per-core cipher limit):\n")
            lines.append(md_table(["algorithm", "GB/s (median)", "min - max GB/s"],
                                  [[r["algorithm"], r["gbps"], f"{MIB / r['max_seconds'] / 1e9:.3f} - {MIB / r['min_seconds'] / 1e9:.3f}"] for r in sp]))
    if plots:
        lines.append("\n## Plots\n")
        for p in plots:
            lines.append(f"- [{p['file']}]({p['file']}): {p['title']} (mirrors {p['mirrors']})")
        lines.append("")
    return "\n".join(lines) + "\n"


def make_plots(suite, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs = suite.records
    plots = []
    tag = " [QUICK]" if suite.quick else ""

    def save(fig, name, title, mirrors):
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        plots.append({"file": name, "title": title, "mirrors": mirrors})

    # 1-2: thesis figs 5.5/5.6 (and 5.1/5.2): time and throughput against threads, one line per size
    th = [r for r in recs if r["experiment"] == "a" and r.get("series") == "thesis-sizes" and r["engine"] == "threads"]
    if th:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, mode in zip(axes, ("ctr", "sealed")):
            for s in sorted({r["bytes"] for r in th}):
                pts = sorted((r["threads"], r["seconds"] * 1000) for r in th if r["mode"] == mode and r["bytes"] == s)
                ax.plot([p for p, _ in pts], [t for _, t in pts], marker="o", label=suite.thesis_label(s))
            ax.set_xscale("log", base=2)
            ax.set_xticks(suite.thread_counts, [str(t) for t in suite.thread_counts])
            ax.axvline(suite.ncpu, color="grey", ls=":", lw=1)
            ax.set_xlabel("threads")
            ax.set_ylabel("time (ms)")
            ax.set_title(f"AES-256 {mode.upper()} encryption, in memory{tag}")
            ax.legend(fontsize=7)
        save(fig, "threads_time.png", "execution time against threads, thesis file sizes", "thesis figures 5.1, 5.5")
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for ax, mode in zip(axes, ("ctr", "sealed")):
            for s in sorted({r["bytes"] for r in th}):
                pts = sorted((r["threads"], r["gbps"]) for r in th if r["mode"] == mode and r["bytes"] == s)
                ax.plot([p for p, _ in pts], [t for _, t in pts], marker="o", label=suite.thesis_label(s))
            ax.set_xscale("log", base=2)
            ax.set_xticks(suite.thread_counts, [str(t) for t in suite.thread_counts])
            ax.axvline(suite.ncpu, color="grey", ls=":", lw=1)
            ax.set_xlabel("threads")
            ax.set_ylabel("throughput (GB/s)")
            ax.set_ylim(bottom=0)
            ax.set_title(f"AES-256 {mode.upper()} encryption, in memory{tag}")
            ax.legend(fontsize=7)
        save(fig, "threads_throughput.png", "throughput against threads, thesis file sizes", "thesis figures 5.2, 5.6")
    # 3: speed-up and throughput of every mode against threads (experiment a)
    sw = [r for r in recs if r["experiment"] == "a" and r.get("series") is None and r["engine"] == "threads"]
    if sw:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        keys = sorted({(r["mode"], r["direction"], r["key_bits"]) for r in sw})
        for k in keys:
            pts = sorted((r["threads"], r.get("speedup", 0), r["gbps"]) for r in sw if (r["mode"], r["direction"], r["key_bits"]) == k)
            lbl = f"{k[0]}-{k[2]} {k[1][:3]}"
            ls = "-" if k[2] == 256 else "--"
            axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", ls=ls, label=lbl)
            axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", ls=ls, label=lbl)
        axes[0].plot(suite.thread_counts, [min(t, suite.ncpu) for t in suite.thread_counts], color="black", lw=1, ls=":", label="ideal")
        axes[0].set_ylabel("speed-up S = t_serial / t_p")
        axes[1].set_ylabel("throughput (GB/s)")
        for ax in axes:
            ax.set_xscale("log", base=2)
            ax.set_xticks(suite.thread_counts, [str(t) for t in suite.thread_counts])
            ax.set_xlabel("threads")
            ax.set_ylim(bottom=0)
        axes[1].legend(fontsize=6, ncol=2)
        axes[0].set_title(f"Speed-up, {human(suite.p['sweep_bytes'])} in memory{tag}")
        axes[1].set_title(f"Throughput, {human(suite.p['sweep_bytes'])} in memory{tag}")
        save(fig, "threads_speedup.png", "speed-up and throughput of every mode against threads", "thesis tables 5.2, 5.6; figures 5.2, 5.6")
    # 4: throughput against file size, compute-only and whole-program
    wp = [r for r in recs if r["experiment"] == "c" and r.get("kind") == "whole-program" and r["engine"] == "threads"]
    cp = [r for r in recs if r["experiment"] in ("a", "c") and r.get("kind") == "compute" and r["engine"] == "threads"
          and r["threads"] == suite.ncpu and r.get("key_bits") == 256 and (r["experiment"] == "c" or r.get("series") == "thesis-sizes")]
    if wp:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        for ax, d in zip(axes, ("encrypt", "decrypt")):
            for mode, color in (("ctr", "tab:blue"), ("sealed", "tab:orange")):
                pts = sorted((r["bytes"], r["gbps"]) for r in wp if r["mode"] == mode and r["direction"] == d)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color, label=f"{mode} whole program")
                pts = sorted({r["bytes"]: r["gbps"] for r in cp if r["mode"] == mode and r["direction"] == d}.items())
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="s", ls="--", color=color, label=f"{mode} compute only")
            ax.set_xscale("log")
            ax.set_xlabel("size (bytes)")
            ax.set_ylabel("throughput (GB/s)")
            ax.set_title(f"AES-256 {d}, {suite.ncpu} threads{tag}")
            ax.legend(fontsize=7)
        save(fig, "sizes_throughput.png", "throughput against file size, compute-only and whole-program",
             "PolarSSL slides (2 KB-100 MB), dual-core paper figures 5 and 6, thesis sizes")
    # 5: MPI ranks sweep
    dd = [r for r in recs if r["experiment"] == "d" and r.get("ranks")]
    if dd:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        for mode in ("ctr", "sealed"):
            for t in sorted({r["threads_per_rank"] for r in dd}):
                pts = sorted((r["ranks"], r["seconds"] * 1000, r.get("speedup", 0)) for r in dd
                             if r["mode"] == mode and r["threads_per_rank"] == t)
                axes[0].plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{mode}, {t} thread(s)/rank")
                axes[1].plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=f"{mode}, {t} thread(s)/rank")
        axes[0].set_ylabel("time (ms)")
        axes[1].set_ylabel("speed-up vs serial engine")
        for ax in axes:
            ax.set_xlabel("MPI ranks")
            ax.set_xticks(suite.p["mpi_ranks"])
            ax.set_ylim(bottom=0)
            ax.legend(fontsize=7)
        axes[0].set_title(f"mpi engine, {human(suite.experiments['d'].get('file_bytes', 0))} file, encryption{tag}")
        save(fig, "mpi_ranks.png", "MPI ranks x threads: time and speed-up", "thesis tables 5.3, 5.4, 5.7, 5.8; figures 5.3, 5.4, 5.7, 5.8")
    # 6: peers
    ff = [r for r in recs if r["experiment"] == "f"]
    if ff:
        fig, ax = plt.subplots(figsize=(9, 0.32 * len(ff) + 1.5))
        labels = [f"{r['tool']} {r['mode']} {r['direction']}".replace(" none", "") +
                  (f" ({r['threads']} thr)" if r["tool"] == "paes" else "") for r in ff]
        colors = ["tab:green" if r["tool"] == "paes" else ("tab:grey" if r["tool"] in ("cp", "cat") else
                  ("tab:purple" if r["kind"] == "cipher-limit" else "tab:blue")) for r in ff]
        ax.barh(range(len(ff)), [r["gbps"] for r in ff], color=colors)
        ax.set_yticks(range(len(ff)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel("throughput (GB/s); openssl speed: one core, in memory")
        ax.set_title(f"Peers on the same {human(suite.experiments['f'].get('file_bytes', 0))} file (whole program){tag}")
        save(fig, "peers.png", "paes against its peers on the same file", "issue 6 peers; PolarSSL slides' future work")
    # 7: Bielecki table 1: compute against total speed-up
    rows = suite_derived_rows(suite)
    if rows:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for mode in ("ctr", "sealed"):
            pts = [r for r in rows if r["mode"] == mode]
            for key, ls in (("compute_speedup_both", "--"), ("total_speedup_both", "-")):
                ax.plot([r["threads"] for r in pts], [r.get(key) or 0 for r in pts], marker="o", ls=ls,
                        label=f"{mode} {key.split('_')[0]}")
        ax.plot(suite.thread_counts, [min(t, suite.ncpu) for t in suite.thread_counts], color="black", lw=1, ls=":", label="ideal")
        ax.set_xlabel("threads")
        ax.set_ylabel("speed-up (encrypt + decrypt)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"Compute-only vs whole-program speed-up{tag}")
        ax.legend(fontsize=7)
        save(fig, "amdahl_speedup.png", "compute-only against total speed-up", "Bielecki & Burak table 1")
    return plots


def suite_derived_rows(suite):
    return [r for r in derive_tables(suite)["bielecki_table1"] if r.get("total_speedup_both") or r.get("compute_speedup_both")]


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
    sys.exit(Suite(args).run())


if __name__ == "__main__":
    main()
