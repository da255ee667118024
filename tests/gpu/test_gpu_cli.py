#!/usr/bin/env python3
"""The GPU cipher backends through the real binary: --engine opencl (short for
--engine threads --backend opencl) on whatever OpenCL device there is (PoCL on
the CPU in CI) gives openssl's bytes, in files and pipes, with one lane of the
device per worker; what a GPU doesn't run (the sequential directions, the
sealed format) runs on the CPU's backend with a note; a GPU backend that isn't
built in or has no device fails with one clear line, as does a --device that
doesn't exist; a device that computes wrong AES (made so by an LD_PRELOAD
shim, opencl_fault_shim.c) is caught by the start-up self-test or the
per-batch check: exit 1 and no output, or with --engine auto the CPU.

Run as:  python3 tests/gpu/test_gpu_cli.py --paes build/release/paes --openssl /usr/bin/openssl \
           [--cl-shim build/release/tests/libpaes_opencl_fault_shim.so]
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import (ScratchTestCase, describe, openssl_enc_command, read_file, run_paes, run_unittest,  # noqa: E402
                     tool_paths, write_file)

PAES = "paes"
OPENSSL = "openssl"
INFO = {}
CL_SHIM = None


def backend_row(name):
    """`paes info --json`'s row of cipher backend `name` ({} where there is none)."""
    return next((b for b in INFO.get("backends", []) if b["name"] == name), {})


def skip_without_opencl(test):
    if not backend_row("opencl").get("built_in"):
        test.skipTest("this paes has no opencl backend (no OpenCL headers or ICD loader at build time)")
    if not INFO.get("opencl_devices"):
        test.skipTest("no OpenCL device (install pocl-opencl-icd for one on the CPU)")


def cpu_backends():
    return {b["name"] for b in INFO.get("backends", []) if not b["gpu"]}


def key_and_input(case, size):
    """In `case`'s scratch folder, an AES-256 key in a key file and `size` random bytes in
    an input file, with an IV: (key, key_file, plain, inp, iv)."""
    key = os.urandom(32)
    key_file = write_file(case.path("key"), key, 0o600)
    plain = os.urandom(size)
    inp = write_file(case.path("in"), plain)
    return key, key_file, plain, inp, os.urandom(16)


