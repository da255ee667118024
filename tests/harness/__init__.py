"""The library every Python test script under tests/ shares (the independent readers
tests/tink/v3_reader.py and tests/data/*/compute_*.py excepted: being independent of paes'
code and of this library is their purpose).

    command_line   --paes/--openssl, the unittest run, sanitizer reports, exit 77 = skipped
    discovery      a script's test classes and ctest labels, read with ast (CMake uses it)
    processes      run_paes, describe, paused runs waited for and killed, paes as uid nobody
    scratch        ScratchTestCase: a temporary directory per test, collected failures,
                   run_cases, assert_exit / assert_fails / fails, key files, keygen, a
                   pseudo-terminal
    oracles        openssl enc: command lines, expected bytes, raw-mode argument lists
    files, keys    whole files; random raw keys that never read as text
    bech32         age's recipient encoding
    sealed_format  the sealed format's sizes and boundaries, HKDF-SHA256, unpadded base64
    sealed_cases   SealedTestCase, the base of tests/cli/test_sealed_*.py
    pipes          process chains over real pipes
    fault_shim     the environment that preloads tests/fault/fault_inject.c
    bench_scripts  the benchmark scripts' smoke-test checks

A script puts tests/ on sys.path and imports what it uses from here by name. A test class
is registered as the ctest PREFIX.Class (tests/CMakeLists.txt, paes_add_unittest_classes)
and may add labels with `ctest_labels = ("threads", ...)`; a helper goes here, not into a
second script.
"""

from .bech32 import bech32_decode, bech32_encode  # noqa: F401
from .command_line import SKIPPED, path_option, run_test_script, run_unittest, tool_paths  # noqa: F401
from .files import read_file, write_file  # noqa: F401
from .keys import looks_like_text, random_raw_key  # noqa: F401
from .oracles import openssl_enc, openssl_enc_command, openssl_ok, oracle_input_and_output, raw_args  # noqa: F401
from .processes import (AS_NOBODY, NOBODY, Tools, describe, error_lines, killed_unless_finished,  # noqa: F401
                        nobody_can_run, paes_output, run_paes, wait_for, wait_for_pause)
from .scratch import ScratchTestCase  # noqa: F401
