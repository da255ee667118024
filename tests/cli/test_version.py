"""The version is CMake's project(VERSION): paes --version and paes info say it, and no source
file writes it again (issue 32: it was written in four places, which a release had to keep equal).

Usage: test_version.py --paes PAES --expected VERSION --source-dir DIR
"""
import argparse
import json
import os
import re
import subprocess
import sys

# Not sources: the build's outputs, the tree's Python, and benchmark results, which record the
# version that ran them.
SKIPPED_DIRS = {".git", ".venv", "build", os.path.join("docs", "benchmarks")}


def files_writing(version, source_dir):
    """The files under source_dir, CMakeLists.txt at its top aside, that name `version`."""
    token = re.compile(rb"(?<![\d.])" + re.escape(version.encode()) + rb"(?![\d.])")
    found = []
    for root, dirs, files in os.walk(source_dir):
        dirs[:] = [d for d in dirs if os.path.relpath(os.path.join(root, d), source_dir) not in SKIPPED_DIRS]
        for name in files:
            path = os.path.join(root, name)
            relative = os.path.relpath(path, source_dir)
            if relative == "CMakeLists.txt" or os.path.islink(path):
                continue
            with open(path, "rb") as f:
                if token.search(f.read()):
                    found.append(relative)
    return sorted(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paes", required=True)
    parser.add_argument("--expected", required=True, help="CMake's PROJECT_VERSION")
    parser.add_argument("--source-dir", required=True)
    opts = parser.parse_args()
    problems = []

    def say(command):
        proc = subprocess.run([opts.paes, *command], capture_output=True, text=True)
        if proc.returncode != 0:
            problems.append(f"paes {' '.join(command)} exits {proc.returncode}: {proc.stderr.strip()}")
        return proc.stdout

    want = f"paes {opts.expected}"
    if (got := say(["--version"])) != want + "\n":
        problems.append(f"paes --version says {got!r}, not {want!r}")
    if (got := say(["info"]).split("\n", 1)[0]) != want:
        problems.append(f"paes info's first line is {got!r}, not {want!r}")
    if (got := json.loads(say(["info", "--json"]) or "{}").get("paes_version")) != opts.expected:
        problems.append(f"paes info --json's paes_version is {got!r}, not {opts.expected!r}")
    for path in files_writing(opts.expected, opts.source_dir):
        problems.append(f"{path} writes the version {opts.expected} again: take it from CMake's project()")
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{len(problems)} problems" if problems else f"paes {opts.expected} everywhere, from CMake alone")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
