#!/usr/bin/env python3
"""Fails when a string literal of the library (src/ outside src/cli/, and
include/) names a command-line flag: `--aad`, `-i`, `-f`. A library caller
never typed one; the library says what went wrong in its own terms (with a
paes::Remedy where a caller may act on it) and the CLI names its flags.

Comments may name flags (they explain the CLI's use of a value); string
literals may not. A flag is `--word`, or `-X` (one letter) at the start of a
literal or after a space, `(` or `,`, and not followed by a letter or digit,
so "-byte key" and "AES-128" pass.

Exit status: 0 when no literal names a flag, 1 with each one
(file:line: "literal") on stdout.
"""

import argparse
import re
import sys
from pathlib import Path

FLAG = re.compile(r"--[a-z][a-z0-9-]*|(?:^|[\s(,])-[A-Za-z](?![A-Za-z0-9])")
SOURCES = {".cpp", ".hpp", ".h", ".cu", ".cl"}
NOT_A_MESSAGE = "// a command line, not a message"


def string_literals(text):
    """(line, contents) of each string literal in C++ source `text`, comments skipped."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += text.count("\n", i, end)
            i = end
        elif c == "'" and not (i > 0 and (text[i - 1].isalnum())):  # a char literal, not a digit separator
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "R" and text.startswith('R"', i) and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.index("(", i)
            delimiter = ")" + text[i + 2:open_paren] + '"'
            end = text.index(delimiter, open_paren)
            yield line, text[open_paren + 1:end]
            line += text.count("\n", i, end)
            i = end + len(delimiter)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            yield line, text[i + 1:j]
            i = j + 1
        else:
            i += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, type=Path, help="the project's root")
    parser.add_argument("--skip", action="append", default=[],
                        help="a folder under the root left out, besides src/cli (repeatable)")
    args = parser.parse_args()
    skipped = [args.root / "src/cli"] + [args.root / s for s in args.skip]
    found = []
    for top in ("src", "include"):
        for path in sorted((args.root / top).rglob("*")):
            if path.suffix not in SOURCES or any(path.is_relative_to(s) for s in skipped):
                continue
            text = path.read_text(encoding="utf-8")
            lines = text.split("\n")
            for line, literal in string_literals(text):
                # A literal that is another program's command line (a shell
                # script and its arguments) is no message: its line says so.
                if NOT_A_MESSAGE in lines[line - 1]:
                    continue
                if FLAG.search(literal):
                    found.append(f'{path.relative_to(args.root)}:{line}: "{literal}"')
    for entry in found:
        print(entry)
    if found:
        print(f"{len(found)} library string(s) name a command-line flag: say it in the library's terms "
              "(a paes::Remedy where a caller may act) and let src/cli name the flag", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
