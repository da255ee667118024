"""What the CLI test scripts share: file helpers, failure descriptions, and the
command line (--paes, --openssl; the rest goes to unittest)."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unittest


def write_file(path, data, mode=None):
    with open(path, "wb") as f:
        f.write(data)
    if mode is not None:
        os.chmod(path, mode)
    return path


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def describe(proc):
    err = proc.stderr.decode(errors="replace").strip() if proc.stderr else ""
    return f"exit {proc.returncode}, stderr: {err!r}"


def tool_paths(description):
    """(paes, openssl, unittest arguments) from the command line; exits when a tool can't run."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--paes", required=True, help="the paes binary under test")
    parser.add_argument("--openssl", default=shutil.which("openssl") or "openssl",
                        help="the openssl command (the oracle)")
    opts, rest = parser.parse_known_args()
    paes = os.path.abspath(opts.paes)
    script = os.path.basename(sys.argv[0])
    if not os.access(paes, os.X_OK):
        sys.exit(f"{script}: paes binary {paes!r} is not executable")
    if subprocess.run([opts.openssl, "version"], capture_output=True).returncode != 0:
        sys.exit(f"{script}: openssl command {opts.openssl!r} does not run")
    return paes, opts.openssl, rest


def run_unittest(rest):
    """Runs the calling script's tests; 0 when all passed."""
    program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    return 0 if program.result.wasSuccessful() else 1


MAX_REPORTED_FAILURES = 15


class ScratchTestCase(unittest.TestCase):
    """A fresh temporary directory per test, and failure collection for big case lists:
    check() records a case, finish() fails the test once with the first failures."""

    prefix = "paes-test-"

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix=self.prefix)
        self.failures = []
        self.cases = 0

    def tearDown(self):
        for root, dirs, _ in os.walk(self.tmp):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, *parts):
        return os.path.join(self.tmp, *parts)

    def new_dir(self, name, mode=None):
        d = self.path(name)
        os.makedirs(d, exist_ok=True)
        if mode is not None:
            os.chmod(d, mode)
        return d

    def check(self, ok, message):
        self.cases += 1
        if not ok:
            self.failures.append(message)

    def finish(self):
        if self.failures:
            shown = "\n  ".join(self.failures[:MAX_REPORTED_FAILURES])
            self.fail(f"{len(self.failures)} of {self.cases} cases failed; first ones:\n  {shown}")


def openssl_enc_command(openssl, mode, key, iv, decrypt=False, nopad=False):
    """The `openssl enc` command line that is paes' oracle for a raw mode."""
    cmd = [openssl, "enc", f"-aes-{len(key) * 8}-{mode}", "-K", key.hex()]
    if mode != "ecb":
        cmd += ["-iv", iv.hex()]
    if decrypt:
        cmd.append("-d")
    if nopad:
        cmd.append("-nopad")
    return cmd
