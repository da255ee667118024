#!/usr/bin/env python3
"""C2SP CCTV's age test kit (tests/data/age/cctv/, README.md there) through paes decrypt.

  python3 tests/tink/age_testkit.py --paes build/release/paes [--vectors DIR] [TestClass ...]

Each vector is a textual header of "key: value" lines, an empty line, then an age v1 file
(zlib-compressed when `compressed: zlib`, ASCII-armored when `armored: yes`). It is read
as age's own runner reads it (FiloSottile/age, testkit_test.go, parseVector): an unknown
key, `expect` value or compression fails the vector; `file key` and `comment` are not used.
Every vector runs through `paes decrypt KEY -o DIR/plain FILE`, DIR a fresh empty folder,
the age file as it is (paes tells armor by itself, as it must), and:

  expect: success        exit 0, sha256 of DIR/plain is `payload`, DIR holds nothing else,
                         nothing on stdout;
  any failure            (no match, HMAC failure, header failure, payload failure, armor
                         failure) exit 1, exactly one stderr line and it starts with
                         "paes:", nothing on stdout, DIR left empty.

age tells the failure kinds apart by its error types (testkit_test.go, testDecrypt); paes
reports them all as exit 1 with a message, so only the failure is required, not its kind.
For `payload failure` age also hashes the plaintext its Reader released before the error
and compares it with `payload`; paes releases nothing under -o's name when a chunk fails,
so the check here is the stricter "DIR stays empty".

KEY is what the vector names, as paes takes it:
  identity    every `identity:` line in one identity file (-i), as age passes them all to
              Decrypt. paes has no built-in mlkem768x25519 (age's post-quantum hybrid,
              AGE-SECRET-KEY-PQ-1...; paes takes post-quantum recipients from age plugins,
              README), so those identities are left out as CCTV's README allows ("Test
              vectors involving unimplemented features ... can be ignored") and the vector
              must then fail as `no match` does: exit 1, nothing written (for the kit's
              hybrid `success` vectors that is a clean "no identity matches"; its hybrid
              failure vectors expected a failure anyway). Where no identity paes reads is
              left, it gets an X25519 identity no vector names. The vectors'
              own identity files, PQ lines included, are also given to paes as they are
              (HybridIdentityFileTest): refused cleanly, exit 1 or 2, nothing written.
  passphrase  one run per `passphrase:` line, with --passphrase-file (a file of that line):
              paes takes one passphrase per run, and -i can't be combined with a passphrase,
              so scrypt_and_x25519 runs once with its identity and once with its passphrase,
              scrypt_double once per passphrase; each run must meet the expectation. (Only
              failure vectors name more than one key; a `success` vector that did would fail
              here as "needs a rule".)
  neither     (empty, armor_empty: age's Decrypt refuses having no identity at all) that
              identity no vector names, so that paes reads the file.

scrypt_work_factor_23: a work factor of 2^23, above the 2^22 both age (ScryptIdentity's
default maxWorkFactor 22, "scrypt work factor too large") and paes accept; age's kit expects
`header failure` for it, so paes refusing it without running scrypt is what the kit wants.
The kit's other scrypt stanzas use work factor 10: fast.

Needs only Python's standard library. Prints how many vectors of each expectation ran.
Exits non-zero when a test fails.
"""

import collections
import hashlib
import os
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import (ScratchTestCase, bech32_encode, describe, error_lines, run_paes, run_test_script,  # noqa: E402
                     write_file)

PAES = "paes"
VECTORS = None  # --vectors; default tests/data/age/cctv
DEFAULT_VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "age", "cctv")

EXPECTATIONS = ("success", "no match", "HMAC failure", "header failure", "payload failure", "armor failure")
# Identities paes reads: age's X25519 ones. The hybrid ones (AGE-SECRET-KEY-PQ-1) are not built
# in; should paes learn them, add "AGE-SECRET-KEY-PQ-1" here and their vectors get age's full expectation.
SUPPORTED_IDENTITY_PREFIXES = ("AGE-SECRET-KEY-1",)
# An X25519 identity no vector names, for runs that have none paes reads. Not the kit's "no
# match" identity (x25519_no_match's AGE-SECRET-KEY-143WN...): that is the generator's first
# Rand(32) of every file, so hybrid_and_x25519's X25519 stanza is sealed to it.
NO_MATCH_IDENTITY = bech32_encode("age-secret-key-",
                                  hashlib.sha256(b"paes age test kit: an identity no vector names").digest()).upper()


