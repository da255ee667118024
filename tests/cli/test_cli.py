#!/usr/bin/env python3
"""End-to-end tests of the real `paes` binary, with the `openssl` command as the oracle.

Run as:  python3 tests/cli/test_cli.py --paes build/release/paes --openssl /usr/bin/openssl

Covers:
  A. every mode (ecb cbc cfb cfb8 cfb1 ofb ctr) x AES-128/192/256 x encrypt/decrypt is
     byte-identical to `openssl enc`: the full cross of small sizes with threads 1/2/3,
     chunk sizes 16/64K/default and --engine serial; --no-pad for ecb/cbc; 1 MiB+5
     (cfb1: 64 KiB+3) with a few thread/chunk combinations.
  B. CTR counter carry across 32, 64 and 128 bits with tiny chunks and 3 threads.
  C. --key-file holding raw key bytes, or hex text with or without a newline.
  D. --json (one object, its fields, byte counts, chunk-size suffixes and rounding),
     `paes info`, `paes --help`, `paes encrypt --help`, `paes bench --json`, and the
     --key-hex warning.
  E. bad input: exit status (1 failure, 2 usage), one "paes: " line on stderr naming
     the problem, and nothing new left in the output directory; printed output (info,
     --help, --json, a recipient) that can't be written, to a full disk or a closed
     stdout, is exit 1.
  F. SIGINT mid-run leaves neither the output nor a temporary file behind; the progress
     line on a terminal is cut to its width, cleared when a signal ends paes, and not
     drawn among plaintext printed on that terminal.
  G. CTR output is the same for every thread count and chunk size.

Python 3.11 standard library only. Exits non-zero when any test fails; every skip
says why.
"""

import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import (NOBODY, ScratchTestCase, describe, killed_unless_finished, nobody_can_run,  # noqa: E402
                     openssl_enc, openssl_ok, oracle_input_and_output, random_raw_key, raw_args,
                     read_file, run_paes, run_test_script, write_file)

PAES = "paes"
OPENSSL = "openssl"

MODES = ["ecb", "cbc", "cfb", "cfb8", "cfb1", "ofb", "ctr"]
PADDED_MODES = {"ecb", "cbc"}
KEY_BITS = [128, 192, 256]
DIRECTIONS = ["encrypt", "decrypt"]
SMALL_SIZES = [0, 1, 15, 16, 17, 100]
NOPAD_SIZES = [0, 16, 48]
THREADS = [1, 2, 3]
CHUNKS = ["16", "64K", None]  # None: paes' default chunk size
# Independent paes runs of one oracle case go side by side (they spend most time starting up).
POOL = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)))


# --------------------------------------------------------------------------- helpers

def cipher_args(direction, mode, key, iv, inp, out, key_file=None, extra=()):
    """The argument list of one encrypt/decrypt run, the key in a file or as --key-hex;
    no -o when `out` is None."""
    key_args = ["--key-file", key_file] if key_file else ["--key-hex", key.hex()]
    return raw_args(direction, mode, key_args, iv, extra, inp, out)


def combo_args(threads=None, chunk=None, engine=None):
    args = []
    if engine:
        args += ["--engine", engine]
    if threads is not None:
        args += ["--threads", str(threads)]
    if chunk is not None:
        args += ["--chunk-size", chunk]
    return args



class PaesTestCase(ScratchTestCase):
    """ScratchTestCase with this script's paes helpers."""

    prefix = "paes-cli-"

    def compare_with_openssl(self, direction, mode, key, iv, plaintext, combos, nopad=False, label=""):
        """Checks paes against openssl for one message under every (threads, chunk, engine)
        in `combos`; the paes runs go in parallel, each to its own output file."""
        out_dir = self.path("out")
        os.makedirs(out_dir, exist_ok=True)
        inp = self.path("in.bin")
        source, expected = oracle_input_and_output(direction, mode, key, iv, plaintext, nopad)
        write_file(inp, source)

        def one_combination(index, threads, chunk, engine):
            out = os.path.join(out_dir, f"result-{index}.bin")
            extra = combo_args(threads, chunk, engine) + (["--no-pad"] if nopad else [])
            args = cipher_args(direction, mode, key, iv, inp, None, extra=extra)
            proc, got = self.output_of(args, out)
            what = (f"{direction} {mode}-{len(key) * 8} {label}size {len(plaintext)} "
                    f"threads={threads} chunk={chunk} engine={engine} nopad={nopad}")
            if proc.returncode != 0:
                return f"{what}: {describe(proc)}  [paes {' '.join(map(str, args))}]"
            if got != expected:
                return (f"{what}: output differs from openssl "
                        f"({None if got is None else len(got)} vs {len(expected)} bytes)")
            return None

        for problem in POOL.map(lambda ic: one_combination(ic[0], *ic[1]), enumerate(combos)):
            self.check(problem is None, problem)
        leftovers = os.listdir(out_dir)
        self.check(not leftovers, f"files left in the output directory: {leftovers}")


# --------------------------------------------------------------------------- A. oracle

