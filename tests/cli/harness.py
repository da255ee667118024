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


def looks_like_text(data):
    """Whether paes takes `data` for text, which a key file may hold only as hex: printable
    ASCII and whitespace, or UTF-8 of those and characters from U+00A0 up, either after a
    UTF-8 byte-order mark or not."""
    try:
        text = data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(0x20 <= ord(c) < 0x7f or c in "\t\n\r\v\f" or ord(c) >= 0xa0 for c in text)


def random_raw_key(length):
    """Random key bytes a key file can hold raw: never text, which paes refuses (for 16
    bytes, about 1 draw in 200,000 would be)."""
    while True:
        key = os.urandom(length)
        if not looks_like_text(key):
            return key


def describe(proc):
    err = proc.stderr.decode(errors="replace").strip() if proc.stderr else ""
    return f"exit {proc.returncode}, stderr: {err!r}"


# Sanitizer reports (ASan, LeakSanitizer, UBSan, TSan) from every process a test
# script starts go to files in one directory instead of stderr, and the script
# fails if any appeared: a test that expects exit 1, or never reads stderr, would
# otherwise pass over a report. The sanitized builds' presets set these options.
SANITIZER_OPTION_VARIABLES = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")
_sanitizer_report_dir = None


def send_sanitizer_reports_to_files():
    global _sanitizer_report_dir
    _sanitizer_report_dir = tempfile.mkdtemp(prefix="paes-sanitizer-reports-")
    os.chmod(_sanitizer_report_dir, 0o1777)  # some tests run paes as another user
    for variable in SANITIZER_OPTION_VARIABLES:
        options = os.environ.get(variable)
        os.environ[variable] = (options + ":" if options else "") + f"log_path={_sanitizer_report_dir}/report"


def take_sanitizer_reports():
    """The reports written since send_sanitizer_reports_to_files(), as text; removes them."""
    if _sanitizer_report_dir is None:
        return []
    reports = []
    for name in sorted(os.listdir(_sanitizer_report_dir)):
        with open(os.path.join(_sanitizer_report_dir, name), errors="replace") as f:
            reports.append(f.read())
    shutil.rmtree(_sanitizer_report_dir, ignore_errors=True)
    return reports


def tool_paths(description):
    """(paes, openssl, unittest arguments) from the command line; exits when a tool can't run."""
    send_sanitizer_reports_to_files()
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
    reports = take_sanitizer_reports()
    for report in reports:
        print(report, file=sys.stderr)
    if reports:
        print(f"FAILED: {len(reports)} sanitizer report(s) from the processes these tests ran (above)",
              file=sys.stderr)
    return 0 if program.result.wasSuccessful() and not reports else 1


# Tests that need an unprivileged user (permission checks, which root bypasses) run
# paes as uid/gid nobody with no supplementary groups.
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def nobody_can_run(paes, workdir):
    """Returns (path of paes that uid nobody can run, None) or (None, reason to skip):
    "not root" when this process can't switch users."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, "not root"
    if shutil.which("setpriv") is None:
        return None, "setpriv not found"
    try:
        if subprocess.run(AS_NOBODY + [paes, "--help"], capture_output=True, timeout=30).returncode == 0:
            return paes, None
    except OSError:
        pass
    # The build tree may be closed to nobody: try a world-readable copy of the binary.
    os.chmod(workdir, 0o777)
    copy = os.path.join(workdir, "paes-copy")
    shutil.copy2(paes, copy)
    os.chmod(copy, 0o755)
    proc = subprocess.run(AS_NOBODY + [copy, "--help"], capture_output=True, timeout=30)
    if proc.returncode == 0:
        return copy, None
    return None, f"user nobody cannot run paes ({describe(proc)})"


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