class Vector:
    """One test file, parsed as age's testkit_test.go parseVector does."""

    def __init__(self, name, data):
        self.name = name
        self.expect = None
        self.payload = None
        self.identities = []
        self.passphrases = []
        self.armored = False
        self.compressed = False
        self.comment = None
        rest = data
        while True:
            line, sep, rest = rest.partition(b"\n")
            if not sep:
                raise ValueError("no empty line before the age file")
            if not line:
                break
            key, _, value = line.decode("utf-8").partition(": ")
            if key == "expect":
                if value not in EXPECTATIONS:
                    raise ValueError(f"unknown expect value {value!r}")
                self.expect = value
            elif key == "payload":
                self.payload = bytes.fromhex(value)
                if len(self.payload) != 32:
                    raise ValueError(f"payload is not a SHA-256: {value!r}")
            elif key == "file key":
                bytes.fromhex(value)
            elif key == "identity":
                self.identities.append(value)
            elif key == "passphrase":
                self.passphrases.append(value)
            elif key == "armored":
                self.armored = True
            elif key == "compressed":
                if value != "zlib":
                    raise ValueError(f"unknown compression {value!r}")
                self.compressed = True
            elif key == "comment":
                self.comment = value
            else:
                raise ValueError(f"unknown header key {key!r}")
        if self.expect is None:
            raise ValueError("no expect line")
        self.file = zlib.decompress(rest) if self.compressed else rest

    @property
    def unsupported_identities(self):
        return [i for i in self.identities if not i.startswith(SUPPORTED_IDENTITY_PREFIXES)]

    def runs(self):
        """[(label, key kind, key file text)]: the paes runs this vector takes."""
        runs = []
        supported = [i for i in self.identities if i.startswith(SUPPORTED_IDENTITY_PREFIXES)]
        if self.identities or not self.passphrases:
            label = "identity" if supported else "no-match identity"
            runs.append((label, "-i", "".join(i + "\n" for i in supported or [NO_MATCH_IDENTITY])))
        for n, passphrase in enumerate(self.passphrases):
            runs.append((f"passphrase {n + 1} {passphrase!r}", "--passphrase-file", passphrase + "\n"))
        return runs

    @property
    def must_succeed(self):
        """age's `success`, unless an identity it needs is one paes doesn't read."""
        return self.expect == "success" and not self.unsupported_identities


def load_vectors():
    """{name: Vector or the ValueError that parsing it raised} of every vector file (names
    without a dot but LICENSE: README.md and the like are not vectors)."""
    directory = VECTORS or DEFAULT_VECTORS
    vectors = {}
    for name in sorted(os.listdir(directory)):
        if "." in name or name == "LICENSE" or not os.path.isfile(os.path.join(directory, name)):
            continue
        with open(os.path.join(directory, name), "rb") as f:
            data = f.read()
        try:
            vectors[name] = Vector(name, data)
        except (ValueError, UnicodeDecodeError, zlib.error) as exc:
            vectors[name] = ValueError(f"{name}: not a test kit file: {exc}")
    return vectors


