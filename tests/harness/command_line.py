"""A test script's command line (--paes, --openssl; the rest goes to unittest) and its run:
sanitizer reports collected, the script's classes checked against the ctests registered
for it, and exit 77 (ctest's "skipped") when every selected test skipped."""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from .discovery import test_classes
from .processes import Tools

# Sanitizer reports (ASan, LeakSanitizer, UBSan, TSan) from every process a test
# script starts go to files in one directory instead of stderr, and the script
# fails if any appeared: a test that expects exit 1, or never reads stderr, would
# otherwise pass over a report. The sanitized builds' presets set these options.
SANITIZER_OPTION_VARIABLES = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")
_sanitizer_report_dir = None

SKIPPED = 77  # SKIP_RETURN_CODE of every Python ctest


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


def tool_paths(description, need_openssl=True):
    """(paes, openssl, unittest arguments) from the command line; exits when a tool can't run.
    Also sets processes.Tools, which run_paes and the oracles use."""
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
    if need_openssl and subprocess.run([opts.openssl, "version"], capture_output=True).returncode != 0:
        sys.exit(f"{script}: openssl command {opts.openssl!r} does not run")
    Tools.paes, Tools.openssl = paes, opts.openssl
    return paes, opts.openssl, rest


def run_test_script(description, script_globals, need_openssl=True, optional_paths=()):
    """The whole main() of a test script whose options are --paes, --openssl and the
    optional paths named in `optional_paths` (e.g. "--mpiexec"): puts them in the script's
    globals (`script_globals`: its globals()) as PAES, OPENSSL and the flag's name in
    capitals (MPIEXEC; None when not given), then runs the tests the rest of the command
    line names; returns the exit status."""
    script_globals["PAES"], script_globals["OPENSSL"], rest = tool_paths(description, need_openssl)
    for flag in optional_paths:
        path, rest = path_option(rest, flag, f"{flag} (optional)", required=False)
        script_globals[flag.lstrip("-").replace("-", "_").upper()] = path
    return run_unittest(rest)


def path_option(rest, flag, help, required=True):
    """(absolute path given with `flag`, or None when optional and absent; the arguments
    left) from the arguments tool_paths left; exits when the path does not exist."""
    parser = argparse.ArgumentParser()
    parser.add_argument(flag, required=required, help=help)
    opts, rest = parser.parse_known_args(rest)
    value = getattr(opts, flag.lstrip("-").replace("-", "_"))
    if value is None:
        return None, rest
    path = os.path.abspath(value)
    if not os.path.exists(path):
        sys.exit(f"{os.path.basename(sys.argv[0])}: {flag} {path!r} not found")
    return path, rest


def unregistered_classes(module):
    """Why the classes unittest's loader finds in `module` differ from those discovery.py
    reads from its source (which are the ctests registered for it), or None."""
    loaded = set()
    pending = [unittest.defaultTestLoader.loadTestsFromModule(module)]
    while pending:
        for test in pending.pop():
            if isinstance(test, unittest.TestSuite):
                pending.append(test)
            else:
                loaded.add(type(test).__name__)
    discovered = set(test_classes(module.__file__))
    if loaded == discovered:
        return None
    return (f"the test classes of {module.__file__} are not the ones registered as ctests: "
            f"loaded but not discovered {sorted(loaded - discovered)}, discovered but not loaded "
            f"{sorted(discovered - loaded)} (harness/discovery.py's rule: a base class's name ends in TestCase)")


def run_unittest(rest):
    """Runs the calling script's tests (those named in `rest`, e.g. one class, or all);
    0 when all passed, SKIPPED when every one skipped, else 1."""
    main_module = sys.modules["__main__"]
    mismatch = unregistered_classes(main_module)
    program = unittest.main(module=main_module, argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
    reports = take_sanitizer_reports()
    for report in reports:
        print(report, file=sys.stderr)
    if reports:
        print(f"FAILED: {len(reports)} sanitizer report(s) from the processes these tests ran (above)",
              file=sys.stderr)
    if mismatch:
        print(f"FAILED: {mismatch}", file=sys.stderr)
    result = program.result
    if not result.wasSuccessful() or reports or mismatch:
        return 1
    if result.skipped and result.testsRun <= len(result.skipped):
        return SKIPPED
    return 0
