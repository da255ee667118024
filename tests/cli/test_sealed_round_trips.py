#!/usr/bin/env python3
"""Sealed round trips, --range and keygen through the real binary.

Run as:  python3 tests/cli/test_sealed_round_trips.py --paes build/release/paes --openssl /usr/bin/openssl [TestClass ...]

One of the test_sealed_*.py files (the ctests cli_sealed.<class>); their shared helpers are
in tests/harness (sealed_cases, sealed_format, pipes). Covers:
  1. Round trips of the sealed format: sizes 0, 1 and around every segment boundary for
     --segment-size 1024 and 4096 with AES-128 and AES-256 keys from `paes keygen`, a few
     MiB with the default segment size; the ciphertext length and preamble fields; files
     sealed by the serial engine open with the threads engine (threads 1/2/3) and the
     other way round; passphrases (--passphrase-file, --passphrase-env): AES-256 with or
     without --key-bits 256, age's scrypt stanza in the header, --key-bits 128 refused;
     --key-env.
  8. keygen: mode 0600 whatever the umask, hex digits and a newline, no overwrite without -f.

Python 3.11 standard library only. Exits non-zero when any test fails; every skip says why.
"""

import json
import os
import re
import resource
import shutil
import stat
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import describe, read_file, run_paes, run_test_script, write_file  # noqa: E402
from harness.sealed_cases import SealedTestCase  # noqa: E402
from harness.sealed_format import (DEFAULT_SEGMENT, PREAMBLE_LEN, RAW_KEY_HEADER_LEN, TAG_LEN,  # noqa: E402
                                   boundary_sizes, header_len, sealed_len)

PAES = "paes"
OPENSSL = "openssl"
POOL = ThreadPoolExecutor(max_workers=max(2, min(4, os.cpu_count() or 2)))
# A raw-key file's header: its MAC line alone (no stanzas), after the preamble.
MAC_LINE = re.compile(rb"--- [A-Za-z0-9+/]{43}\n")
# A passphrase's header: age's scrypt stanza (salt, work factor, wrapped file key), then the MAC line.
SCRYPT_HEADER = re.compile(rb"-> scrypt ([A-Za-z0-9+/]{22}) ([1-9][0-9]*)\n[A-Za-z0-9+/]{43}\n--- [A-Za-z0-9+/]{43}\n")


# --------------------------------------------------------------------------- 1. round trips

