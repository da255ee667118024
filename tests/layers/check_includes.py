#!/usr/bin/env python3
"""Checks every #include under src/ and include/ against the tables of
docs/ARCHITECTURE.md ("The layers"), so the tables are the rule and not a wish.

The document holds three markdown tables, found by their header rows:

  | layer | may include | note |                       one row per folder
  | file | may also include | why |                    exceptions, one row per file
  | library | headers | may be included in | note |    one row per third-party library

Cells name paths relative to the root in backticks: a folder (`src/util`) or
a file (`include/paes/job.hpp`). A library's headers are patterns in
backticks, matched against what the include spells between < and > as
fnmatch does (`openssl/*`, `mpi.h`; `*` also matches '/').

Quoted includes (and angle-bracket ones naming a file of the tree, such as
<paes/job.hpp>) are held to the layer tables:

  * A file's layer is its own folder, which must have a row. A subfolder is
    a layer of its own: `src/cipher`'s row says nothing of `src/cipher/openssl`.
  * A file may include the files of its own folder.
  * Any other include must be allowed by its layer's row or its file's
    exception row. A folder there allows the files directly in that folder,
    not in its subfolders (a subfolder that may be included is listed on its
    own); a file allows that file alone.
  * A public header (include/paes/) brings the public headers it includes,
    and theirs: each of them must be allowed to the including file as well,
    so no layer reaches a public header its row leaves out through another.

Angle-bracket includes of anything else are held to the library table and
the system list (SYSTEM_HEADERS, SYSTEM_PREFIXES below):

  * A header that a library row's patterns match may be included only where
    that row's third cell allows it (a folder: the files directly in it; a
    file: that file alone).
  * The C++ standard library's headers (spelled with no '.' and no '/':
    <vector>), the C library's, POSIX's, Linux's and the compiler's (the list
    below) may be included anywhere, the public headers included.
  * Any other header fails: it belongs to a library the table doesn't name.
  * A library row may not name a public header or include/: the public
    headers include no third-party library.

A row or an exception that names a path which doesn't exist fails too, so
the tables can't outlive the code they describe.

A quoted include resolves as the compiler finds it: beside the including
file, then under include/, then under src/; one that names no file there (a
generated header) counts as under include/ when it starts with paes/, as
beside the including file when it has no folder, and as under src/
otherwise.

Exit status: 0 when every include is allowed, 1 with each forbidden arrow
(file:line: layer -> target) on stdout, 2 when the document has no layer or
library table.
"""

import argparse
import fnmatch
import re
import sys
from pathlib import Path, PurePosixPath

SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".c", ".cu", ".cl"}
SCANNED_TOPS = ("src", "include")
PUBLIC = PurePosixPath("include/paes")
INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<([^>]+)>)')
CODE = re.compile(r"`([^`]+)`")

# Headers always allowed, besides the C++ standard library's (spelled with no
# '.' and no '/'). The C library's (C17, section 7):
C_HEADERS = {
    "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "iso646.h", "limits.h",
    "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h", "stdarg.h", "stdatomic.h", "stdbool.h",
    "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "stdnoreturn.h", "string.h", "tgmath.h", "threads.h",
    "time.h", "uchar.h", "wchar.h", "wctype.h",
}
# POSIX.1-2017's own headers (XBD section 13) outside sys/, arpa/, net/, netinet/:
POSIX_HEADERS = {
    "aio.h", "cpio.h", "dirent.h", "dlfcn.h", "fcntl.h", "fmtmsg.h", "fnmatch.h", "ftw.h", "glob.h", "grp.h",
    "iconv.h", "langinfo.h", "libgen.h", "monetary.h", "mqueue.h", "ndbm.h", "netdb.h", "nl_types.h", "poll.h",
    "pthread.h", "pwd.h", "regex.h", "sched.h", "search.h", "semaphore.h", "spawn.h", "strings.h", "syslog.h",
    "tar.h", "termios.h", "ulimit.h", "unistd.h", "utime.h", "utmpx.h", "wordexp.h",
}
# The compiler's own: x86 CPUID and the vector intrinsics.
COMPILER_HEADERS = {"cpuid.h", "immintrin.h", "x86intrin.h", "wmmintrin.h", "emmintrin.h", "tmmintrin.h"}
SYSTEM_HEADERS = C_HEADERS | POSIX_HEADERS | COMPILER_HEADERS
# Folders of POSIX's and Linux's headers (sys/stat.h, linux/magic.h, ...).
SYSTEM_PREFIXES = ("sys/", "arpa/", "net/", "netinet/", "linux/")


def is_system_header(spelled):
    if "." not in spelled and "/" not in spelled:
        return True  # the C++ standard library: <vector>, <cstdint>
    return spelled in SYSTEM_HEADERS or spelled.startswith(SYSTEM_PREFIXES)


