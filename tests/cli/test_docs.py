#!/usr/bin/env python3
"""The man page and the shell completions against --help (issue 32: `man paes`, completions).

  M. The page (`paes man`, and the build's share/paes.1, which must be the same) has a section
     for every subcommand `paes --help` lists, and in it every option and operand that
     `paes SUB --help` lists.
     Its EXAMPLES run as written, in order, in a scratch directory with the files they name.
  G. groff -man -ww renders it without a warning (skipped, saying why, without groff).
  B. The bash completion, sourced in bash: `paes enc` gives encrypt, `paes encrypt --mo` gives
     --mode, `paes encrypt --mode ` gives the modes, `--` gives every option of every
     subcommand, a value with no choices gives files, `paes completion ` gives the shells.
  Z. The zsh completion parses (zsh -n; skipped without zsh) and names every option.
Python 3.11 standard library only.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from harness import paes_output, run_unittest, tool_paths  # noqa: E402

PAES = "paes"
DOCS_DIR = None
MODES = ["ecb", "cbc", "cfb", "cfb8", "cfb1", "ofb", "ctr"]


def help_subcommands():
    """The subcommands `paes --help` lists."""
    section = paes_output("--help").split("Subcommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in section.splitlines() if line.strip()]


def help_entries(subcommand):
    """(option names, operand names) that `paes SUB --help` lists: '-m,--mode MODE' gives
    -m and --mode; 'input INPUT' under Positionals gives INPUT (the page's name for it)."""
    options, operands = [], []
    in_positionals = False
    for line in paes_output(subcommand, "--help").splitlines():
        if not line.startswith("  "):
            in_positionals = line == "Positionals:"
            continue
        words = line.split()
        if in_positionals:
            operands.append(words[1])
        elif line.startswith("  -"):
            options.extend(words[0].split(","))
    return options, operands


def page_text(roff):
    """The page's words as a reader searches them: \\- as -, fonts and \\& gone."""
    text = re.sub(r"\\f[BIRP]", "", roff)
    return text.replace("\\-", "-").replace("\\&", "").replace("\\e", "\\")


def page_sections(roff):
    """{subcommand: its text} from the page's .SS sections under COMMANDS."""
    commands = roff.split("\n.SH COMMANDS\n", 1)[1].split("\n.SH ", 1)[0]
    sections = {}
    for chunk in commands.split(".SS ")[1:]:
        name, body = chunk.split("\n", 1)
        sections[name.strip()] = page_text(body)
    return sections


class ManPage(unittest.TestCase):
    def setUp(self):
        self.roff = paes_output("man")

    def test_built_page_is_paes_man(self):
        with open(os.path.join(DOCS_DIR, "paes.1")) as f:
            self.assertEqual(f.read(), self.roff, "the build's paes.1 is not what paes man writes")

    def test_every_subcommand_and_option_of_help(self):
        sections = page_sections(self.roff)
        subcommands = help_subcommands()
        self.assertIn("encrypt", subcommands)
        missing = []
        for subcommand in subcommands:
            if subcommand not in sections:
                missing.append(f"section for '{subcommand}'")
                continue
            options, operands = help_entries(subcommand)
            self.assertTrue(options, f"no options parsed from paes {subcommand} --help")
            for name in options + operands:
                if not re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", sections[subcommand]):
                    missing.append(f"{subcommand} {name}")
        self.assertEqual(missing, [], "in --help but not in the man page")

    def test_prose_sections(self):
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT",
                        "FILES", "EXAMPLES", "SEE ALSO"):
            self.assertIn(f"\n.SH {section}\n", self.roff)
        for name in ("PAES_BACKEND", "PAES_CACHE_DIR", "openssl-enc", "age"):
            self.assertIn(name, page_text(self.roff))

    def test_examples_run_as_written(self):
        examples = self.roff.split("\n.SH EXAMPLES\n", 1)[1].split("\n.nf\n", 1)[1].split("\n.fi\n", 1)[0]
        work = tempfile.mkdtemp(prefix="paes-docs-")
        self.addCleanup(shutil.rmtree, work, ignore_errors=True)
        with open(os.path.join(work, "data.tar"), "wb") as f:
            f.write(os.urandom(100_000))
        os.mkdir(os.path.join(work, "photos"))
        with open(os.path.join(work, "photos", "a.jpg"), "wb") as f:
            f.write(os.urandom(1000))
        with open(os.path.join(work, "pass.txt"), "w") as f:
            f.write("correct horse\n")
        os.mkdir(os.path.join(work, "bin"))
        os.symlink(PAES, os.path.join(work, "bin", "paes"))
        env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"])
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", page_text(examples)], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, f"the page's examples: {proc.stderr.strip()}")
        with open(os.path.join(work, "data.tar"), "rb") as a, open(os.path.join(work, "from-alice.tar"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_groff_renders_without_warnings(self):
        groff = shutil.which("groff")
        if groff is None:
            self.skipTest("no groff (scripts/setup.sh installs groff-base)")
        proc = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z"], input=self.roff, capture_output=True,
                              text=True, timeout=60)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), "groff -man -ww")