class RoundTripTest(SealedTestCase):
    """1: sealed round trips, engines, thread counts, passphrases, --key-env."""
    ctest_labels = ("threads",)

    DECRYPT_COMBOS = [["--engine", "serial"], ["--threads", "1"], ["--threads", "2"],
                      ["--threads", "3"]]
    ENCRYPT_COMBOS = [["--engine", "serial"], ["--engine", "threads", "--threads", "3"]]

    def test_segment_boundaries(self):
        """Every size around the first boundaries, sealed by serial and threads engines,
        opened by serial and threads 1/2/3; ciphertext length and preamble checked."""
        out_dir = self.new_dir("out")
        jobs = []
        for bits in (128, 256):
            key = self.keygen(bits)
            key_len = bits // 8
            for seg in (1024, 4096):
                for size in boundary_sizes(seg, key_len):
                    jobs.append((key, key_len, seg, size))

        def one_size(index, job):
            key, key_len, seg, size = job
            problems = []
            data = os.urandom(size)
            inp = write_file(os.path.join(self.tmp, f"rt-in-{index}"), data)
            sealed_versions = []
            for e, enc in enumerate(self.ENCRYPT_COMBOS):
                out = os.path.join(self.tmp, f"rt-sealed-{index}-{e}")
                proc = run_paes(["encrypt", "--key-file", key, "--segment-size", seg] + enc
                           + [inp, "-o", out])
                what = f"AES-{key_len * 8} seg {seg} size {size} encrypt {enc}"
                if proc.returncode != 0 or not os.path.exists(out):
                    problems.append(f"{what}: {describe(proc)}")
                    continue
                sealed = read_file(out)
                if len(sealed) != sealed_len(size, seg, key_len):
                    problems.append(f"{what}: {len(sealed)} bytes, expected "
                                    f"{sealed_len(size, seg, key_len)}")
                expected_pre = (b"PAES" + bytes([3, 1, key_len, 0, 0, 0, 0, 0])
                                + struct.pack(">I", seg))
                if sealed[:16] != expected_pre:
                    problems.append(f"{what}: preamble {sealed[:16].hex()} expected "
                                    f"{expected_pre.hex()}")
                if sealed[16:PREAMBLE_LEN] == bytes(16):
                    problems.append(f"{what}: all-zero salt (a raw-key file's is random)")
                if not MAC_LINE.fullmatch(sealed[PREAMBLE_LEN:RAW_KEY_HEADER_LEN]):
                    problems.append(f"{what}: no MAC line after the preamble: "
                                    f"{sealed[PREAMBLE_LEN:RAW_KEY_HEADER_LEN]!r}")
                if sealed[RAW_KEY_HEADER_LEN] != header_len(key_len):
                    problems.append(f"{what}: header length byte {sealed[RAW_KEY_HEADER_LEN]}")
                sealed_versions.append((enc, out))
            if len(sealed_versions) == 2:
                a, b = (read_file(o) for _, o in sealed_versions)
                if a == b:
                    problems.append(f"seg {seg} size {size}: two seals are identical "
                                    f"(no fresh salt/nonce prefix)")
            for enc, sealed_path in sealed_versions:
                for dec in self.DECRYPT_COMBOS:
                    out = os.path.join(out_dir, f"rt-plain-{index}")
                    proc = run_paes(["decrypt", "--key-file", key] + dec + [sealed_path, "-o", out])
                    what = (f"AES-{key_len * 8} seg {seg} size {size} "
                            f"sealed by {enc} opened by {dec}")
                    got = None
                    if os.path.exists(out):
                        got = read_file(out)
                        os.remove(out)
                    if proc.returncode != 0:
                        problems.append(f"{what}: {describe(proc)}")
                    elif got != data:
                        problems.append(f"{what}: plaintext differs "
                                        f"({None if got is None else len(got)} bytes)")
                    elif proc.stderr:
                        problems.append(f"{what}: stderr {proc.stderr!r}")
                os.remove(sealed_path)
            os.remove(inp)
            return problems

        for problems in POOL.map(lambda ij: one_size(*ij), enumerate(jobs)):
            self.check(not problems, "; ".join(problems))
        self.check(not os.listdir(out_dir), f"leftovers: {os.listdir(out_dir)}")
        self.finish()

    def test_extreme_segment_sizes(self):
        """The smallest segment (one plaintext byte in segment 0) and the largest (64M)."""
        for bits in (128, 256):
            key = self.keygen(bits)
            key_len = bits // 8
            smallest = header_len(key_len) + TAG_LEN + 1
            for seg, sizes in ((smallest, (0, 1, 2, 3, 100, 5000)), ("64M", (0, 1000))):
                seg_bytes = seg if isinstance(seg, int) else 64 << 20
                for size in sizes:
                    data = os.urandom(size)
                    sealed = self.seal(data, ["--key-file", key], ["--segment-size", seg])
                    what = f"AES-{bits} segment size {seg} plaintext {size}"
                    self.check(len(sealed) == sealed_len(size, seg_bytes, key_len),
                               f"{what}: {len(sealed)} bytes")
                    for dec in (["--engine", "serial"], ["--threads", "3"]):
                        proc, got = self.open_sealed(sealed, ["--key-file", key], dec)
                        self.check(proc.returncode == 0 and got == data, f"{what} {dec}: " +
                                   (describe(proc) if proc.returncode else "plaintext differs"))
            self.assert_fails(["encrypt", "--key-file", key, "--segment-size", smallest - 1,
                               "-o", self.path("x")], 2, "segment size", input_bytes=b"x")
        self.finish()

    def test_default_segment_multi_mib(self):
        key = self.keygen(256)
        data = os.urandom(3 * DEFAULT_SEGMENT + 12345)
        for enc in self.ENCRYPT_COMBOS:
            sealed = self.seal(data, ["--key-file", key], enc)
            self.assertEqual(len(sealed), sealed_len(len(data), DEFAULT_SEGMENT, 32))
            self.assertEqual(struct.unpack(">I", sealed[12:16])[0], DEFAULT_SEGMENT)
            for dec in self.DECRYPT_COMBOS:
                proc, got = self.open_sealed(sealed, ["--key-file", key], dec)
                self.check(proc.returncode == 0 and got == data,
                           f"sealed by {enc}, opened by {dec}: " +
                           (describe(proc) if proc.returncode else "plaintext differs"))
        self.finish()

    def test_passphrases(self):
        data = os.urandom(5000)
        pw_file = write_file(self.path("pass.txt"), b"correct horse battery\n", 0o600)
        env = {"PAES_TEST_PASS": "correct horse battery"}
        # A passphrase's file is AES-256 (its stanza wraps a random file key): --key-bits 256
        # may be said, 128 is refused.
        self.assert_fails(["encrypt", "--passphrase-file", pw_file, "--key-bits", 128, "--scrypt-log-n", 10,
                           "-o", self.path("x")], 2, "AES-256", input_bytes=data)
        self.assertFalse(os.path.exists(self.path("x")))
        for bits_args in ([], ["--key-bits", 256]):
            for how in ("file", "env"):
                key_args = (["--passphrase-file", pw_file] if how == "file"
                            else ["--passphrase-env", "PAES_TEST_PASS"])
                sealed = self.seal(data, key_args, bits_args + ["--scrypt-log-n", 10,
                                                                "--segment-size", 1024], env=env)
                what = f"passphrase {how} {bits_args}"
                # Version 3, the key in stanzas, AES-256, no scrypt fields, zero salt.
                preamble = b"PAES\x03\x03\x20" + bytes(5) + struct.pack(">I", 1024) + bytes(16)
                self.check(sealed[:PREAMBLE_LEN] == preamble, f"{what}: preamble {sealed[:PREAMBLE_LEN].hex()}")
                header = SCRYPT_HEADER.match(sealed, PREAMBLE_LEN)
                self.check(header is not None, f"{what}: no scrypt stanza and MAC line: {sealed[32:170]!r}")
                if header is None:
                    continue
                self.check(header[2] == b"10", f"{what}: work factor {header[2]!r}, expected 10")
                self.check(header.end() == PREAMBLE_LEN + 128, f"{what}: a {header.end() - PREAMBLE_LEN}-byte header")
                self.check(sealed[header.end()] == header_len(32), f"{what}: header length byte {sealed[header.end()]}")
                self.check(len(sealed) == sealed_len(len(data), 1024, 32, header.end()),
                           f"{what}: {len(sealed)} bytes")
                # Open with both ways of giving the passphrase; the preamble says the rest.
                for open_args in (["--passphrase-file", pw_file],
                                  ["--passphrase-env", "PAES_TEST_PASS"]):
                    proc, got = self.open_sealed(sealed, open_args, env=env)
                    self.check(proc.returncode == 0 and got == data,
                               f"{what} opened with {open_args[0]}: " +
                               (describe(proc) if proc.returncode else "plaintext differs"))
        # Two seals with one passphrase use different salts.
        a = self.seal(data, ["--passphrase-file", pw_file], ["--scrypt-log-n", 10])
        b = self.seal(data, ["--passphrase-file", pw_file], ["--scrypt-log-n", 10])
        a_header, b_header = (SCRYPT_HEADER.match(x, PREAMBLE_LEN) for x in (a, b))
        self.assertTrue(a_header and b_header, f"no scrypt stanza: {a[32:170]!r} {b[32:170]!r}")
        self.check(a_header[1] != b_header[1], "two passphrase seals share a scrypt salt")
        self.finish()

    def test_key_env(self):
        key = self.keygen(256)
        hex_key = read_file(key).decode().strip()
        data = os.urandom(70000)
        env = {"PAES_TEST_KEY": hex_key}
        sealed = self.seal(data, ["--key-env", "PAES_TEST_KEY"], env=env)
        proc, got = self.open_sealed(sealed, ["--key-file", key])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, data)
        proc, got = self.open_sealed(sealed, ["--key-env", "PAES_TEST_KEY"], env=env)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, data)
        # A raw 32-byte key file and its hex form are the same key.
        raw = write_file(self.path("raw.key"), bytes.fromhex(hex_key), 0o600)
        proc, got = self.open_sealed(sealed, ["--key-file", raw])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(got, data)


