#!/usr/bin/env python3
"""check_includes.py on the small tree in fixture/: it must name the one
forbidden include there, pass once that include is gone, and refuse each
other kind of break, each made in a fresh copy of the tree:

  F. the fixture as it is: exit 1, exactly the arrow src/low -> src/high/high.hpp
  P. without that include: exit 0 (same-folder includes, a file entry, a
     folder entry and a file's exception all pass)
  A. a public header that src/low's row doesn't name (it names one file)
  E. another file of src/low using src/low/special.cpp's exception
  R. a file in a folder that has no row
  S. a row naming a file the tree lacks
  D. src/high including a subfolder of src/low, which has a row of its own:
     src/high's row names src/low, which doesn't cover its subfolders
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FORBIDDEN = 'src/low/low.cpp:3: src/low -> src/high/high.hpp ("high/high.hpp") is not allowed'


def run_checker(checker, root):
    result = subprocess.run([sys.executable, str(checker), "--root", str(root), "--doc", str(root / "ARCHITECTURE.md")],
                            capture_output=True, text=True)
    return result.returncode, result.stdout + result.stderr


def fresh(fixture, scratch, name):
    root = Path(scratch) / name
    shutil.copytree(fixture, root)
    low = root / "src/low/low.cpp"
    low.write_text(low.read_text().replace('#include "high/high.hpp"\n', ""))
    return root


def expect(failures, case, code, output, want_code, want_text):
    if code != want_code or want_text not in output:
        failures.append(f"{case}: wanted exit {want_code} and {want_text!r}; got exit {code}:\n{output}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--checker", type=Path, required=True)
    parser.add_argument("--fixture", type=Path, required=True)
    args = parser.parse_args()
    failures = []

    code, output = run_checker(args.checker, args.fixture)
    expect(failures, "F", code, output, 1, FORBIDDEN)
    if output.count(" is not allowed") != 1:
        failures.append(f"F: wanted one forbidden include, got:\n{output}")

    with tempfile.TemporaryDirectory() as scratch:
        root = fresh(args.fixture, scratch, "P")
        code, output = run_checker(args.checker, root)
        expect(failures, "P", code, output, 0, "keeps the layers")

        root = fresh(args.fixture, scratch, "A")
        with open(root / "src/low/low.cpp", "a") as f:
            f.write('#include "paes/b.hpp"\n')
        code, output = run_checker(args.checker, root)
        expect(failures, "A", code, output, 1, "src/low/low.cpp:3: src/low -> include/paes/b.hpp")

        root = fresh(args.fixture, scratch, "E")
        with open(root / "src/low/low.hpp", "a") as f:
            f.write('#include "high/tool.hpp"\n')
        code, output = run_checker(args.checker, root)
        expect(failures, "E", code, output, 1, "src/low/low.hpp:3: src/low -> src/high/tool.hpp")

        root = fresh(args.fixture, scratch, "R")
        (root / "src/new").mkdir()
        (root / "src/new/new.cpp").write_text('#include "low/low.hpp"\n')
        code, output = run_checker(args.checker, root)
        expect(failures, "R", code, output, 1, "src/new/new.cpp: its folder src/new has no row")

        root = fresh(args.fixture, scratch, "S")
        (root / "src/high/tool.hpp").unlink()
        (root / "src/low/special.cpp").write_text("")
        code, output = run_checker(args.checker, root)
        expect(failures, "S", code, output, 1, "src/high/tool.hpp: named in the layer tables but not in the tree")

        root = fresh(args.fixture, scratch, "D")
        (root / "src/low/deep").mkdir()
        (root / "src/low/deep/deep.hpp").write_text("#pragma once\n")
        doc = root / "ARCHITECTURE.md"
        row = "| `src/high` | `src/low`, `include/paes` | |\n"
        doc.write_text(doc.read_text().replace(row, row + "| `src/low/deep` | | |\n"))
        with open(root / "src/high/high.hpp", "a") as f:
            f.write('#include "low/deep/deep.hpp"\n')
        code, output = run_checker(args.checker, root)
        expect(failures, "D", code, output, 1, "src/high/high.hpp:4: src/high -> src/low/deep/deep.hpp")

    for failure in failures:
        print(failure)
    if failures:
        return 1
    print("the checker names each forbidden include in the fixture and passes it without them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