class BashCompletion(unittest.TestCase):
    def setUp(self):
        self.script = paes_output("completion", "bash")
        self.dir = tempfile.mkdtemp(prefix="paes-docs-")
        self.addCleanup(shutil.rmtree, self.dir, ignore_errors=True)
        self.path = os.path.join(self.dir, "paes.bash")
        with open(self.path, "w") as f:
            f.write(self.script)

    def complete(self, *words):
        """What the completion offers for the command line `words` (the last word being typed)."""
        program = (f"source {shlex.quote(self.path)}; COMP_WORDS=({' '.join(map(shlex.quote, words))}); "
                   f"COMP_CWORD={len(words) - 1}; _paes; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
        proc = subprocess.run(["bash", "-c", program], capture_output=True, text=True, cwd=self.dir, timeout=60)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), f"completing {words}")
        return [line for line in proc.stdout.splitlines() if line]

    def test_built_script_is_paes_completion(self):
        with open(os.path.join(DOCS_DIR, "paes.bash")) as f:
            self.assertEqual(f.read(), self.script)

    def test_subcommand(self):
        self.assertEqual(self.complete("paes", "enc"), ["encrypt"])
        self.assertEqual(sorted(self.complete("paes", "")),
                         sorted(help_subcommands() + ["-h", "--help", "-V", "--version"]))

    def test_option(self):
        self.assertEqual(self.complete("paes", "encrypt", "--mo"), ["--mode"])

    def test_choices(self):
        self.assertEqual(self.complete("paes", "encrypt", "--mode", ""), MODES)
        self.assertEqual(self.complete("paes", "decrypt", "-m", "cf"), ["cfb", "cfb8", "cfb1"])
        self.assertEqual(self.complete("paes", "encrypt", "--format", ""), ["paes", "age", "tink"])
        self.assertIn("threads", self.complete("paes", "encrypt", "--engine", ""))
        self.assertIn("openssl", self.complete("paes", "decrypt", "--backend", ""))
        self.assertEqual(self.complete("paes", "keygen", "--key-bits", ""), ["128", "192", "256"])
        self.assertEqual(self.complete("paes", "completion", ""), ["bash", "zsh"])

    def test_files_otherwise(self):
        open(os.path.join(self.dir, "backup.key"), "w").close()
        self.assertEqual(self.complete("paes", "encrypt", "--key-file", "back"), ["backup.key"])
        self.assertEqual(self.complete("paes", "decrypt", "back"), ["backup.key"])
        self.assertEqual(self.complete("paes", "decrypt", "-i", "back"), ["backup.key"])

    def test_no_files_for_a_value_to_type(self):
        # Issue 44, item 14: a recipient, a mode list, associated data are typed, not file names.
        open(os.path.join(self.dir, "backup.key"), "w").close()
        for words in (("encrypt", "-r"), ("encrypt", "--aad"), ("bench", "--modes"), ("encrypt", "--iv"),
                      ("encrypt", "--threads")):
            self.assertEqual(self.complete("paes", *words, "back"), [], f"paes {' '.join(words)} <TAB>")

    def test_every_option_of_help(self):
        for subcommand in help_subcommands():
            options, _ = help_entries(subcommand)
            offered = set(self.complete("paes", subcommand, "-"))
            self.assertEqual(sorted(set(options) - offered), [], f"paes {subcommand} -<TAB>")


class ZshCompletion(unittest.TestCase):
    def test_parses_and_names_every_option(self):
        script = paes_output("completion", "zsh")
        self.assertTrue(script.startswith("#compdef paes\n"))
        zsh = shutil.which("zsh")
        if zsh is None:
            self.skipTest("no zsh to parse the script")
        proc = subprocess.run([zsh, "-n"], input=script, capture_output=True, text=True, timeout=60)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), "zsh -n")
        with open(os.path.join(DOCS_DIR, "_paes")) as f:
            self.assertEqual(f.read(), script)
        # Issue 44, item 3: README's 'source <(paes completion zsh)' registers the completion
        # (it failed: "_arguments ... can only be called from completion function").
        with tempfile.TemporaryDirectory(prefix="paes-zsh-") as home:
            path = os.path.join(home, "paes.zsh")
            with open(path, "w") as f:
                f.write(script)
            proc = subprocess.run([zsh, "-f", "-c", f"autoload -U compinit; compinit -u -d {home}/.zcompdump; "
                                   f"source {shlex.quote(path)}; print -r -- ${{_comps[paes]}}"],
                                  capture_output=True, text=True, timeout=60, env=dict(os.environ, HOME=home))
            self.assertEqual((proc.returncode, proc.stdout, proc.stderr), (0, "_paes\n", ""), "sourced in zsh")
        for subcommand in help_subcommands():
            self.assertIn(f"'{subcommand}:", script)
            for name in help_entries(subcommand)[0]:
                self.assertTrue(re.search(r"[{,')]" + re.escape(name) + r"[,}'\[]", script),
                                f"paes {subcommand} {name} is not in the zsh completion")


def main():
    global PAES, DOCS_DIR
    PAES, _, rest = tool_paths(__doc__)
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs-dir", required=True, help="the build's share/ (paes.1, paes.bash, _paes)")
    opts, rest = parser.parse_known_args(rest)
    DOCS_DIR = opts.docs_dir
    return run_unittest(rest)


if __name__ == "__main__":
    sys.exit(main())