# --------------------------------------------------------------------------- 1b. --range

class RangeTest(SealedTestCase):
    """1b: decrypt --range [-]OFFSET[:LENGTH] gives exactly those plaintext bytes."""
    ctest_labels = ("threads",)

    def test_ranges_against_the_whole_plaintext(self):
        key = self.keygen(256)
        data = os.urandom(3 * (1 << 20) + 999)
        for fmt, extra in (("paes", []), ("tink", ["--format", "tink", "--segment-size", "64K"])):
            sealed = write_file(self.path(f"r.{fmt}"), self.seal(data, ["--key-file", key], extra))
            open_extra = ["--format", "tink", "--segment-size", "64K"] if fmt == "tink" else []
            for spec, start, length in (("0:1", 0, 1), ("1M:1M", 1 << 20, 1 << 20), ("1048500:200", 1048500, 200),
                                        ("3M", 3 << 20, None), ("100:0", 100, 0), ("3145700:99999", 3145700, None),
                                        (f"{len(data)}", len(data), 0)):
                want = data[start:] if length is None else data[start:start + length]
                proc = run_paes(["decrypt", "--key-file", key, *open_extra, "--range", spec, sealed, "-o", "-"])
                self.check(proc.returncode == 0 and proc.stdout == want,
                           f"{fmt} --range {spec} to stdout: {describe(proc)}, {len(proc.stdout)} bytes")
            out = self.path(f"part-{fmt}")
            proc = run_paes(["decrypt", "--key-file", key, *open_extra, "--range", "2M:100K", sealed, "-o", out])
            self.check(proc.returncode == 0 and read_file(out) == data[2 << 20:(2 << 20) + 102400],
                       f"{fmt} --range to a file: {describe(proc)}")
        self.finish()

    def test_ranges_counted_from_the_end(self):
        # A '-' before OFFSET counts it back from the plaintext's end (issue 32), which the
        # caller need not know; 4 KiB segments put the last MiB across 257 of them.
        key = self.keygen(256)
        data = os.urandom(3 * (1 << 20) + 999)
        sealed = write_file(self.path("r.paes"), self.seal(data, ["--key-file", key], ["--segment-size", "4K"]))
        end = len(data)
        for spec, start, length in (("-1", end - 1, None), ("-1M", end - (1 << 20), None),
                                    ("-4K:100", end - 4096, 100), ("-1M:1M", end - (1 << 20), None),
                                    ("-5000:99999", end - 5000, None), ("-4M", 0, None), ("-4M:10", 0, 10),
                                    ("-0", end, None), ("-0:5", end, None)):
            want = data[start:] if length is None else data[start:start + length]
            proc = run_paes(["decrypt", "--key-file", key, "--range", spec, sealed, "-o", "-"])
            self.check(proc.returncode == 0 and proc.stdout == want,
                       f"--range {spec}: {describe(proc)}, {len(proc.stdout)} bytes")
        out = self.path("tail")
        proc = run_paes(["decrypt", "--key-file", key, "--range=-1M", sealed, "-o", out])
        self.check(proc.returncode == 0 and read_file(out) == data[end - (1 << 20):], f"--range=-1M: {describe(proc)}")
        for spec in ("-", "--1", "-1x", "-:5", "1:-2", "-1:-2", " -1"):
            proc = run_paes(["decrypt", "--key-file", key, f"--range={spec}", sealed, "-o", "-"])
            self.check(proc.returncode == 2 and b"[-]OFFSET[:LENGTH]" in proc.stderr and not proc.stdout,
                       f"--range={spec!r}: {describe(proc)}")
        self.finish()

    def test_range_reports_what_it_read_and_ran_on(self):
        # bytes_in counted the final segment twice (over the file's size), threads said
        # --threads where one worker ran, and key_bits said 256 for an AES-128 file.
        key = self.keygen(128)
        data = os.urandom(40 * 65536 + 5)  # 2.5 MiB: two workers' worth (one per MiB)
        sealed = write_file(self.path("r.paes"), self.seal(data, ["--key-file", key], ["--segment-size", "64K"]))
        size = os.path.getsize(sealed)
        for spec, threads, want_threads in (("0", "2", 2), ("0:1", "16", 1), (f"{len(data) - 1}", "16", 1)):
            proc = run_paes(["decrypt", "--key-file", key, "--range", spec, "-t", threads, "--json", sealed,
                        "-o", self.path("part")])
            self.assertEqual(proc.returncode, 0, describe(proc))
            summary = json.loads(proc.stdout)
            self.assertLessEqual(summary["bytes_in"], size, spec)
            self.assertEqual(summary["threads"], want_threads, spec)
            self.assertEqual(summary["key_bits"], 128, spec)
            os.remove(self.path("part"))
        proc = run_paes(["decrypt", "--key-file", key, "--range", "0", "--json", sealed, "-o", self.path("part")])
        self.assertEqual(json.loads(proc.stdout)["bytes_in"], size, "the whole file, each byte once")
        os.remove(self.path("part"))
        # Where the memory budget makes a batch fewer segments than threads (4 MiB segments,
        # 256 threads), the workers are still no more than the segments read.
        big = write_file(self.path("big.paes"), self.seal(os.urandom(10 * (4 << 20) - 1000), ["--key-file", key],
                                                          ["--segment-size", "4M"]))
        proc = run_paes(["decrypt", "--key-file", key, "--range", "0", "-t", "256", "--json", big, "-o", "/dev/null"])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertLessEqual(json.loads(proc.stdout)["threads"], 10)

    def test_what_range_refuses(self):
        key = self.keygen(256)
        data = os.urandom(100000)
        sealed = write_file(self.path("r.paes"), self.seal(data, ["--key-file", key]))
        self.assert_fails(["decrypt", "--key-file", key, "--range", "100001", sealed], 1, "past the end")
        proc = run_paes(["decrypt", "--key-file", key, "--range", "0:10"], input_bytes=read_file(sealed))
        self.assertEqual(proc.returncode, 2, describe(proc))
        self.assertIn(b"not a pipe", proc.stderr)
        self.assert_fails(["decrypt", "--key-file", key, "--range", "1x", sealed], 2, "OFFSET[:LENGTH]")
        self.assert_fails(["decrypt", "--mode", "ctr", "--iv", "00" * 16, "--key-file", key, "--range", "0:1",
                           sealed], 2, "sealed format")
        self.assert_fails(["encrypt", "--key-file", key, "--range", "0:1", sealed], 2, "range")
        # Damage in the range fails; elsewhere it doesn't matter, but for the last segment.
        damaged = bytearray(read_file(sealed))
        damaged[200] ^= 1
        bad = write_file(self.path("bad.paes"), bytes(damaged))
        self.assert_fails(["decrypt", "--key-file", key, "--range", "0:10", bad, "-o", self.path("none")], 1,
                          "authentication failed")
        self.assertFalse(os.path.exists(self.path("none")))

    def test_range_memory_is_bounded_by_the_budget_not_the_threads(self):
        # A range read holds a batch of segments; the file's preamble sets their size (up to 64 MiB),
        # so at 128 threads four segments a thread were 32 GiB of address space for a 1-byte read.
        # It stays within the 512 MiB a run holds in flight: here under a 3 GiB address-space limit.
        with open(shutil.which(PAES), "rb") as f:
            binary = f.read()
        if b"__asan_" in binary or b"__tsan_" in binary:
            self.skipTest("SKIPPED: a sanitizer's shadow memory needs more address space than the limit")
        key = self.keygen(256)
        data = os.urandom(1000)
        sealed = write_file(self.path("big-segments.paes"),
                            self.seal(data, ["--key-file", key, "--segment-size", "64M"]))

        def limit_address_space():
            limit = 3 << 30
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        proc = run_paes(["decrypt", "--key-file", key, "--threads", "128", "--range", "10:5", sealed, "-o", "-"],
                   preexec_fn=limit_address_space)
        self.assertEqual((proc.returncode, proc.stdout), (0, data[10:15]), describe(proc))