def table_rows(doc_text, header):
    """The rows of the markdown table whose first header cells are `header`,
    as lists of cells."""
    rows = []
    in_table = False
    for line in doc_text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("|"):
            in_table = False
            continue
        cells = [c.strip() for c in stripped.strip("|").split("|")]
        if not in_table:
            if [c.lower() for c in cells[:len(header)]] == list(header):
                in_table = True
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue  # the separator row
        rows.append(cells)
    return rows


def paths_in(cell):
    return [PurePosixPath(p.rstrip("/")) for p in CODE.findall(cell)]


def covers(allowed, target):
    """Whether an allowed path (a folder or a file) covers `target`."""
    return target == allowed or target.parent == allowed


class Library:
    def __init__(self, name, patterns, places):
        self.name, self.patterns, self.places = name, patterns, places

    def matches(self, spelled):
        return any(fnmatch.fnmatchcase(spelled, pattern) for pattern in self.patterns)


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
        library_rows = table_rows(doc_text, ("library", "headers", "may be included in"))
        if not library_rows:
            raise ValueError("no '| library | headers | may be included in |' table")
        self.libraries = []
        for cells in library_rows:
            if len(cells) < 3 or not cells[0] or not CODE.findall(cells[1]):
                raise ValueError(f"a library row names the library and its headers in backticks: {cells}")
            self.libraries.append(Library(cells[0], CODE.findall(cells[1]), paths_in(cells[2])))

    def stale(self, root):
        """Paths the tables name that don't exist under root."""
        named = set(self.layers) | set(self.exceptions)
        for allowed in list(self.layers.values()) + list(self.exceptions.values()):
            named.update(allowed)
        for library in self.libraries:
            named.update(library.places)
        return sorted(str(p) for p in named if not (root / p).exists())

    def public_places(self):
        """Library rows that let a public header include their library."""
        return [f"{place}: the library row of {library.name} names it, but the public headers include no "
                f"third-party library" for library in self.libraries for place in library.places
                if place.parts[:1] == ("include",)]

    def allows(self, source, target):
        if target.parent == source.parent:
            return True
        return any(covers(allowed, target) for allowed in self.layers.get(source.parent, []) + self.exceptions.get(source, []))

    def library_of(self, spelled):
        return next((library for library in self.libraries if library.matches(spelled)), None)


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


def resolve_angle(root, spelled):
    """The root-relative path of a file of the tree that <spelled> names
    (searched under include/, then src/), or None."""
    for candidate in (PurePosixPath("include") / spelled, PurePosixPath("src") / spelled):
        if (root / candidate).is_file():
            return candidate
    return PurePosixPath("include") / spelled if spelled.startswith("paes/") else None


def sources(root):
    for top in SCANNED_TOPS:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and path.suffix in SOURCE_SUFFIXES:
                yield PurePosixPath(path.relative_to(root).as_posix())


def includes(root, source):
    """(line number, quoted spelling or None, angle spelling or None) of each
    #include in `source`."""
    text = (root / source).read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        match = INCLUDE.match(line)
        if match:
            yield number, match.group(1), match.group(2)


class PublicClosure:
    """The public headers a public header brings, itself and every public
    header it includes, directly or through others."""

    def __init__(self, root):
        self.root, self.cache = root, {}

    def of(self, header):
        if header not in self.cache:
            self.cache[header] = {header}
            found = {header}
            if (self.root / header).is_file():
                for _, quoted, angle in includes(self.root, header):
                    target = resolve(self.root, header, quoted) if quoted else resolve_angle(self.root, angle)
                    if target is not None and target.parent == PUBLIC:
                        found |= self.of(target)
            self.cache[header] = found
        return self.cache[header]


def check(root, rules):
    problems = [f"{p}: named in the layer tables but not in the tree" for p in rules.stale(root)]
    problems += rules.public_places()
    closure = PublicClosure(root)
    for source in sources(root):
        layer = source.parent
        if layer not in rules.layers:
            problems.append(f"{source}: its folder {layer} has no row in the layer table")
            continue
        for number, quoted, angle in includes(root, source):
            where = f"{source}:{number}: {layer}"
            target = resolve(root, source, quoted) if quoted else resolve_angle(root, angle)
            spelled = f'"{quoted}"' if quoted else f"<{angle}>"
            if target is not None:
                if not rules.allows(source, target):
                    problems.append(f"{where} -> {target} ({spelled}) is not allowed")
                elif target.parent == PUBLIC and layer != PUBLIC:
                    for brought in sorted(closure.of(target)):
                        if not rules.allows(source, brought):
                            problems.append(f"{where} -> {target} ({spelled}) brings {brought}, "
                                            f"which {layer} may not include")
                continue
            library = rules.library_of(angle)
            if library is not None:
                if not any(covers(place, source) for place in library.places):
                    problems.append(f"{where} -> {spelled} ({library.name}) is not allowed")
            elif not is_system_header(angle):
                problems.append(f"{where} -> {spelled} is in no library row and is no standard or "
                                f"system header of check_includes.py")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="the tree holding src/ and include/")
    parser.add_argument("--doc", type=Path, required=True, help="the document holding the layer tables")
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
