#!/usr/bin/env python3
"""The GPU engines through the real binary: --engine opencl on whatever OpenCL
device there is (PoCL on the CPU in CI) gives openssl's bytes; what a GPU
doesn't run goes to the CPU with a note; --engine cuda without a device fails
with one clear line.

Run as:  python3 tests/gpu/test_gpu_cli.py --paes build/release/paes --openssl /usr/bin/openssl
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from harness import (ScratchTestCase, describe, openssl_enc_command, read_file, run_unittest,  # noqa: E402
                     tool_paths, write_file)

PAES = "paes"
OPENSSL = "openssl"
INFO = {}


def run(args):
    return subprocess.run([PAES] + [str(a) for a in args], capture_output=True, timeout=300,
                          stdin=subprocess.DEVNULL)


class OpenClCliTest(ScratchTestCase):
    prefix = "paes-gpu-cli-"

    def setUp(self):
        super().setUp()
        if "opencl" not in INFO.get("engines", ""):
            self.skipTest("this paes has no opencl engine (no OpenCL headers or ICD loader at build time)")
        if not INFO.get("opencl_devices"):
            self.skipTest("no OpenCL device (install pocl-opencl-icd for one on the CPU)")

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
                    for size in (0, 17, (1 << 20) + 5):
                        plain = os.urandom(size)
                        source = plain if direction == "encrypt" else self.oracle(mode, key, iv, plain, False)
                        expected = self.oracle(mode, key, iv, source, direction == "decrypt")
                        inp, out = write_file(self.path("in"), source), self.path("out")
                        args = [direction, "--engine", "opencl", "--mode", mode, "--key-file", key_file,
                                "-f", inp, "-o", out] + (["--iv", iv.hex()] if mode != "ecb" else [])
                        proc = run(args)
                        what = f"{direction} {mode}-{bits} size {size}"
                        self.check(proc.returncode == 0, f"{what}: {describe(proc)}")
                        if proc.returncode == 0:
                            self.check(read_file(out) == expected, f"{what}: output differs from openssl")
                            self.check(b"note" not in proc.stderr, f"{what}: fell back to the CPU: {proc.stderr!r}")
        self.finish()

    def test_what_a_gpu_does_not_run_goes_to_the_cpu(self):
        key = os.urandom(32)
        key_file = write_file(self.path("key"), key, 0o600)
        plain = os.urandom(100_003)
        inp = write_file(self.path("in"), plain)
        iv = os.urandom(16)
        proc = run(["encrypt", "--engine", "opencl", "--mode", "cbc", "--key-file", key_file, "--iv", iv.hex(),
                    inp, "-o", self.path("cbc")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn(b"runs on the CPU", proc.stderr)
        self.assertEqual(read_file(self.path("cbc")), self.oracle("cbc", key, iv, plain, False))
        proc = run(["encrypt", "--engine", "opencl", "--key-file", key_file, inp, "-o", self.path("sealed")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn(b"runs on the CPU", proc.stderr)
        proc = run(["decrypt", "--key-file", key_file, self.path("sealed"), "-o", self.path("back")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.path("back")), plain)

    def test_bench_reports_three_figures(self):
        proc = run(["bench", "--engine", "opencl", "--modes", "ctr", "--key-bits", "128", "--directions",
                    "encrypt", "--size", "1M,4M", "--repeat", "1", "--json"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        records = json.loads(proc.stdout)
        self.assertEqual(sorted({r["figure"] for r in records}), ["file", "kernel", "transfers"])
        self.assertEqual(sorted({r["work_bytes"] for r in records}), [1 << 20, 4 << 20])
        self.assertTrue(all(r["gbps"] > 0 and r["engine"] == "opencl" for r in records), records)


class AutoEngineCliTest(ScratchTestCase):
    def test_auto_keeps_small_jobs_on_the_cpu(self):
        key = os.urandom(32)
        key_file = write_file(self.path("key"), key, 0o600)
        plain = os.urandom(3_000_017)
        inp = write_file(self.path("in"), plain)
        iv = os.urandom(16)
        proc = run(["encrypt", "--engine", "auto", "--mode", "ctr", "--key-file", key_file, "--iv", iv.hex(),
                    "--json", inp, "-o", self.path("out")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        report = json.loads(proc.stdout)
        self.assertEqual(report["engine"], "threads", "3 MB is below what pays for a GPU's transfers")
        self.assertEqual(report["bytes_in"], len(plain))
        expected = subprocess.run(openssl_enc_command(OPENSSL, "ctr", key, iv), input=plain,
                                  capture_output=True, check=True).stdout
        self.assertEqual(read_file(self.path("out")), expected)


class CudaCliTest(ScratchTestCase):
    def test_no_device_is_one_clear_error(self):
        if "cuda" not in INFO.get("engines", ""):
            self.skipTest("this paes has no cuda engine (no nvcc at build time)")
        if INFO.get("cuda_devices"):
            self.skipTest("a CUDA device is present: tests/gpu/cuda_engine_test.cpp covers it")
        key_file = write_file(self.path("key"), os.urandom(32), 0o600)
        inp = write_file(self.path("in"), os.urandom(1000))
        proc = run(["encrypt", "--engine", "cuda", "--mode", "ctr", "--key-file", key_file, "--iv", "00" * 16,
                    inp, "-o", self.path("out")])
        lines = proc.stderr.decode().strip().splitlines()
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("no CUDA device", lines[0])
        self.assertEqual(sorted(os.listdir(self.tmp)), ["in", "key"])


def main():
    global PAES, OPENSSL, INFO
    PAES, OPENSSL, rest = tool_paths(__doc__)
    INFO = json.loads(subprocess.run([PAES, "info", "--json"], capture_output=True, check=True).stdout)
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