# --------------------------------------------------------------------------- 8. keygen

class KeygenTest(SealedTestCase):
    """8: keygen writes a fresh 0600 hex key and never overwrites without -f."""

    def test_format_and_mode(self):
        for bits, digits in ((128, 32), (192, 48), (256, 64)):
            for umask in (0o022, 0o000):
                path = self.path(f"k-{bits}-{umask:o}")
                proc = subprocess.run([PAES, "keygen", "--key-bits", str(bits), "-o", path],
                                      capture_output=True, umask=umask, timeout=60)
                self.assertEqual(proc.returncode, 0, describe(proc))
                self.assertEqual(proc.stdout, b"")
                mode = stat.S_IMODE(os.stat(path).st_mode)
                self.assertEqual(mode, 0o600, f"{bits}-bit key with umask {umask:o}: mode {mode:o}")
                text = read_file(path)
                self.assertRegex(text.decode("ascii", errors="replace"),
                                 rf"\A[0-9a-f]{{{digits}}}\n\Z", f"{bits}-bit key file {text!r}")
        proc = run_paes(["keygen", "-o", self.path("default")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertEqual(len(read_file(self.path("default"))), 65)
        keys = {read_file(self.path(f"k-256-{u:o}")) for u in (0o022, 0)}
        keys.add(read_file(self.path("default")))
        self.assertEqual(len(keys), 3, "keygen made the same key twice")

    def test_no_overwrite_without_force(self):
        path = write_file(self.path("existing"), b"precious\n", 0o644)
        self.assert_fails(["keygen", "-o", path], 1, "exists", out_dir=self.tmp)
        self.assertEqual(read_file(path), b"precious\n")
        proc = run_paes(["keygen", "-f", "-o", path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertRegex(read_file(path).decode(), r"\A[0-9a-f]{64}\n\Z")
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600,
                         "-f over a 0644 file left it readable by others")
        self.assertEqual(sorted(os.listdir(self.tmp)), ["existing"])
        proc = run_paes(["keygen", "--force", "--key-bits", "128", "-o", path])
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertRegex(read_file(path).decode(), r"\A[0-9a-f]{32}\n\Z")

    def test_bad_key_bits(self):
        self.assert_fails(["keygen", "--key-bits", "100", "-o", self.path("k")], 2, "key-bits",
                          out_dir=self.tmp)

    def test_key_works_with_openssl(self):
        key = self.path("k")
        self.assertEqual(run_paes(["keygen", "-o", key]).returncode, 0)
        hex_key = read_file(key).decode().strip()
        data = os.urandom(1000)
        inp = write_file(self.path("in"), data)
        iv = os.urandom(16).hex()
        proc = run_paes(["encrypt", "--mode", "ctr", "--key-file", key, "--iv", iv, inp, "-o",
                    self.path("enc")])
        self.assertEqual(proc.returncode, 0, describe(proc))
        o = subprocess.run([OPENSSL, "enc", "-aes-256-ctr", "-K", hex_key, "-iv", iv, "-in", inp],
                           capture_output=True)
        self.assertEqual(o.stdout, read_file(self.path("enc")))


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals()))
