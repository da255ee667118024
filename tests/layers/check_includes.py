#!/usr/bin/env python3
"""Checks every quoted #include under src/ and include/ against the layer
table of docs/ARCHITECTURE.md ("The layers"), so the table is the rule and
not a wish.

The document holds two markdown tables, found by their header rows:

  | layer | may include | note |        one row per folder
  | file | may also include | why |     exceptions, one row per file

Cells name paths relative to the root in backticks: a folder (`src/util`) or
a file (`include/paes/job.hpp`). The rules:

  * A file's layer is its own folder, which must have a row. A subfolder is
    a layer of its own: `src/cipher`'s row says nothing of `src/cipher/openssl`.
  * A file may include the files of its own folder.
  * Any other include must be allowed by its layer's row or its file's
    exception row. A folder there allows the files directly in that folder,
    not in its subfolders (a subfolder that may be included is listed on its
    own); a file allows that file alone.
  * A row or an exception that names a path which doesn't exist fails too, so
    the table can't outlive the code it describes.

An include resolves as the compiler finds it: beside the including file, then
under include/, then under src/; one that names no file there (a generated
header) counts as under include/ when it starts with paes/, as beside the
including file when it has no folder, and as under src/ otherwise.

Exit status: 0 when every include is allowed, 1 with each forbidden arrow
(file:line: layer -> target) on stdout, 2 when the document has no table.
"""

import argparse
import re
import sys
from pathlib import Path, PurePosixPath

SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".c", ".cu", ".cl"}
SCANNED_TOPS = ("src", "include")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
CODE = re.compile(r"`([^`]+)`")


def table_rows(doc_text, header):
    """The rows of the markdown table whose first two header cells are
    `header`, as lists of cells."""
    rows = []
    in_table = False
    for line in doc_text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        if not in_table:
            if [c.lower() for c in cells[:2]] == list(header):
                in_table = True
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the separator row
        rows.append(cells)
    return rows


def paths_in(cell):
    return [PurePosixPath(p.rstrip("/")) for p in CODE.findall(cell)]


class Rules:
    def __init__(self, doc_text):
        layer_rows = table_rows(doc_text, ("layer", "may include"))
        if not layer_rows:
            raise ValueError("no '| layer | may include |' table")
        self.layers = {}
        for cells in layer_rows:
            names = paths_in(cells[0])
            if len(names) != 1:
                raise ValueError(f"a layer row names one folder in backticks: {cells}")
            self.layers[names[0]] = paths_in(cells[1]) if len(cells) > 1 else []
        self.exceptions = {}
        for cells in table_rows(doc_text, ("file", "may also include")):
            names = paths_in(cells[0])
            if len(names) != 1:
                raise ValueError(f"an exception row names one file in backticks: {cells}")
            self.exceptions.setdefault(names[0], []).extend(paths_in(cells[1]) if len(cells) > 1 else [])

    def stale(self, root):
        """Paths the tables name that don't exist under root."""
        named = set(self.layers) | set(self.exceptions)
        for allowed in list(self.layers.values()) + list(self.exceptions.values()):
            named.update(allowed)
        return sorted(str(p) for p in named if not (root / p).exists())

    def allows(self, source, target):
        layer = source.parent
        if target.parent == layer:
            return True
        for allowed in self.layers.get(layer, []) + self.exceptions.get(source, []):
            if target == allowed or target.parent == allowed:
                return True
        return False


def resolve(root, source, spelled):
    """The root-relative path the quoted include `spelled` in `source` names."""
    candidates = [source.parent / spelled, PurePosixPath("include") / spelled, PurePosixPath("src") / spelled]
    for candidate in candidates:
        if (root / candidate).is_file():
            return candidate
    if spelled.startswith("paes/"):
        return candidates[1]
    if "/" not in spelled:
        return candidates[0]
    return candidates[2]


def sources(root):
    for top in SCANNED_TOPS:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                yield PurePosixPath(path.relative_to(root).as_posix())


def check(root, rules):
    problems = [f"{p}: named in the layer tables but not in the tree" for p in rules.stale(root)]
    for source in sources(root):
        layer = source.parent
        if layer not in rules.layers:
            problems.append(f"{source}: its folder {layer} has no row in the layer table")
            continue
        text = (root / source).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = resolve(root, source, match.group(1))
            if not rules.allows(source, target):
                problems.append(f'{source}:{number}: {layer} -> {target} ("{match.group(1)}") is not allowed')
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="the tree holding src/ and include/")
    parser.add_argument("--doc", type=Path, required=True, help="the document holding the layer table")
    args = parser.parse_args()
    try:
        rules = Rules(args.doc.read_text(encoding="utf-8"))
    except ValueError as e:
        print(f"{args.doc}: {e}", file=sys.stderr)
        return 2
    problems = check(args.root.resolve(), rules)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} include(s) break the layers of {args.doc}")
        return 1
    print(f"every include under {args.root} keeps the layers of {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