class OpenClCliTest(ScratchTestCase):
    prefix = "paes-gpu-cli-"
    # The two spellings of the same job: the short form and the long one.
    FORMS = (["--engine", "opencl"], ["--engine", "threads", "--backend", "opencl"])
    # Two workers, each driving a lane of the device: 1 MiB chunks (a GPU's default chunk, its batch, is
    # larger than the inputs here: one chunk, one worker), two threads; a job of 2 MiB or more runs both.
    TWO_LANES = ["--threads", "2", "--chunk-size", "1M"]

    def setUp(self):
        super().setUp()
        skip_without_opencl(self)

    def oracle(self, mode, key, iv, data, decrypt):
        cmd = openssl_enc_command(OPENSSL, mode, key, iv, decrypt)
        return subprocess.run(cmd, input=data, capture_output=True, check=True).stdout

    def test_parallel_modes_match_openssl(self):
        key_file = self.path("key")
        for bits in (128, 192, 256):
            key, iv = os.urandom(bits // 8), bytes(12) + b"\xff\xff\xff\xfe"  # the counter wraps 32 bits
            write_file(key_file, key.hex().encode() + b"\n", 0o600)
            for mode, directions in (("ctr", ("encrypt", "decrypt")), ("ecb", ("encrypt", "decrypt")),
                                     ("cbc", ("decrypt",)), ("cfb", ("decrypt",))):
                for direction in directions:
                    # 17 bytes: ECB's and CBC's padding, CTR's and CFB's partial block. Up to 1 MiB + 5
                    # the job runs one worker (one per MiB of input), so one lane; 2 MiB + 5 in 1 MiB chunks
                    # runs two workers' lanes (three chunks; --json says "threads": 2), for CTR and ECB.
                    sizes = [(0, self.FORMS[0], []), (17, self.FORMS[1], []),
                             ((1 << 20) + 5, self.FORMS[bits // 64 % 2], [])]
                    if mode in ("ctr", "ecb"):
                        sizes.append(((2 << 20) + 5, self.FORMS[bits // 64 % 2 ^ 1], self.TWO_LANES))
                    for size, form, lanes in sizes:
                        plain = os.urandom(size)
                        source = plain if direction == "encrypt" else self.oracle(mode, key, iv, plain, False)
                        expected = self.oracle(mode, key, iv, source, direction == "decrypt")
                        inp, out = write_file(self.path("in"), source), self.path("out")
                        args = [direction, *form, "--mode", mode, "--key-file", key_file, "-f", inp, "-o", out,
                                "--json", *lanes] + (["--iv", iv.hex()] if mode != "ecb" else [])
                        proc = run_paes(args)
                        what = f"{direction} {mode}-{bits} size {size} ({' '.join(form)})"
                        self.check(proc.returncode == 0, f"{what}: {describe(proc)}")
                        if proc.returncode == 0:
                            self.check(read_file(out) == expected, f"{what}: output differs from openssl")
                            self.check(proc.stderr == b"", f"{what}: said {proc.stderr!r}")
                            report = json.loads(proc.stdout)
                            self.check((report["engine"], report["backend"], report["threads"]) ==
                                       ("threads", "opencl", 2 if lanes else 1), f"{what}: {report}")
        self.finish()

    def test_first_use_prints_no_compiler_output(self):
        """Issue 44, item 10: the kernels' first build (a fresh PoCL cache) printed the compiler's
        "2 warnings generated." on stderr."""
        key_file = write_file(self.path("key"), os.urandom(32).hex().encode() + b"\n", 0o600)
        inp = write_file(self.path("in"), os.urandom(4096))
        cache = self.new_dir("pocl-cache")
        proc = run_paes(["encrypt", *self.FORMS[0], "--mode", "ctr", "--key-file", key_file, "--iv", "00" * 16,
                         inp, "-o", self.path("out")], env={"POCL_CACHE_DIR": cache})
        self.assertEqual((proc.returncode, proc.stderr), (0, b""), describe(proc))

    def test_each_worker_drives_a_lane(self):
        # Six chunks on two workers: each chunk starts where ChunkPlan says (CTR's counter, CBC's and CFB's
        # chaining block), whichever worker's lane runs it.
        key, iv = os.urandom(16), os.urandom(16)
        key_file = write_file(self.path("key"), key, 0o600)
        plain = os.urandom((5 << 20) + 48)
        for mode, direction in (("ctr", "encrypt"), ("cbc", "decrypt"), ("cfb", "decrypt")):
            source = plain if direction == "encrypt" else self.oracle(mode, key, iv, plain, False)
            inp = write_file(self.path("in"), source)
            proc = run_paes([direction, "--engine", "opencl", "--mode", mode, "--key-file", key_file, "--iv", iv.hex(),
                        "--threads", "2", "--chunk-size", "1M", "--json", "-v", "-f", inp, "-o", self.path("out")])
            what = f"{direction} {mode}"
            self.check(proc.returncode == 0, f"{what}: {describe(proc)}")
            if proc.returncode != 0:
                continue
            self.check(read_file(self.path("out")) == self.oracle(mode, key, iv, source, direction == "decrypt"),
                       f"{what}: output differs from openssl")
            report = json.loads(proc.stdout)
            self.check((report["engine"], report["backend"], report["threads"], report["chunk_size"]) ==
                       ("threads", "opencl", 2, 1 << 20), f"{what}: {report}")
            # -v names the engine, its workers and what ran the AES; there is no GPU section any more.
            self.check(set(report) == {"mode", "key_bits", "direction", "engine", "threads", "parallel",
                                       "chunk_size", "bytes_in", "bytes_out", "seconds", "gbps", "backend"},
                       f"{what}: {sorted(report)}")
            lines = proc.stderr.decode().splitlines()
            self.check(len(lines) == 1 and lines[0].endswith(", threads engine, 2 workers, opencl"),
                       f"{what}: {lines}")
        self.finish()

    def test_what_a_gpu_does_not_run_goes_to_the_cpu(self):
        key, key_file, plain, inp, iv = key_and_input(self, 100_003)
        for mode, form in (("cbc", self.FORMS[0]), ("ofb", self.FORMS[1])):
            proc = run_paes(["encrypt", *form, "--mode", mode, "--key-file", key_file, "--iv", iv.hex(), inp,
                        "-o", self.path(mode), "--json"])
            self.assertEqual(proc.returncode, 0, describe(proc))
            self.assertEqual(read_file(self.path(mode)), self.oracle(mode, key, iv, plain, False))
            # The report names the CPU backend that ran the AES, and one note says why it wasn't the GPU.
            report = json.loads(proc.stdout)
            self.assertEqual((report["engine"], report["bytes_in"]), ("threads", len(plain)), report)
            self.assertIn(report["backend"], cpu_backends(), report)
            self.assertEqual(proc.stderr.decode(), f"paes: note: the opencl backend doesn't run {mode} encryption: "
                                                   f"it runs on the CPU ({report['backend']})\n")
        for direction, form, source in (("encrypt", self.FORMS[0], inp),
                                        ("decrypt", self.FORMS[1], self.path("sealed"))):
            out = self.path("sealed" if direction == "encrypt" else "back")
            proc = run_paes([direction, *form, "--key-file", key_file, source, "-o", out, "--json"])
            self.assertEqual(proc.returncode, 0, describe(proc))
            report = json.loads(proc.stdout)
            # Auto's CPU backend for a file of this size (ipsec-mb only from 4 MiB on), which the note names.
            self.assertEqual((report["engine"], report["mode"]), ("threads", "sealed"), report)
            self.assertIn(report["backend"], cpu_backends(), report)
            self.assertEqual(proc.stderr.decode(), "paes: note: the opencl backend doesn't run the sealed format "
                                                   f"(AES-GCM): it runs on the CPU ({report['backend']})\n")
        self.assertEqual(read_file(self.path("back")), plain)

    def test_streams_run_on_the_device(self):
        key, iv = os.urandom(16), os.urandom(16)
        key_file = write_file(self.path("key"), key, 0o600)
        plain = os.urandom((3 << 20) + 5)
        # From a pipe into a file (a report), then from a pipe into a pipe.
        proc = subprocess.run([PAES, "encrypt", "--engine", "opencl", "--mode", "ctr", "--key-file", key_file,
                               "--iv", iv.hex(), "--threads", "4", "--json", "-", "-o", self.path("ctr")],
                              input=plain, capture_output=True, timeout=300)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(proc.stderr, b"")
        self.assertEqual(read_file(self.path("ctr")), self.oracle("ctr", key, iv, plain, False))
        report = json.loads(proc.stdout)
        self.assertEqual((report["engine"], report["backend"], report["bytes_in"]), ("threads", "opencl", len(plain)),
                         report)
        ciphertext = self.oracle("cbc", key, iv, plain, False)
        proc = subprocess.run([PAES, "decrypt", "--backend", "opencl", "--mode", "cbc", "--key-file", key_file,
                               "--iv", iv.hex(), "--threads", "4", "--chunk-size", "1M"],
                              input=ciphertext, capture_output=True, timeout=300)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(proc.stderr, b"")
        self.assertEqual(proc.stdout, plain)

    def test_device_choice(self):
        key_file = write_file(self.path("key"), os.urandom(16), 0o600)
        plain = os.urandom(1000)
        inp = write_file(self.path("in"), plain)
        job = ["encrypt", "--mode", "ctr", "--key-file", key_file, "--iv", "00" * 16, inp, "-o", self.path("out")]
        proc = run_paes(job + ["--backend", "opencl", "--device", "0"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        os.unlink(self.path("out"))
        count = len(INFO["opencl_devices"])
        for extra, needle in ((["--engine", "opencl", "--device", str(count)], f"no OpenCL device {count}: this machine has"),
                              (["--engine", "threads", "--device", "0"], "--device picks a GPU"),
                              (["--backend", "openssl", "--device", "0"], "--device picks a GPU"),
                              (["--engine", "opencl", "--backend", "openssl"], "drop --backend openssl")):
            proc = run_paes(job + extra)
            lines = proc.stderr.decode().strip().splitlines()
            self.check(proc.returncode == 2, f"{extra}: {describe(proc)}")
            self.check(len(lines) == 1 and needle in lines[0], f"{extra}: {lines}")
            self.check(sorted(os.listdir(self.tmp)) == ["in", "key"], f"{extra}: left {os.listdir(self.tmp)}")
        self.finish()

    def test_bench_reports_the_link_and_three_figures(self):
        proc = run_paes(["bench", "--engine", "opencl", "--modes", "ctr", "--key-bits", "128", "--directions",
                    "encrypt", "--size", "1M,4M", "--repeat", "1", "--json"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        records = json.loads(proc.stdout)
        self.assertEqual(sorted({r["figure"] for r in records}),
                         ["file", "kernel", "link_both_ways", "link_down", "link_up", "start", "transfers"])
        start = [r for r in records if r["figure"] == "start"]
        self.assertEqual(len(start), 1)
        self.assertGreater(start[0]["seconds"], 0)
        rates = [r for r in records if r["figure"] != "start"]
        self.assertEqual(sorted({r["work_bytes"] for r in rates if not r["figure"].startswith("link")}),
                         [1 << 20, 4 << 20])
        self.assertTrue(all(r["gbps"] > 0 for r in rates), records)
        self.assertTrue(all(r["engine"] == "opencl" for r in records), records)
        # PoCL pins no caller memory: no pinned figures are made up for it.
        self.assertFalse(any(r["figure"] in ("transfers_pinned", "pin") for r in records), records)

    def test_bench_sweeps_launch_geometries(self):
        proc = run_paes(["bench", "--engine", "opencl", "--modes", "ctr", "--key-bits", "128", "--directions",
                    "encrypt", "--size", "1M", "--repeat", "1", "--group-sizes", "16,32", "--blocks-per-item",
                    "1,4,8", "--json"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        records = json.loads(proc.stdout)
        self.assertEqual(sorted((r["group_size"], r["blocks_per_item"]) for r in records),
                         [(g, b) for g in (16, 32) for b in (1, 4, 8)])
        self.assertTrue(all(r["figure"] == "kernel" and r["work_bytes"] == 1 << 20 and r["gbps"] > 0
                            for r in records), records)
        for argv, needle in ((["bench", "--modes", "ctr", "--group-sizes", "64"], b"give --engine and a GPU backend"),
                             (["bench", "--engine", "threads", "--modes", "ctr"], b"--engine takes a GPU backend")):
            proc = run_paes(argv)
            self.assertEqual(proc.returncode, 2, describe(proc))
            self.assertIn(needle, proc.stderr)


class AutoEngineCliTest(ScratchTestCase):
    def test_auto_keeps_small_jobs_on_the_cpu(self):
        key, key_file, plain, inp, iv = key_and_input(self, 3_000_017)
        proc = run_paes(["encrypt", "--engine", "auto", "--mode", "ctr", "--key-file", key_file, "--iv", iv.hex(),
                    "--json", inp, "-o", self.path("out")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        report = json.loads(proc.stdout)
        self.assertEqual(report["engine"], "threads")
        self.assertIn(report["backend"], cpu_backends(), "3 MB is below what pays for a GPU's transfers")
        self.assertRegex(report["engine_choice"], r"^auto chose the CPU: a job under [0-9]+ MiB never pays for a GPU's "
                                                  r"start-up$")
        self.assertEqual(report["bytes_in"], len(plain))
        expected = subprocess.run(openssl_enc_command(OPENSSL, "ctr", key, iv), input=plain,
                                  capture_output=True, check=True).stdout
        self.assertEqual(read_file(self.path("out")), expected)


class FaultyOpenClDeviceTest(ScratchTestCase):
    """The shim flips a bit in every 16-byte block the device's kernels write
    back: all of them (the self-test's too), or only reads bigger than the
    self-test's 64 bytes (the job's batches)."""

    prefix = "paes-gpu-fault-"
    SELF_TEST_TOO = 0
    BATCHES_ONLY = 65
    JOBS = (("encrypt", "ctr"), ("decrypt", "ctr"), ("encrypt", "ecb"), ("decrypt", "ecb"),
            ("decrypt", "cbc"), ("decrypt", "cfb"))

    def setUp(self):
        super().setUp()
        skip_without_opencl(self)
        if not CL_SHIM:
            self.skipTest("no --cl-shim given (tests/CMakeLists.txt builds it with the opencl backend)")
        self.key_file = write_file(self.path("key"), os.urandom(32).hex().encode() + b"\n", 0o600)

    def faulty(self, corrupt_min_bytes=None, fake_gpu=False):
        env = dict(os.environ, LD_PRELOAD=CL_SHIM)
        if corrupt_min_bytes is not None:
            env["PAES_CL_CORRUPT_MIN_BYTES"] = str(corrupt_min_bytes)
        if fake_gpu:
            env["PAES_CL_FAKE_GPU"] = "1"
        return env

    def job(self, direction, mode, inp, form=("--engine", "opencl")):
        return [direction, *form, "--mode", mode, "--key-file", self.key_file, "--no-pad",
                "-f", inp, "-o", self.path("out")] + (["--iv", "00" * 16] if mode != "ecb" else [])

    def test_shim_alone_changes_nothing(self):
        # So the failures below are the corruption's, not the preload's.
        inp = write_file(self.path("in"), os.urandom(1 << 20))
        proc = run_paes(self.job("encrypt", "ctr", inp), env=self.faulty())
        self.assertEqual(proc.returncode, 0, describe(proc))

    def test_explicit_backend_fails_its_self_test(self):
        inp = write_file(self.path("in"), os.urandom(1 << 20))
        for n, (direction, mode) in enumerate(self.JOBS):
            proc = run_paes(self.job(direction, mode, inp, OpenClCliTest.FORMS[n % 2]), env=self.faulty(self.SELF_TEST_TOO))
            what = f"{direction} {mode}"
            lines = proc.stderr.decode().strip().splitlines()
            self.check(proc.returncode == 1, f"{what}: {describe(proc)}")
            self.check(len(lines) == 1 and "failed its AES self-test" in lines[0] and "OpenCL device" in lines[0],
                       f"{what}: {lines}")
            self.check(sorted(os.listdir(self.tmp)) == ["in", "key"], f"{what}: left {os.listdir(self.tmp)}")
        self.finish()

    def test_wrong_batch_output_fails_the_run(self):
        # 1 MiB + 48: one batch of the default size, on one worker. 2 MiB + 48 in 512 KiB chunks: four chunks
        # and a 48-byte one on two workers' lanes (a job runs a worker per MiB of input: 1 MiB + 48 ran one
        # whatever --threads said). The self-test passes.
        one = write_file(self.path("one"), os.urandom((1 << 20) + 48))
        two = write_file(self.path("two"), os.urandom((2 << 20) + 48))
        lanes = ["--threads", "2", "--chunk-size", "512K"]
        # Without the shim, the two-lane jobs do run two workers.
        proc = run_paes(self.job("encrypt", "ctr", two) + lanes + ["--json"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(json.loads(proc.stdout)["threads"], 2, proc.stdout)
        os.unlink(self.path("out"))
        for n, (direction, mode) in enumerate(self.JOBS):
            inp, extra = (two, lanes) if n % 2 else (one, [])
            proc = run_paes(self.job(direction, mode, inp, OpenClCliTest.FORMS[n // 2 % 2]) + extra,
                       env=self.faulty(self.BATCHES_ONLY))
            what = f"{direction} {mode}"
            lines = proc.stderr.decode().strip().splitlines()
            self.check(proc.returncode == 1, f"{what}: {describe(proc)}")
            self.check(len(lines) == 1 and "gave wrong AES output" in lines[0] and "self-test" not in lines[0],
                       f"{what}: {lines}")
            self.check(sorted(os.listdir(self.tmp)) == ["key", "one", "two"], f"{what}: left {os.listdir(self.tmp)}")
        self.finish()

    def auto_job(self, corrupt_min_bytes, fake_gpu=True, env_extra=None):
        """--engine auto on a 256 MiB file (what auto sends to a GPU), PoCL's device posing as a GPU, with a
        rate cache of the test's own; every time paes loads the OpenCL platforms adds a line to self.trace."""
        inp = self.path("in")
        with open(inp, "wb") as f:
            f.truncate(256 << 20)
        proc = run_paes(self.job("encrypt", "ctr", inp, ("--engine", "auto")) + ["--json", "-v"],
                   env=self.auto_env(corrupt_min_bytes, fake_gpu, env_extra))
        return inp, proc

    def auto_env(self, corrupt_min_bytes=None, fake_gpu=True, env_extra=None):
        env = self.faulty(corrupt_min_bytes, fake_gpu=fake_gpu)
        env["PAES_CACHE_DIR"] = self.cache
        env["PAES_CL_TRACE"] = self.trace
        env.update(env_extra or {})
        return env

    @property
    def cache(self):
        if not hasattr(self, "_cache"):
            self._cache = tempfile.mkdtemp(prefix="paes-rate-cache-")
            self.addCleanup(shutil.rmtree, self._cache)
        return self._cache

    @property
    def trace(self):
        return os.path.join(self.cache, "opencl-calls")

    def platform_loads(self):
        """How often paes loaded the OpenCL platforms so far (the shim's trace)."""
        if not os.path.exists(self.trace):
            return 0
        with open(self.trace) as f:
            return len(f.readlines())

    def cached_rates(self):
        """The rate cache's lines: key, GPU backend, GPU bytes/s, CPU bytes/s, GPU start-up seconds, device."""
        with open(os.path.join(self.cache, "auto-rates")) as f:
            return [line.rstrip("\n").split("\t") for line in f]

    def test_auto_measures_once_and_keeps_a_slower_gpu_out(self):
        # PoCL posing as a GPU is far slower than the CPU's backend (a GPU's AES on two CPU cores): auto
        # measures both once, says so, runs the job on the CPU's backend and keeps the rates.
        _, proc = self.auto_job(None)
        self.assertEqual(proc.returncode, 0, describe(proc))
        report = json.loads(proc.stdout)
        self.assertEqual(report["engine"], "threads")
        self.assertIn(report["backend"], cpu_backends(), report)
        self.assertRegex(report["engine_choice"],
                         r"^auto chose the CPU: opencl [0-9.]+ GB/s with transfers \+ [0-9.]+ s to start "
                         r"\(started already\), the CPU [0-9.]+ GB/s: [0-9.]+ s against [0-9.]+ s for 256 MiB "
                         r"\(measured now, kept for next time\)$")
        self.assertIn(report["engine_choice"], proc.stderr.decode())  # -v says it
        rates = self.cached_rates()
        self.assertEqual(len(rates), 1)
        key, backend, gpu, cpu, start, device = rates[0]
        self.assertIn("|gpu stack ", key)
        self.assertEqual(backend, "opencl")
        self.assertLess(float(gpu), float(cpu))
        self.assertGreater(float(start), 0)
        self.assertTrue(device)
        loads = self.platform_loads()
        self.assertGreater(loads, 0)
        # The next such job trusts the rates: it never starts the device (a self-test that would fail
        # leaves no warning), nor even loads the OpenCL platforms to look for one.
        _, proc = self.auto_job(self.SELF_TEST_TOO)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn("(measured before)", json.loads(proc.stdout)["engine_choice"])
        self.assertNotIn(b"self-test", proc.stderr)
        self.assertEqual(self.platform_loads(), loads)
        # paes info shows what auto kept, with where it would turn to the GPU: never, being slower. (It
        # lists the OpenCL devices, so it loads the platforms: last, after the counts above.)
        info = run_paes(["info", "--json"], env=self.auto_env())
        self.assertEqual(info.returncode, 0, describe(info))
        kept = json.loads(info.stdout)["auto_kept"]
        self.assertEqual(len(kept), 1, kept)
        self.assertRegex(kept[0]["job"], r"^ctr encrypt AES-256, [0-9]+ threads, backend [a-z-]+$")
        self.assertEqual((kept[0]["gpu_backend"], kept[0]["device"], kept[0]["gpu_from_bytes"]),
                         ("opencl", device, None), kept)
        self.assertAlmostEqual(kept[0]["gpu_bytes_per_s"], float(gpu), delta=float(gpu) * 1e-5)
        info = run_paes(["info"], env=self.auto_env())
        self.assertIn(b"\n  ctr encrypt AES-256, ", info.stdout)
        self.assertIn(b": opencl (" + device.encode() + b") ", info.stdout)
        self.assertIn(b": the CPU at any size\n", info.stdout)

    def test_auto_keeps_finding_no_gpu_until_the_drivers_change(self):
        # Without the pose, PoCL's device is a CPU: auto finds no GPU, says so, keeps that, and later
        # jobs load no OpenCL platform to learn it again.
        _, proc = self.auto_job(None, fake_gpu=False)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(json.loads(proc.stdout)["engine_choice"],
                         "auto chose the CPU: no GPU for this job (looked now, kept for next time)")
        self.assertEqual([r[1:] for r in self.cached_rates()], [["none", "0", "0", "0", ""]])
        loads = self.platform_loads()
        self.assertGreater(loads, 0)
        _, proc = self.auto_job(None, fake_gpu=False)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(json.loads(proc.stdout)["engine_choice"],
                         "auto chose the CPU: no GPU for this job (looked before, and the GPU stack is unchanged)")
        self.assertEqual(self.platform_loads(), loads)
        # The same drivers installed elsewhere (OCL_ICD_VENDORS): another stack, so auto looks again.
        vendors = os.environ.get("OCL_ICD_VENDORS") or "/etc/OpenCL/vendors"
        elsewhere = self.path("vendors")
        os.mkdir(elsewhere)
        for name in os.listdir(vendors):
            if name.endswith(".icd"):
                shutil.copy(os.path.join(vendors, name), elsewhere)
        _, proc = self.auto_job(None, fake_gpu=False, env_extra={"OCL_ICD_VENDORS": elsewhere})
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn("(looked now", json.loads(proc.stdout)["engine_choice"])
        self.assertGreater(self.platform_loads(), loads)
        self.assertEqual(len(self.cached_rates()), 2)

    def test_auto_says_when_it_could_not_keep_what_it_found(self):
        # A cache directory that can't be made (a file stands in its place): the job runs, -v and --json
        # say nothing was kept, and one warning says why later jobs will look again.
        blocker = self.path("not-a-directory")
        with open(blocker, "w") as f:
            f.write("x")
        _, proc = self.auto_job(None, fake_gpu=False, env_extra={"PAES_CACHE_DIR": os.path.join(blocker, "sub")})
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(json.loads(proc.stdout)["engine_choice"],
                         "auto chose the CPU: no GPU for this job (looked now, not kept)")
        warnings = [l for l in proc.stderr.decode().splitlines() if "warning" in l]
        self.assertEqual(len(warnings), 1, proc.stderr.decode())
        self.assertIn("could not keep what it measured (can't create", warnings[0])
        self.assertIn("every such job measures again", warnings[0])

    def prefer_the_gpu(self):
        """Rewrites the kept rates as if the device had been the faster, and quick to start."""
        rates = self.cached_rates()
        with open(os.path.join(self.cache, "auto-rates"), "w") as f:
            for key, backend, gpu, cpu, _, device in rates:
                f.write(f"{key}\t{backend}\t{max(float(gpu), float(cpu)) * 2}\t{cpu}\t0\t{device}\n")

    def test_auto_runs_on_the_cpu_when_the_self_test_fails(self):
        inp, proc = self.auto_job(self.SELF_TEST_TOO)
        self.assertEqual(proc.returncode, 0, describe(proc))
        stderr = proc.stderr.decode()
        self.assertIn("failed its AES self-test", stderr)
        self.assertIn("paes: warning: auto runs this job on the CPU instead\n", stderr)
        report = json.loads(proc.stdout)
        self.assertEqual(report["engine"], "threads")
        self.assertIn(report["backend"], cpu_backends(), report)
        key = bytes.fromhex(read_file(self.key_file).decode().strip())
        with open(inp, "rb") as source, subprocess.Popen(openssl_enc_command(OPENSSL, "ctr", key, bytes(16)),
                                                         stdin=source, stdout=subprocess.PIPE) as oracle:
            expected = hashlib.sha256()
            for block in iter(lambda: oracle.stdout.read(1 << 20), b""):
                expected.update(block)
            self.assertEqual(oracle.wait(), 0)
        got = hashlib.sha256()
        with open(self.path("out"), "rb") as out:
            for block in iter(lambda: out.read(1 << 20), b""):
                got.update(block)
        self.assertEqual(got.hexdigest(), expected.hexdigest(), "output differs from openssl")

    def test_auto_fails_when_a_batch_is_wrong(self):
        # Past the self-test, some output exists: auto fails like an explicit backend. (A device that is
        # wrong while auto measures it is left for the CPU, like one failing its self-test.)
        _, proc = self.auto_job(self.BATCHES_ONLY)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn(b"paes: warning: auto runs this job on the CPU instead\n", proc.stderr)
        _, proc = self.auto_job(None)  # measures and keeps the rates
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.prefer_the_gpu()
        os.unlink(self.path("out"))
        _, proc = self.auto_job(self.BATCHES_ONLY)
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertIn(b"gave wrong AES output", proc.stderr)
        self.assertEqual(sorted(os.listdir(self.tmp)), ["in", "key"])


class CudaCliTest(ScratchTestCase):
    def test_no_device_is_one_clear_error(self):
        # Without CUDA in the build, or with it and no device: a usage error that says which, before any file.
        if INFO.get("cuda_devices"):
            self.skipTest("a CUDA device is present: tests/gpu/device_lane_test.cpp covers it")
        why = "no CUDA device" if backend_row("cuda").get("built_in") else "not built in"
        key_file = write_file(self.path("key"), os.urandom(32), 0o600)
        inp = write_file(self.path("in"), os.urandom(1000))
        for form in (["--engine", "cuda"], ["--backend", "cuda"]):
            proc = run_paes(["encrypt", *form, "--mode", "ctr", "--key-file", key_file, "--iv", "00" * 16,
                        inp, "-o", self.path("out")])
            lines = proc.stderr.decode().strip().splitlines()
            self.assertEqual(proc.returncode, 2, describe(proc))
            self.assertEqual(len(lines), 1, lines)
            self.assertIn("cipher backend cuda", lines[0])
            self.assertIn(why, lines[0])
            self.assertEqual(sorted(os.listdir(self.tmp)), ["in", "key"])


def main():
    global PAES, OPENSSL, INFO, CL_SHIM
    PAES, OPENSSL, rest = tool_paths(__doc__)
    parser = argparse.ArgumentParser()
    parser.add_argument("--cl-shim", help="the faulty-device shim (opencl_fault_shim.c)")
    opts, rest = parser.parse_known_args(rest)
    CL_SHIM = os.path.abspath(opts.cl_shim) if opts.cl_shim else None
    INFO = json.loads(subprocess.run([PAES, "info", "--json"], capture_output=True, check=True).stdout)
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
