#!/usr/bin/env python3
"""check_includes.py on the small tree in fixture/: it must name the one
forbidden include there, pass once that include is gone, and refuse each
other kind of break, each made in a fresh copy of the tree. One class per
rule, each a ctest of its own (layers_fixture.Class):

  QuotedLayerBreak        the fixture as it is: exit 1, exactly the arrow
                          src/low -> src/high/high.hpp
  PassesWithoutIt         without that include: exit 0 (same-folder includes,
                          a file entry, a folder entry, a file's exception,
                          each library where its row allows it, standard and
                          system headers in public headers too)
  PublicHeaderNotInRow    a public header that src/low's row doesn't name
  ExceptionIsOneFile      another file of src/low using special.cpp's exception
  FolderWithoutRow        a file in a folder that has no row
  StaleRow                a row naming a file the tree lacks
  SubfolderIsItsOwnLayer  src/high including a subfolder of src/low, which has
                          a row of its own
  PublicHeaderBrings      src/low's public header including another that
                          src/low's row leaves out
  AngleIncludeOfTheTree   <paes/b.hpp>, held to the layers as "paes/b.hpp" is
  OpensslInEngine         <openssl/evp.h> in an engine file
  OpensslInPublicHeader   <openssl/evp.h> in a public header
  OpenclOutsideItsFolder  <CL/cl.h> in src/cipher, beside src/cipher/opencl
  GtestInTheLibrary       <gtest/gtest.h>, whose row allows no folder here
  UnknownLibrary          <zlib.h>: no library row and no system header
  LibraryRowNamesPublic   a library row allowing include/paes
  NoLibraryTable          a document without the library table: exit 2

    python3 tests/layers/test_fixture.py --checker tests/layers/check_includes.py \\
        --fixture tests/layers/fixture [Class]
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import run_unittest  # noqa: E402

ARGS = None
FORBIDDEN = 'src/low/low.cpp:3: src/low -> src/high/high.hpp ("high/high.hpp") is not allowed'


class FixtureTestCase(unittest.TestCase):
    """A fresh copy of the fixture, without its one forbidden include
    (`self.root`), and the checker run over it."""

    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="paes-layers-")
        self.root = Path(self.scratch) / "tree"
        shutil.copytree(ARGS.fixture, self.root)
        low = self.root / "src/low/low.cpp"
        low.write_text(low.read_text().replace('#include "high/high.hpp"\n', ""))

    def tearDown(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def append(self, relative, text):
        with open(self.root / relative, "a") as f:
            f.write(text)

    def edit_doc(self, old, new):
        doc = self.root / "ARCHITECTURE.md"
        text = doc.read_text()
        self.assertIn(old, text)
        doc.write_text(text.replace(old, new))

    def run_checker(self, root=None):
        root = root or self.root
        result = subprocess.run([sys.executable, str(ARGS.checker), "--root", str(root),
                                 "--doc", str(root / "ARCHITECTURE.md")], capture_output=True, text=True)
        return result.returncode, result.stdout + result.stderr

    def assert_refused(self, want_text, want_code=1):
        code, output = self.run_checker()
        self.assertEqual(code, want_code, output)
        self.assertIn(want_text, output)


class QuotedLayerBreak(FixtureTestCase):
    def test_names_the_one_forbidden_include(self):
        code, output = self.run_checker(ARGS.fixture)
        self.assertEqual(code, 1, output)
        self.assertIn(FORBIDDEN, output)
        self.assertEqual(output.count(" is not allowed"), 1, output)


class PassesWithoutIt(FixtureTestCase):
    def test_exit_0(self):
        code, output = self.run_checker()
        self.assertEqual(code, 0, output)
        self.assertIn("keeps the layers", output)


class PublicHeaderNotInRow(FixtureTestCase):
    def test_refused(self):
        self.append("src/low/low.cpp", '#include "paes/b.hpp"\n')
        self.assert_refused("src/low/low.cpp:3: src/low -> include/paes/b.hpp")


class ExceptionIsOneFile(FixtureTestCase):
    def test_refused(self):
        self.append("src/low/low.hpp", '#include "high/tool.hpp"\n')
        self.assert_refused("src/low/low.hpp:3: src/low -> src/high/tool.hpp")


class FolderWithoutRow(FixtureTestCase):
    def test_refused(self):
        (self.root / "src/new").mkdir()
        (self.root / "src/new/new.cpp").write_text('#include "low/low.hpp"\n')
        self.assert_refused("src/new/new.cpp: its folder src/new has no row")


class StaleRow(FixtureTestCase):
    def test_refused(self):
        (self.root / "src/high/tool.hpp").unlink()
        (self.root / "src/low/special.cpp").write_text("")
        self.assert_refused("src/high/tool.hpp: named in the layer tables but not in the tree")


class SubfolderIsItsOwnLayer(FixtureTestCase):
    def test_refused(self):
        (self.root / "src/low/deep").mkdir()
        (self.root / "src/low/deep/deep.hpp").write_text("#pragma once\n")
        row = "| `src/high` | `src/low`, `include/paes` | |\n"
        self.edit_doc(row, row + "| `src/low/deep` | | |\n")
        self.append("src/high/high.hpp", '#include "low/deep/deep.hpp"\n')
        self.assert_refused("src/high/high.hpp:4: src/high -> src/low/deep/deep.hpp")


class PublicHeaderBrings(FixtureTestCase):
    def test_refused(self):
        self.append("include/paes/a.hpp", '#include "paes/b.hpp"\n')
        self.assert_refused("src/low/low.hpp:2: src/low -> include/paes/a.hpp (\"paes/a.hpp\") brings "
                            "include/paes/b.hpp, which src/low may not include")


class AngleIncludeOfTheTree(FixtureTestCase):
    def test_refused(self):
        self.append("src/low/low.cpp", "#include <paes/b.hpp>\n")
        self.assert_refused("src/low/low.cpp:3: src/low -> include/paes/b.hpp (<paes/b.hpp>) is not allowed")


class OpensslInEngine(FixtureTestCase):
    def test_refused(self):
        self.append("src/engine/engine.cpp", "#include <openssl/evp.h>\n")
        self.assert_refused("src/engine/engine.cpp:5: src/engine -> <openssl/evp.h> (OpenSSL) is not allowed")


class OpensslInPublicHeader(FixtureTestCase):
    def test_refused(self):
        self.append("include/paes/a.hpp", "#include <openssl/types.h>\n")
        self.assert_refused("include/paes/a.hpp:3: include/paes -> <openssl/types.h> (OpenSSL) is not allowed")


class OpenclOutsideItsFolder(FixtureTestCase):
    def test_refused(self):
        self.append("src/cipher/cipher.cpp", "#include <CL/cl.h>\n")
        self.assert_refused("src/cipher/cipher.cpp:5: src/cipher -> <CL/cl.h> (OpenCL) is not allowed")


class GtestInTheLibrary(FixtureTestCase):
    def test_refused(self):
        self.append("src/high/high.hpp", "#include <gtest/gtest.h>\n")
        self.assert_refused("src/high/high.hpp:4: src/high -> <gtest/gtest.h> (GoogleTest) is not allowed")


class UnknownLibrary(FixtureTestCase):
    def test_refused(self):
        self.append("src/cipher/cipher.cpp", "#include <zlib.h>\n")
        self.assert_refused("src/cipher/cipher.cpp:5: src/cipher -> <zlib.h> is in no library row")


class LibraryRowNamesPublic(FixtureTestCase):
    def test_refused(self):
        self.edit_doc("| OpenSSL | `openssl/*` | `src/cipher` | |", "| OpenSSL | `openssl/*` | `src/cipher`, `include/paes` | |")
        self.assert_refused("include/paes: the library row of OpenSSL names it, but the public headers include "
                            "no third-party library")


class NoLibraryTable(FixtureTestCase):
    def test_exit_2(self):
        self.edit_doc("| library | headers | may be included in | note |", "| libraries | headers | where | note |")
        self.assert_refused("no '| library | headers | may be included in |' table", want_code=2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--checker", type=Path, required=True)
    parser.add_argument("--fixture", type=Path, required=True)
    ARGS, rest = parser.parse_known_args()
    ARGS.checker, ARGS.fixture = ARGS.checker.resolve(), ARGS.fixture.resolve()
    sys.exit(run_unittest(rest))