class AgeTestkitTest(ScratchTestCase):
    """Every vector of the kit, one subTest each, through paes decrypt -o."""

    prefix = "paes-age-testkit-"

    def decrypt(self, workdir, vector, key_option, key_text):
        """paes decrypt of `vector`'s file with `key_option` (-i or --passphrase-file) and
        a 0600 file of `key_text`, to a fresh empty folder; (process, folder listing,
        output bytes or None)."""
        os.makedirs(workdir)
        age_file = write_file(os.path.join(workdir, vector.name + ".age"), vector.file)
        key_file = write_file(os.path.join(workdir, "key.txt"), key_text.encode(), 0o600)
        out_dir = os.path.join(workdir, "out")
        os.mkdir(out_dir)
        out = os.path.join(out_dir, "plain")
        proc = run_paes(["decrypt", key_option, key_file, "-o", out, age_file])
        listing = sorted(os.listdir(out_dir))
        data = None
        if os.path.isfile(out):
            with open(out, "rb") as f:
                data = f.read()
        return proc, listing, data

    def problems_of(self, vector, proc, listing, data):
        """What is wrong with one run of `vector`, as a list of strings."""
        problems = []
        if vector.must_succeed:
            if proc.returncode != 0:
                return [f"expected success (exit 0), got {describe(proc)}"]
            if listing != ["plain"]:
                problems.append(f"the output folder holds {listing}, not just the output")
            if data is None or hashlib.sha256(data).digest() != vector.payload:
                got = "no file" if data is None else f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()}"
                problems.append(f"the output is not the payload {vector.payload.hex()}: {got}")
        else:
            if proc.returncode != 1:
                problems.append(f"expected a failure (exit 1), got {describe(proc)}")
            lines = error_lines(proc.stderr)
            if len(lines) != 1 or not lines[0].startswith("paes:"):
                problems.append(f"expected one stderr line starting with 'paes:', got {proc.stderr!r}")
            if listing:
                problems.append(f"left {listing} in the output folder")
        if proc.stdout:
            problems.append(f"wrote to stdout: {proc.stdout[:100]!r}")
        return problems

    def test_every_vector(self):
        vectors = load_vectors()
        self.assertTrue(vectors, f"no vectors in {VECTORS or DEFAULT_VECTORS}")
        counts, runs, failed = collections.Counter(), 0, []
        for name, vector in vectors.items():
            with self.subTest(vector=name):
                if isinstance(vector, Exception):
                    failed.append(name)
                    self.fail(str(vector))
                counts[vector.expect] += 1
                vector_runs = vector.runs()
                if vector.expect == "success" and len(vector_runs) != 1:
                    failed.append(name)
                    self.fail(f"needs a rule: a success vector with {len(vector_runs)} keys paes can't take at once")
                problems = []
                for n, (label, key_option, key_text) in enumerate(vector_runs):
                    runs += 1
                    proc, listing, data = self.decrypt(self.path(f"{name}.{n}"), vector, key_option, key_text)
                    problems += [f"[{label}] {p}" for p in self.problems_of(vector, proc, listing, data)]
                if problems:
                    failed.append(name)
                    note = " (hybrid identity left out: must fail as no match)" if vector.unsupported_identities else ""
                    self.fail(f"expect: {vector.expect}{note}" + (f", comment: {vector.comment}" if vector.comment
                                                                   else "") + "\n  " + "\n  ".join(problems))
        hybrid = sum(1 for v in vectors.values() if isinstance(v, Vector) and v.unsupported_identities)
        summary = ", ".join(f"{counts[e]} {e}" for e in EXPECTATIONS)
        print(f"\nage test kit: {sum(counts.values())} vectors ({summary}) in {runs} paes runs; {hybrid} with a "
              f"hybrid identity paes doesn't read (run as no match); {len(failed)} failed"
              + (f": {', '.join(failed)}" if failed else ""), file=sys.stderr)


class HybridIdentityFileTest(ScratchTestCase):
    """The hybrid vectors' identity files as the kit gives them (AGE-SECRET-KEY-PQ-1 lines that
    paes doesn't read): a clean refusal, whether paes calls that a usage error (2) or a failure
    (1): one 'paes:' line, nothing on stdout, nothing written."""

    prefix = "paes-age-testkit-"

    def test_identity_files_as_given(self):
        hybrid = {name: v for name, v in load_vectors().items()
                  if isinstance(v, Vector) and v.unsupported_identities}
        if not hybrid:
            self.skipTest("no vector names an identity paes doesn't read")
        for name, vector in hybrid.items():
            with self.subTest(vector=name):
                workdir = self.path(name)
                os.makedirs(workdir)
                age_file = write_file(os.path.join(workdir, name + ".age"), vector.file)
                key_file = write_file(os.path.join(workdir, "key.txt"),
                                      "".join(i + "\n" for i in vector.identities).encode(), 0o600)
                out_dir = os.path.join(workdir, "out")
                os.mkdir(out_dir)
                proc = run_paes(["decrypt", "-i", key_file, "-o", os.path.join(out_dir, "plain"), age_file])
                self.assertIn(proc.returncode, (1, 2), describe(proc))
                lines = error_lines(proc.stderr)
                self.assertTrue(len(lines) == 1 and lines[0].startswith("paes:"), describe(proc))
                self.assertEqual(proc.stdout, b"")
                self.assertEqual(os.listdir(out_dir), [])


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals(), need_openssl=False, optional_paths=("--vectors",)))