class OracleTest(PaesTestCase):
    """A: byte-identical to `openssl enc` in every mode, key size and direction."""
    ctest_labels = ("threads", "slow")

    SMALL_COMBOS = [(t, c, None) for t in THREADS for c in CHUNKS] + [(None, None, "serial")]

    def small_cross(self, modes):
        for mode in modes:
            for bits in KEY_BITS:
                key, iv = os.urandom(bits // 8), os.urandom(16)
                for direction in DIRECTIONS:
                    for size in SMALL_SIZES:
                        self.compare_with_openssl(direction, mode, key, iv, os.urandom(size),
                                         self.SMALL_COMBOS)
        self.finish()

    def test_small_block_modes(self):
        self.small_cross(["ecb", "cbc"])

    def test_small_cfb_modes(self):
        self.small_cross(["cfb", "cfb8", "cfb1"])

    def test_small_ofb_ctr(self):
        self.small_cross(["ofb", "ctr"])

    def test_no_pad(self):
        for mode in sorted(PADDED_MODES):
            for bits in KEY_BITS:
                key, iv = os.urandom(bits // 8), os.urandom(16)
                for direction in DIRECTIONS:
                    for size in NOPAD_SIZES + [1024 * 1024]:
                        combos = self.SMALL_COMBOS if size < 1024 else [(3, "16", None), (2, None, None)]
                        self.compare_with_openssl(direction, mode, key, iv, os.urandom(size), combos,
                                         nopad=True)
        self.finish()

    def test_large(self):
        combos = [(1, None, None), (2, "64K", None), (3, "16", None), (3, "4K", None),
                  (None, None, "serial")]
        for mode in MODES:
            size = 64 * 1024 + 3 if mode == "cfb1" else 1024 * 1024 + 5  # openssl cfb1 is slow
            for bits in KEY_BITS:
                key, iv = os.urandom(bits // 8), os.urandom(16)
                for direction in DIRECTIONS:
                    self.compare_with_openssl(direction, mode, key, iv, os.urandom(size), combos,
                                     label="large ")
        self.finish()

    def test_default_threads_and_engine(self):
        # No --threads, --chunk-size or --engine at all.
        for mode in MODES:
            key, iv = os.urandom(32), os.urandom(16)
            for direction in DIRECTIONS:
                self.compare_with_openssl(direction, mode, key, iv, os.urandom(200 * 1024 + 9),
                                 [(None, None, None), (None, None, "threads")])
        self.finish()


# --------------------------------------------------------------------------- B. CTR carry

class CtrCarryTest(PaesTestCase):
    """B: the CTR counter carries across the 32-, 64- and full 128-bit boundaries."""
    ctest_labels = ("threads",)

    def test_counter_carry(self):
        prefixes = {
            "low 32 bits ff": os.urandom(12) + b"\xff" * 4,
            "low 64 bits ff": os.urandom(8) + b"\xff" * 8,
            "all 128 bits ff": b"\xff" * 16,
            "low 32 bits fe": os.urandom(12) + b"\xff\xff\xff\xfe",
        }
        for label, iv in prefixes.items():
            for bits in KEY_BITS:
                key = os.urandom(bits // 8)
                for size in [300, 517]:
                    data = os.urandom(size)
                    for direction in DIRECTIONS:
                        self.compare_with_openssl(direction, "ctr", key, iv, data,
                                         [(3, "16", None), (3, "32", None), (1, "16", None),
                                          (None, None, "serial")],
                                         label=f"iv {label} ")
        self.finish()


# --------------------------------------------------------------------------- C. key files

class KeyFileTest(PaesTestCase):
    """C: --key-file with raw key bytes or with hex text; same result as --key-hex."""

    def test_key_file_forms(self):
        data = os.urandom(1000)
        inp = write_file(self.path("in.bin"), data)
        for bits in KEY_BITS:
            key, iv = random_raw_key(bits // 8), os.urandom(16)  # never ambiguous with hex text
            expected = openssl_ok("cbc", key, iv, data)
            forms = {
                "raw": key,
                "hex+newline": key.hex().encode() + b"\n",
                "hex": key.hex().encode(),
                "HEX+newline": key.hex().upper().encode() + b"\n",
            }
            for name, content in forms.items():
                key_file = write_file(self.path(f"key-{bits}-{name}"), content, 0o600)
                out = self.path(f"out-{bits}-{name}")
                proc = run_paes(cipher_args("encrypt", "cbc", key, iv, inp, out, key_file=key_file))
                self.assertEqual(proc.returncode, 0, f"key file {name}: {describe(proc)}")
                self.assertNotIn("warning", proc.stderr.decode(errors="replace").lower(),
                                 f"key file {name}: unexpected warning")
                self.assertEqual(read_file(out), expected, f"key file {name} ({bits} bits)")
                back = self.path(f"back-{bits}-{name}")
                proc = run_paes(cipher_args("decrypt", "cbc", key, iv, out, back, key_file=key_file))
                self.assertEqual(proc.returncode, 0, f"key file {name} decrypt: {describe(proc)}")
                self.assertEqual(read_file(back), data)

    def test_key_hex_warns_but_succeeds(self):
        data = os.urandom(64)
        key, iv = os.urandom(16), os.urandom(16)
        inp = write_file(self.path("in.bin"), data)
        out = self.path("out.bin")
        proc = run_paes(cipher_args("encrypt", "ctr", key, iv, inp, out))
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertIn("warning", proc.stderr.decode(errors="replace").lower())
        self.assertEqual(read_file(out), openssl_ok("ctr", key, iv, data))


# --------------------------------------------------------------------------- D. JSON, info, help, bench

class ReportingTest(PaesTestCase):
    """D: --json, info, help and bench output."""
    ctest_labels = ("threads",)

    JSON_KEYS = {"mode", "key_bits", "direction", "engine", "threads", "chunk_size",
                 "bytes_in", "bytes_out", "seconds", "gbps"}

    def run_json(self, args, input_bytes=None):
        proc = run_paes(args, input_bytes)
        self.assertEqual(proc.returncode, 0, describe(proc))
        try:
            report = json.loads(proc.stdout.decode())
        except ValueError as e:
            self.fail(f"--json stdout is not one JSON value ({e}): {proc.stdout[:500]!r}")
        self.assertIsInstance(report, dict, "--json must print one JSON object")
        missing = self.JSON_KEYS - report.keys()
        self.assertFalse(missing, f"--json lacks {sorted(missing)}: {report}")
        for k in ["key_bits", "threads", "chunk_size", "bytes_in", "bytes_out"]:
            self.assertIsInstance(report[k], int, f"{k} should be an integer: {report}")
        for k in ["seconds", "gbps"]:
            self.assertIsInstance(report[k], (int, float), f"{k} should be a number: {report}")
            self.assertGreaterEqual(report[k], 0)
        return report

    def test_json_byte_counts(self):
        key, iv = os.urandom(16), os.urandom(16)
        plain = write_file(self.path("plain"), os.urandom(100))
        enc = self.path("enc")
        report = self.run_json(cipher_args("encrypt", "cbc", key, iv, plain, enc,
                                           extra=["--json", "--threads", "2"]))
        self.assertEqual((report["mode"], report["key_bits"], report["direction"]),
                         ("cbc", 128, "encrypt"), report)
        self.assertEqual((report["bytes_in"], report["bytes_out"]), (100, 112), report)
        self.assertEqual(os.path.getsize(enc), 112)
        dec = self.path("dec")
        report = self.run_json(cipher_args("decrypt", "cbc", key, iv, enc, dec, extra=["--json"]))
        self.assertEqual((report["direction"], report["bytes_in"], report["bytes_out"]),
                         ("decrypt", 112, 100), report)
        key = os.urandom(32)
        ctr_out = self.path("ctr")
        report = self.run_json(cipher_args("encrypt", "ctr", key, iv, plain, ctr_out,
                                           extra=["--json", "--engine", "serial"]))
        self.assertEqual((report["mode"], report["key_bits"], report["engine"]),
                         ("ctr", 256, "serial"), report)
        self.assertEqual((report["bytes_in"], report["bytes_out"]), (100, 100), report)

    def test_json_chunk_size_and_threads(self):
        key, iv = os.urandom(24), os.urandom(16)
        data = os.urandom(300 * 1024)
        inp = write_file(self.path("in"), data)
        expected = openssl_ok("ctr", key, iv, data)
        for chunk, want in [("64K", 65536), ("100", 96), ("4096", 4096), ("1M", 1048576)]:
            out = self.path(f"out-{chunk}")
            report = self.run_json(cipher_args("encrypt", "ctr", key, iv, inp, out,
                                               extra=["--json", "--engine", "threads",
                                                      "--threads", "3", "--chunk-size", chunk]))
            self.assertEqual(report["chunk_size"], want, f"--chunk-size {chunk}: {report}")
            # "threads" counts the workers that ran: never more than the chunks, nor
            # than one per MiB of input (300 KiB: one).
            self.assertEqual((report["engine"], report["threads"], report["key_bits"]),
                             ("threads", 1, 192), report)
            self.assertEqual(read_file(out), expected, f"--chunk-size {chunk}")
        # Left to paes, the chunks are fitted to the input and the workers it pays for:
        # 300 KiB pays for one, which takes a whole 1 MiB chunk; 3 MiB on 3 threads
        # would be three 1 MiB chunks, so it takes the smallest fitted ones (4 a worker).
        big = os.urandom(3 * 1024 * 1024)
        big_expected = openssl_ok("ctr", key, iv, big)
        write_file(self.path("in-big"), big)
        for name, want in (("in", (1048576, 1)), ("in-big", (262144, 3))):
            out = self.path(f"out-fitted-{name}")
            report = self.run_json(cipher_args("encrypt", "ctr", key, iv, self.path(name), out,
                                               extra=["--json", "--threads", "3"]))
            self.assertEqual((report["chunk_size"], report["threads"]), want, report)
            self.assertEqual(read_file(out), expected if name == "in" else big_expected, f"fitted chunks, {name}")
        # A stream's workers are counted from what it turned out to hold, as a file's from its size.
        for size, want in [(len(big), 3), (len(data), 1), (100, 1)]:
            out = self.path(f"out-stream-{size}")
            report = self.run_json(cipher_args("encrypt", "ctr", key, iv, "-", out,
                                               extra=["--json", "--threads", "3", "--chunk-size", "64K"]),
                                   input_bytes=big[:size])
            self.assertEqual((report["bytes_in"], report["threads"]), (size, want), report)
            self.assertEqual(read_file(out), big_expected[:size], f"a {size}-byte stream")

    def test_size_suffixes_accepted(self):
        key, iv = os.urandom(16), os.urandom(16)
        data = os.urandom(5000)
        inp = write_file(self.path("in"), data)
        expected = openssl_ok("ofb", key, iv, data)
        for chunk in ["64K", "4M", "1G"]:
            out = self.path(f"out-{chunk}")
            proc = run_paes(cipher_args("encrypt", "ofb", key, iv, inp, out,
                                   extra=["--chunk-size", chunk]))
            self.assertEqual(proc.returncode, 0, f"--chunk-size {chunk}: {describe(proc)}")
            self.assertEqual(read_file(out), expected, f"--chunk-size {chunk}")

    def test_info(self):
        proc = run_paes(["info"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        text = proc.stdout.decode(errors="replace")
        for needle in ["OpenSSL 3", "AES-NI", "serial", "threads"]:
            self.assertIn(needle, text, f"`paes info` lacks {needle!r}:\n{text}")
        info = json.loads(run_paes(["info", "--json"]).stdout)
        cuda = next(b for b in info["backends"] if b["name"] == "cuda")
        if cuda["built_in"]:
            # The runtime paes was built with and the driver's version: why a GPU machine may list no device.
            self.assertRegex(info["cuda_versions"], r"^runtime \d+\.\d+, driver (none|\d+\.\d+)$")
            self.assertEqual(cuda["versions"], info["cuda_versions"])
            self.assertIn("\n  cuda: " + (info["cuda_versions"] if cuda["available"] else "unavailable, "), text)
        else:
            self.assertNotIn("cuda_versions", info)
            self.assertIn("\n  cuda: unavailable, not built in", text)
        # The MPI of paes-mpi, from the build (test_mpi.py checks which); null without an mpi engine.
        if info["mpi"] is None:
            self.assertNotIn("\nMPI:", text)
        else:
            self.assertTrue(info["mpi"]["library"] and os.access(info["mpi"]["launcher"], os.X_OK), info["mpi"])
            self.assertIn(f"\nMPI:         paes-mpi built with {info['mpi']['library']}; launch it with "
                          f"{info['mpi']['launcher']} -n N", text)

    def test_info_says_when_auto_can_keep_nothing(self):
        env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME", "PAES_CACHE_DIR")}
        for extra, where, why in (({}, None, "HOME, XDG_CACHE_HOME and PAES_CACHE_DIR are unset"),
                                  ({"PAES_CACHE_DIR": "/dev/null/x"}, "/dev/null/x/auto-rates",
                                   "/dev/null is not a directory")):
            info = json.loads(subprocess.run([PAES, "info", "--json"], env=dict(env, **extra),
                                             capture_output=True, check=True).stdout)
            self.assertEqual(info["auto_rate_cache"], where)
            self.assertIn(why, info.get("auto_rate_cache_problem", ""))
            text = subprocess.run([PAES, "info"], env=dict(env, **extra), capture_output=True, check=True).stdout
            self.assertIn(b"can't keep what it measures", text)

    def test_info_lists_mpi_only_where_paes_mpi_is(self):
        # --engine mpi hands the job to paes-mpi beside paes: a paes copied on its own can't run it,
        # and scripts decide by this list.
        beside = os.path.join(os.path.dirname(os.path.realpath(PAES)), "paes-mpi")
        if not os.access(beside, os.X_OK):
            self.skipTest("SKIPPED: this build has no paes-mpi (no MPI found)")
        self.assertIn("mpi", json.loads(run_paes(["info", "--json"]).stdout)["engines"].split())
        alone = os.path.join(self.tmp, "paes")
        with open(os.path.realpath(PAES), "rb") as src, open(alone, "wb") as dst:
            dst.write(src.read())
        os.chmod(alone, 0o755)
        proc = subprocess.run([alone, "info", "--json"], capture_output=True, timeout=120)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertNotIn("mpi", json.loads(proc.stdout)["engines"].split())
        # Issue 44, item 4: nor its launcher, as if it could run; what to install instead.
        self.assertIsNone(json.loads(proc.stdout)["mpi"])
        text = subprocess.run([alone, "info"], capture_output=True, timeout=120, check=True).stdout.decode()
        self.assertNotIn("launch it with", text)
        self.assertIn("MPI:         not installed", text)
        self.assertIn("paes-mpi package", text)

    def test_help(self):
        for args in (["--help"], ["encrypt", "--help"]):
            proc = run_paes(args)
            self.assertEqual(proc.returncode, 0, f"paes {' '.join(args)}: {describe(proc)}")
            self.assertIn("Example", proc.stdout.decode(errors="replace"),
                          f"paes {' '.join(args)} shows no examples")

    def test_auto_always_says_why(self):
        # --json's engine_choice (and -v's line) was missing whenever auto never looked for a GPU.
        key_file = write_file(self.path("auto.key"), random_raw_key(16), 0o600)
        inp = write_file(self.path("auto.in"), os.urandom(100_000))
        info = json.loads(run_paes(["info", "--json"]).stdout)
        # A build with no GPU backend (the sanitizer presets) has that reason first.
        has_gpu = any(b.get("gpu") and b["built_in"] for b in info["backends"])
        no_gpu = "this paes has no GPU backend"
        for args, why in ((["--mode", "ctr", "--iv", "00" * 16], "never pays for a GPU's start-up" if has_gpu else no_gpu),
                          (["--mode", "cbc", "--iv", "00" * 16], "runs on the CPU" if has_gpu else no_gpu),
                          ([], "the sealed format (AES-GCM) runs on the CPU")):
            out = self.path("auto.out")
            proc = run_paes(["encrypt", "--engine", "auto", "--key-file", key_file, "--json"] + args + [inp, "-o", out])
            self.assertEqual(proc.returncode, 0, describe(proc))
            choice = json.loads(proc.stdout).get("engine_choice", "")
            self.assertIn(why, choice, args)
            os.remove(out)

    def test_backend_choice_is_reported_and_gives_openssls_bytes(self):
        """--backend (or PAES_BACKEND) picks the CPU's AES library; -v and --json name the
        one that ran; every choice gives openssl's bytes; modes ipsec-mb lacks run on OpenSSL."""
        info = json.loads(run_paes(["info", "--json"]).stdout)
        available = [b["name"] for b in info["backends"] if b["available"]]
        self.assertIn("openssl", available, info["backends"])
        key, iv = os.urandom(32), os.urandom(16)
        data = os.urandom(300 * 1024 + 5)
        inp = write_file(self.path("in"), data)
        for backend in available:
            for mode in ["ctr", "cbc", "ofb"]:
                expected = openssl_ok(mode, key, iv, data)
                out = self.path(f"out-{backend}-{mode}")
                report = self.run_json(cipher_args("encrypt", mode, key, iv, inp, out,
                                                   extra=["--json", "--backend", backend]))
                # CBC encryption and OFB are OpenSSL's on every backend.
                ran = backend if mode == "ctr" else "openssl"
                self.assertEqual(report.get("backend"), ran, f"--backend {backend} {mode}: {report}")
                self.assertEqual(read_file(out), expected, f"--backend {backend} {mode}")
            env_out = self.path(f"env-{backend}")
            proc = subprocess.run([PAES] + cipher_args("encrypt", "ctr", key, iv, inp, env_out, extra=["-v"]),
                                  capture_output=True, timeout=120,
                                  env=dict(os.environ, PAES_BACKEND=backend))
            self.assertEqual(proc.returncode, 0, describe(proc))
            self.assertTrue(proc.stderr.decode().rstrip().endswith(", " + backend),
                            f"PAES_BACKEND={backend}: -v says {proc.stderr!r}")

    def test_bench_compares_backends_in_one_run(self):
        # The CPU's backends: a GPU backend's figures are paes bench --engine's (tests/gpu/test_gpu_cli.py).
        info = json.loads(run_paes(["info", "--json"]).stdout)
        available = [b["name"] for b in info["backends"] if b["available"] and not b["gpu"]]
        proc = run_paes(["bench", "--size", "1M", "--modes", "ctr,ofb", "--key-bits", "128", "--directions",
                    "encrypt", "--thread-counts", "1", "--repeat", "1", "--backend", ",".join(available),
                    "--json"], timeout=120)
        self.assertEqual(proc.returncode, 0, describe(proc))
        records = json.loads(proc.stdout)
        ctr = {r["backend"] for r in records if r["mode"] == "ctr" and r["engine"] == "serial"}
        ofb = {r["backend"] for r in records if r["mode"] == "ofb" and r["engine"] == "serial"}
        self.assertEqual(ctr, set(available), records)
        self.assertEqual(ofb, {"openssl"}, "OFB is OpenSSL's whatever the backend")

    def test_bench_reports_the_age_format(self):
        # age's payload beside the others (issue 41): one row of OpenSSL's ChaCha20-Poly1305 whatever the
        # backends asked for, 256-bit only, both directions.
        info = json.loads(run_paes(["info", "--json"]).stdout)
        available = [b["name"] for b in info["backends"] if b["available"] and not b["gpu"]]
        proc = run_paes(["bench", "--size", "2M", "--modes", "sealed,age", "--key-bits", "128,256",
                         "--thread-counts", "1,2", "--repeat", "1", "--backend", ",".join(available), "--json"],
                        timeout=120)
        self.assertEqual(proc.returncode, 0, describe(proc))
        records = json.loads(proc.stdout)
        age = [r for r in records if r["mode"] == "age"]
        self.assertEqual({(r["direction"], r["key_bits"]) for r in age}, {("encrypt", 256), ("decrypt", 256)}, age)
        self.assertEqual({r["backend"] for r in age if r["engine"] != "openssl"}, {"openssl"}, age)
        self.assertEqual({r["engine"] for r in age}, {"openssl", "serial", "threads"}, age)
        self.assertTrue(any(r["mode"] == "sealed" for r in records), "no sealed rows beside age's")

    def test_bench_json(self):
        args = ["bench", "--size", "1M", "--modes", "ctr", "--key-bits", "128",
                "--threads", "2", "--json"]
        proc = run_paes(args, timeout=120)
        self.assertEqual(proc.returncode, 0, describe(proc))
        text = proc.stdout.decode(errors="replace").strip()
        try:
            records = json.loads(text)
            if isinstance(records, dict):
                records = [records]
        except ValueError:
            try:
                records = [json.loads(line) for line in text.splitlines() if line.strip()]
            except ValueError as e:
                self.fail(f"bench --json is neither a JSON array nor JSON lines ({e}):\n{text[:1000]}")
        self.assertIsInstance(records, list)
        self.assertTrue(records, "bench --json printed no records")
        keys = {"mode", "direction", "key_bits", "engine", "threads", "bytes", "seconds", "gbps"}
        for rec in records:
            self.assertIsInstance(rec, dict, f"bench record is not an object: {rec!r}")
            self.assertFalse(keys - rec.keys(), f"bench record lacks {sorted(keys - rec.keys())}: {rec}")
            self.assertEqual(rec["mode"], "ctr", rec)
            self.assertEqual(rec["key_bits"], 128, rec)
        self.assertIn("openssl", [r["engine"] for r in records], "no record with engine openssl")


# --------------------------------------------------------------------------- E. errors

class ErrorTest(PaesTestCase):
    """E: bad input fails cleanly: exit status, one stderr line, nothing left behind."""

    def setUp(self):
        super().setUp()
        self.key, self.iv = random_raw_key(16), os.urandom(16)
        self.key_file = write_file(self.path("key"), self.key, 0o600)
        self.data = os.urandom(1000)
        self.inp = write_file(self.path("in.bin"), self.data)
        self.out_dir = self.new_dir("out")
        self.out = os.path.join(self.out_dir, "result.bin")

    def args(self, direction="encrypt", mode="cbc", inp=None, out=None, extra=(), iv=True):
        args = [direction, "--mode", mode, "--key-file", self.key_file]
        if iv and mode != "ecb":
            args += ["--iv", self.iv.hex()]
        return args + list(extra) + [inp or self.inp, "-o", out or self.out]

    # -- input
    def test_missing_input(self):
        self.fails(self.args(inp=self.path("does-not-exist")), 1, "no such file")

    def test_proc_file_is_read_to_its_end(self):
        """A /proc file's size is 0: read by its size, it was encrypted as empty, with
        exit 0. paes reads its own /proc/self/cmdline: its argv, each ending in NUL."""
        for engine in ("threads", "serial"):
            args = [str(a) for a in self.args("encrypt", "cbc", inp="/proc/self/cmdline",
                                              extra=["--engine", engine, "-f"])]
            proc = run_paes(args)
            self.assertEqual(proc.returncode, 0, describe(proc))
            want = b"".join(a.encode() + b"\0" for a in [PAES] + args)
            got = openssl_ok("cbc", self.key, self.iv, read_file(self.out), decrypt=True)
            self.assertEqual(got, want, f"--engine {engine}")

    def test_a_secret_and_the_data_both_on_stdin(self):
        """--key-file /dev/stdin took all of stdin for the key, then encrypted nothing, with
        exit 0. Standard input holds the data or one secret file, never both."""
        stdin = self.key.hex().encode() + b"\n" + self.data
        for args, words in (
                (["encrypt", "--mode", "ctr", "--key-file", "/dev/stdin", "--iv", self.iv.hex()],
                 "--key-file /dev/stdin reads standard input, which is also the input to encrypt"),
                (["encrypt", "--mode", "ctr", "--pbkdf2", "--passphrase-file", "/dev/fd/0"],
                 "--passphrase-file /dev/fd/0 reads standard input"),
                (["decrypt", "-i", "/dev/stdin", "-"], "-i /dev/stdin reads standard input"),
                (["encrypt", "--passphrase-file", "/dev/stdin", "-R", "-", self.inp],
                 "both read standard input")):
            self.fails(args + ["-o", self.out], 2, words, input_bytes=stdin)
        # A secret on stdin beside a named input is fine.
        proc = run_paes(["encrypt", "--mode", "ctr", "--key-file", "/dev/stdin", "--iv", self.iv.hex(), self.inp,
                    "-o", self.out], input_bytes=self.key.hex().encode())
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(read_file(self.out), openssl_ok("ctr", self.key, self.iv, self.data))
        os.remove(self.out)

    def test_unknown_command_is_named(self):
        self.assert_fails(["encrpyt", "x"], 2, "unknown command 'encrpyt'")

    def test_input_is_directory(self):
        self.fails(self.args(inp=self.new_dir("a-directory")), 1, "directory")

    def test_unreadable_input(self):
        secret = write_file(self.path("unreadable.bin"), self.data, 0o000)
        paes, why = nobody_can_run(PAES, self.tmp)
        if paes is None and why != "not root":
            self.skipTest(f"cannot run paes as an unprivileged user: {why}")
        if paes is None:  # not root: the permission bits apply to us directly
            self.fails(self.args(inp=secret), 1, "permission denied")
            return
        os.chmod(self.tmp, 0o777)
        os.chmod(self.out_dir, 0o777)
        os.chown(self.key_file, NOBODY, NOBODY)
        self.fails(self.args(inp=secret), 1, "permission denied", as_nobody=True, paes=paes)

    # -- output
    def test_output_exists_without_force(self):
        write_file(self.out, b"precious")
        self.fails(self.args(), 1, "exists")
        self.assertEqual(read_file(self.out), b"precious", "existing output was modified")
        proc = run_paes(self.args(extra=["-f"]))
        self.assertEqual(proc.returncode, 0, f"-f: {describe(proc)}")
        self.assertEqual(read_file(self.out), openssl_ok("cbc", self.key, self.iv, self.data))
        self.assertEqual(os.listdir(self.out_dir), ["result.bin"])
        write_file(self.out, b"precious again")
        proc = run_paes(self.args(extra=["--force"]))
        self.assertEqual(proc.returncode, 0, f"--force: {describe(proc)}")
        self.assertEqual(read_file(self.out), openssl_ok("cbc", self.key, self.iv, self.data))

    def test_output_directory_missing(self):
        missing = self.path("no-such-dir", "result.bin")
        self.fails(self.args(out=missing), 1, "no such file", out_dir=self.tmp)
        self.assertFalse(os.path.exists(os.path.dirname(missing)))

    def test_output_directory_unwritable(self):
        paes, why = nobody_can_run(PAES, self.tmp)
        if paes is None:
            if why != "not root":
                self.skipTest(f"cannot run paes as an unprivileged user: {why}")
            os.chmod(self.out_dir, 0o555)
            self.fails(self.args(), 1, "permission denied")
            return
        os.chmod(self.tmp, 0o777)
        os.chmod(self.inp, 0o644)
        os.chown(self.key_file, NOBODY, NOBODY)
        os.chmod(self.out_dir, 0o555)
        err = self.fails(self.args(), 1, "permission denied", as_nobody=True, paes=paes).stderr.decode()
        self.assertIn("temporary beside it", err, "why the directory matters")
        self.assertNotIn("redirect", err, "no file to write into in place")
        # Issue 44, item 9: a file its user may write, in a directory they may not: why, and what to do.
        os.chmod(self.out_dir, 0o755)
        existing = write_file(os.path.join(self.out_dir, "mine.bin"), b"old")
        os.chown(existing, NOBODY, NOBODY)
        os.chmod(self.out_dir, 0o555)
        err = self.fails(self.args(out=existing, extra=["-f"]), 1, "temporary beside it", as_nobody=True,
                         paes=paes, out_dir=None).stderr.decode()
        self.assertIn("give -o - and redirect: > FILE", err)
        self.assertEqual(read_file(existing), b"old")

    def test_output_is_terminal(self):
        with self.terminal() as (master, slave):
            tty = os.ttyname(slave)
            for extra in ([], ["-f"]):
                proc = run_paes(self.args(out=tty, extra=extra))
                err = proc.stderr.decode(errors="replace")
                lines = [l for l in err.splitlines() if l.strip()]
                what = f"-o {tty} {' '.join(extra)}"
                self.assertIn(proc.returncode, (1, 2), f"{what}: {describe(proc)}")
                self.assertEqual(len(lines), 1, f"{what}: expected one stderr line: {err!r}")
                self.assertTrue(lines[0].startswith("paes: "), f"{what}: {err!r}")
                self.assertIn("terminal", err.lower(), f"{what}: {err!r}")

    # -- keys and IVs
    def test_key_hex_wrong_length(self):
        args = ["encrypt", "--mode", "cbc", "--key-hex", os.urandom(20).hex(),
                "--iv", self.iv.hex(), self.inp, "-o", self.out]
        self.fails(args, 2, "key must be 16, 24 or 32 bytes")

    def test_key_hex_not_hex(self):
        args = ["encrypt", "--mode", "cbc", "--key-hex", "zz" * 16,
                "--iv", self.iv.hex(), self.inp, "-o", self.out]
        self.fails(args, 2, "hex")

    def test_key_file_wrong_length(self):
        # A key file that holds no key is the wrong file for --key-file: exit 2 (issue 44, item 11).
        self.key_file = write_file(self.path("bad-key"), random_raw_key(20), 0o600)
        self.fails(self.args(), 2, "key must be 16, 24 or 32 bytes")
        # Hex of the wrong length is counted in hex digits, its newline not among them.
        self.key_file = write_file(self.path("bad-key-hex"), os.urandom(31).hex()[:62].encode() + b"\n", 0o600)
        self.fails(self.args(), 2, "holds 62 hex digits; a key has 32, 48 or 64")
        # Any other text is not a key either: a passphrase file given as one is told where it goes.
        self.key_file = write_file(self.path("pass.txt"), b"secretpassphrase\n", 0o600)
        self.fails(self.args(), 2, "passphrase goes in --passphrase-file")

    def test_iv_missing(self):
        self.fails(self.args(iv=False), 2, "--iv")

    def test_iv_wrong_length(self):
        self.fails(self.args(iv=False, extra=["--iv", os.urandom(15).hex()]), 2, "iv")
        # An odd count of hex digits is a wrong length, not "not hex".
        self.fails(self.args(iv=False, extra=["--iv", self.iv.hex()[:31]]), 2, "got 31 hex digits")

    def test_iv_given_for_ecb(self):
        self.fails(self.args(mode="ecb", extra=["--iv", self.iv.hex()]), 2, "ecb")

    # -- lengths and padding
    def test_no_pad_unaligned_plaintext(self):
        inp = write_file(self.path("odd.bin"), os.urandom(17))
        for mode in ["ecb", "cbc"]:
            self.fails(self.args(mode=mode, inp=inp, extra=["--no-pad"]), 1, "multiple of 16")

    def test_unaligned_ciphertext(self):
        for size in [17, 31]:
            inp = write_file(self.path(f"odd-{size}.bin"), os.urandom(size))
            for mode in ["ecb", "cbc"]:
                self.fails(self.args("decrypt", mode=mode, inp=inp), 1, "multiple of 16")
                self.fails(self.args("decrypt", mode=mode, inp=inp, extra=["--no-pad"]),
                           1, "multiple of 16")

    def test_bad_padding(self):
        for mode in ["ecb", "cbc"]:
            # Last plaintext bytes that are not valid PKCS#7 padding.
            for tail in [b"\x00", b"\x11", b"\x03\x03\x02", b"\x10" * 15 + b"\x0f"]:
                plain = os.urandom(48 - len(tail)) + tail
                cipher = openssl_ok(mode, self.key, self.iv, plain, nopad=True)
                oracle = openssl_enc(mode, self.key, self.iv, cipher, decrypt=True)
                self.assertNotEqual(oracle.returncode, 0, f"oracle accepted padding {tail.hex()}")
                inp = write_file(self.path("bad-pad.bin"), cipher)
                self.fails(self.args("decrypt", mode=mode, inp=inp), 1, "bad decrypt")
            # The wrong key: find one openssl rejects, so the case is certain.
            cipher = openssl_ok(mode, self.key, self.iv, self.data)
            for _ in range(100):
                wrong = random_raw_key(16)
                if openssl_enc(mode, wrong, self.iv, cipher, decrypt=True).returncode != 0:
                    break
            self.key_file = write_file(self.path("wrong-key"), wrong, 0o600)
            inp = write_file(self.path("cipher.bin"), cipher)
            self.fails(self.args("decrypt", mode=mode, inp=inp), 1, "bad decrypt")
            self.key_file = self.path("key")

    # -- other arguments
    def test_bad_threads(self):
        for value in ["0", "abc"]:
            self.fails(self.args(extra=["--threads", value]), 2, "threads")

    def test_unknown_mode(self):
        self.fails(self.args(mode="xts"), 2, "mode")

    def test_unknown_backend(self):
        self.fails(self.args(extra=["--backend", "boringssl"]), 2, "--backend")

    def test_bad_chunk_size(self):
        for value in ["12Q", "abc"]:
            self.fails(self.args(extra=["--chunk-size", value]), 2, "")


class StandardOutputWriteTest(PaesTestCase):
    """E: what paes prints on stdout (info, --help, a --json summary, a recipient) and can't
    write, to a full disk or a closed stdout, is a failure (exit 1, one line naming the
    reason), not a silent success."""

    def run_to_broken_stdout(self, args, broken):
        """Runs paes with stdout on /dev/full ("full") or closed ("closed")."""
        cmd = [PAES] + [str(a) for a in args]
        if broken == "full":
            with open("/dev/full", "wb") as full:
                return subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, timeout=120)
        return subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh"] + cmd, stderr=subprocess.PIPE, timeout=120)

    def assert_write_fails(self, args, broken="full", also=""):
        proc = self.run_to_broken_stdout(args, broken)
        cmd = "paes " + " ".join(map(str, args))
        lines = [l for l in proc.stderr.decode(errors="replace").splitlines() if l.strip()]
        reason = "No space left on device" if broken == "full" else "Bad file descriptor"
        self.check(proc.returncode == 1 and len(lines) == 1
                   and lines[0].startswith(f"paes: writing to standard output: {reason}") and also in lines[0],
                   f"{cmd} (stdout {broken}): {describe(proc)}")

    def test_printed_output_that_cannot_be_written_fails(self):
        key_file = self.path("key")
        self.assertEqual(run_paes(["keygen", "-o", key_file]).returncode, 0)
        plain = write_file(self.path("plain"), os.urandom(100))
        identity = self.path("id")
        self.assertEqual(run_paes(["keygen", "--x25519", "-o", identity]).returncode, 0)
        for broken in ("full", "closed"):
            self.assert_write_fails(["info"], broken)
            self.assert_write_fails(["info", "--json"], broken)
            self.assert_write_fails(["--help"], broken)
            self.assert_write_fails(["keygen", "-y", identity], broken)
            self.assert_write_fails(["encrypt", "--key-file", key_file, plain, "-o", self.path(f"enc-{broken}"),
                                     "--json"], broken)
        self.finish()

    def test_keygen_says_where_the_identity_went(self):
        """keygen --x25519 wrote the identity before its recipient was lost: the message
        says where it is and how to print the recipient again."""
        for broken in ("full", "closed"):
            identity = self.path(f"id-{broken}")
            self.assert_write_fails(["keygen", "--x25519", "-o", identity], broken,
                                    also=f"keygen -y {identity}")
            self.check(os.path.getsize(identity) > 0, f"{broken}: no identity in {identity}")
        self.finish()

    def test_data_on_stdout_is_reported_once(self):
        """With the data itself on stdout, its write error is the one line."""
        key_file = self.path("key")
        self.assertEqual(run_paes(["keygen", "-o", key_file]).returncode, 0)
        plain = write_file(self.path("plain"), os.urandom(100))
        proc = self.run_to_broken_stdout(["encrypt", "--key-file", key_file, plain, "-o", "-"], "full")
        lines = [l for l in proc.stderr.decode(errors="replace").splitlines() if l.strip()]
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertEqual(len(lines), 1, describe(proc))
        self.assertIn("No space left on device", lines[0])


# --------------------------------------------------------------------------- F. SIGINT

class InterruptTest(PaesTestCase):
    """F: SIGINT mid-run leaves nothing in the output directory."""
    ctest_labels = ("threads",)

    def test_sigint_cleans_up(self):
        inp = self.path("zeros.bin")
        with open(inp, "wb") as f:
            f.truncate(512 * 1024 * 1024)  # sparse: costs no disk
        key_file = write_file(self.path("key"), random_raw_key(16), 0o600)
        out_dir = self.new_dir("out")
        out = os.path.join(out_dir, "big.enc")
        args = [PAES, "encrypt", "--mode", "ofb", "--key-file", key_file,
                "--iv", os.urandom(16).hex(), "--engine", "serial", inp, "-o", out]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with killed_unless_finished(proc):
            # Wait until it is writing (a temporary file shows up), at most ~0.3 s more.
            deadline = time.monotonic() + 5
            while not os.listdir(out_dir) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3 if not os.listdir(out_dir) else 0.1)
            if proc.poll() is not None:
                self.skipTest(f"paes finished (exit {proc.returncode}) before SIGINT could be sent")
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        self.assertNotEqual(proc.returncode, 0, "paes exited 0 after SIGINT")
        self.assertEqual(os.listdir(out_dir), [],
                         f"left behind after SIGINT: {os.listdir(out_dir)} (stderr {err!r})")


class ProgressOnATerminalTest(PaesTestCase):
    """F: the progress line on a terminal: cut to its width, cleared when a signal ends paes,
    and not drawn among plaintext printed on that terminal."""
    ctest_labels = ("threads",)

    def on_terminal(self, args, columns, stdout_too=False, signal_after=None, data=None):
        """Runs paes with stderr (and stdout, `stdout_too`) on a pseudo-terminal `columns`
        wide, feeding stdin 1 MiB every 0.2 s for 3 s (progress shows after 1 s of data): of
        `data` (15 MiB), else zeros; sends `signal_after` (a signal) instead of ending the
        input. Returns (exit, what the terminal got)."""
        master, slave = self.new_pseudo_terminal()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        proc = subprocess.Popen([PAES] + args, stdin=subprocess.PIPE, stderr=slave,
                                stdout=slave if stdout_too else subprocess.DEVNULL)
        os.close(slave)
        got = []

        def read_terminal():
            while True:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer is gone
                    return
                if not chunk:
                    return
                got.append(chunk)
        reader = threading.Thread(target=read_terminal)
        reader.start()
        try:
            with killed_unless_finished(proc):
                for i in range(15):
                    proc.stdin.write(data[i << 20:(i + 1) << 20] if data is not None else bytes(1 << 20))
                    proc.stdin.flush()
                    time.sleep(0.2)
                if signal_after is not None:
                    proc.send_signal(signal_after)
                proc.stdin.close()
                proc.wait(timeout=60)
        finally:
            reader.join(timeout=10)
            os.close(master)
        return proc.returncode, b"".join(got)

    def ctr_encrypt_args(self, direction="encrypt"):
        key_file = write_file(self.path("key"), random_raw_key(16), 0o600)
        return [direction, "--mode", "ctr", "--key-file", key_file, "--iv", os.urandom(16).hex()]

    def test_cut_to_a_narrow_terminal_and_cleared_at_the_end(self):
        rc, screen = self.on_terminal(self.ctr_encrypt_args() + ["-o", "/dev/null"], columns=30)
        self.assertEqual(rc, 0, screen[-200:])
        self.assertTrue(b"encrypting" in screen, screen[-200:])
        drawn = [part.replace(b"\x1b[K", b"") for part in screen.split(b"\r")]
        wide = [part for part in drawn if len(part) > 29]
        self.assertEqual(wide[:3], [], "lines wider than 29 columns wrap")
        self.assertTrue(screen.endswith(b"\r\x1b[K"), f"the line was not cleared: {screen[-80:]!r}")

    def test_cleared_when_a_signal_ends_paes(self):
        rc, screen = self.on_terminal(self.ctr_encrypt_args() + ["-o", "/dev/null"], columns=80,
                                      signal_after=signal.SIGINT)
        self.assertEqual(rc, -signal.SIGINT, screen[-200:])
        self.assertTrue(b"encrypting" in screen, screen[-200:])
        self.assertTrue(screen.endswith(b"\r\x1b[K"), f"the line was left on screen: {screen[-80:]!r}")

    def test_not_drawn_among_plaintext_printed_on_the_terminal(self):
        # A text plaintext: a binary one is refused on a terminal (issue 44, item 2).
        args = self.ctr_encrypt_args("decrypt")
        text = b"a line of plaintext on the terminal\n" * ((15 << 20) // 36 + 1)
        sealed = self.path("text.ctr")
        proc = run_paes(["encrypt"] + args[1:] + [write_file(self.path("text"), text[:15 << 20]), "-o", sealed])
        self.assertEqual(proc.returncode, 0, describe(proc))
        rc, screen = self.on_terminal(args, columns=80, stdout_too=True, data=read_file(sealed))
        self.assertEqual(rc, 0, screen[-200:])
        self.assertFalse(b"decrypting" in screen, "a progress line was drawn among the plaintext")


# --------------------------------------------------------------------------- G. invariance

class InvarianceTest(PaesTestCase):
    """G: CTR output does not depend on the thread count or chunk size."""
    ctest_labels = ("threads",)

    def test_ctr_threads_and_chunks(self):
        key, iv = os.urandom(32), os.urandom(16)
        data = os.urandom(3 * 1024 * 1024 + 7)
        inp = write_file(self.path("in"), data)
        expected = openssl_ok("ctr", key, iv, data)
        out = self.path("out")
        for threads in [1, 2, 3, 7]:
            for chunk in ["16", "4K", "1M", None]:
                proc, got = self.output_of(
                    cipher_args("encrypt", "ctr", key, iv, inp, None,
                                extra=combo_args(threads, chunk)), out)
                self.check(proc.returncode == 0 and got == expected,
                           f"threads={threads} chunk={chunk}: "
                           + (describe(proc) if proc.returncode else "output differs"))
        self.finish()


# --------------------------------------------------------------------------- main

if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
