#!/usr/bin/env python3
"""age plugins (issue 40, C2SP age-plugin.md) in paes, checked against age itself, both ways.

  .venv/bin/python tests/tink/plugin_interop.py --paes build/release/paes [TestClass ...]

The plugin is tests/plugin/age_plugin_test.py, `age-plugin-test`, written from the spec: its
recipients are age1test1..., its identities AGE-PLUGIN-TEST-1..., its stanza `-> test SHARE` (an
X25519 wrap; its docstring says how, and its functions unwrap a stanza here). Each test puts a
shell wrapper named age-plugin-test in a directory of its own at the head of PATH. Environment
variables make it misbehave, show a message, ask for confirmation, and log every command it got.

  PluginProtocolTest  the plugin itself, driven over its pipes by a client written here: key
                      generation, refusal of an unknown state machine, recipient-v1 (recipients,
                      identities, several file keys, grease both ways), identity-v1 (several files,
                      a malformed stanza, PINs asked once, refused PINs, foreign identities).
  AgePluginTest       age 1.1.1 with the plugin: age -r / -R (beside an X25519 recipient) / -e -i
                      then age -d -i, the stanza unwrapped here and the header MAC checked; a PIN
                      typed on a terminal; what age sends (the log); a malformed stanza refused;
                      a plugin only in the current directory never run.
  AgeToPaesTest       the `test` stanza of an age -r file, moved into a paes file of the same file
                      key, opens with paes decrypt -i.
  PaesToAgeTest       paes encrypt -r's `test` stanza (the header MAC and the Tink body checked
                      here) moved into an age file of the same file key opens with age -d -i.
  PaesPluginTest      paes alone: -r, -i (add-identity), -R with plugin and X25519 recipients, the
                      commands paes sends, a PIN on a terminal and without one, msg sanitized,
                      confirm without a terminal, every fault of the plugin on both sides (exit 1,
                      one line without control characters, no output, no temporary), a missing
                      plugin, a plugin in the current directory or reached through a relative or
                      empty PATH entry never run, invalid plugin names (exit 2), a malformed stanza.

paes' contract: plugin recipients with -r/-R and identities with -i as age takes them; errors exit
1 with one "paes: ..." line (2 for a bad command line, a malformed recipient); a plugin's msg is a
stderr line holding its text, sanitized; a secret is asked on /dev/tty with the plugin's text.

Needs the Python packages `tink` and `cryptography` (exit 77 without them) and age for the classes
that run it (they skip, saying why, without it). Exits non-zero when a test fails.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys

try:
    import tink  # noqa: F401
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
except ImportError as exc:  # the whole file needs both
    print(f"plugin_interop.py: SKIP: the Python packages `tink` and `cryptography` are needed ({exc}); "
          f"run with scripts/setup.sh's .venv", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN_SCRIPT = os.path.join(HERE, "..", "plugin", "age_plugin_test.py")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "plugin"))
import age_plugin_test as plugin  # noqa: E402
from age_interop import AGE_VERSION_LINE, age_payload, b64, paes_file, parse_stanzas, run_on_terminal  # noqa: E402
from recipients_commit import body_ikm, mac_line, x25519_stanza  # noqa: E402
from tink_raw_key import tink_decrypt, tink_streaming_aead  # noqa: E402
from harness import (ScratchTestCase, bech32_decode, bech32_encode, describe, read_file, run_paes,  # noqa: E402
                     run_test_script, write_file)
from harness.processes import killed_unless_finished, wait_for  # noqa: E402

PAES = "paes"
AGE = shutil.which("age")
NO_AGE = "age is not installed"
SEGMENT = 4096
TIMEOUT = 120          # ends a hung run only; never decides a result
ENCRYPT_FAULTS = ("garbage", "early-exit", "long-line", "many-stanzas", "huge-body", "error", "bad-index")
DECRYPT_FAULTS = ENCRYPT_FAULTS + ("bad-file-key",)
MSG = "hello from the \x1b[31mtest\x1b[0m plugin\x07 bell\rCR del\x7f back\x08 second\nline \x1b]0;title\x07 end"


def control_bytes(data):
    """The bytes of `data` a terminal acts on: below 0x20 (LF aside) and DEL."""
    return sorted({b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f})


def x25519_keys():
    """(identity file text, recipient) of a new age X25519 key, made here."""
    key = X25519PrivateKey.generate()
    recipient = bech32_encode("age", key.public_key().public_bytes_raw())
    identity = bech32_encode("age-secret-key-", key.private_bytes_raw()).upper()
    return f"# public key: {recipient}\n{identity}\n", recipient


def read_stanza(stream):
    """(words, body) of the next stanza a plugin writes, read as age.md writes them; None at the end."""
    line = stream.readline()
    if not line:
        return None
    if not line.startswith(b"-> ") or not line.endswith(b"\n"):
        raise AssertionError(f"the plugin wrote a line that is not a stanza's: {line[:120]!r}")
    text = b""
    while True:
        body_line = stream.readline()
        if not body_line.endswith(b"\n") or len(body_line) > 65:
            raise AssertionError(f"a malformed body line from the plugin: {body_line[:120]!r}")
        text += body_line[:-1]
        if len(body_line) < 65:
            return line[3:-1].split(b" "), b64(text)


def stanza_of_type(stanzas, type_):
    found = [s for s in stanzas if s.type == type_]
    if len(found) != 1:
        raise AssertionError(f"{len(found)} {type_} stanzas in {[s.type for s in stanzas]}")
    return found[0]


def open_test_stanza(stanza, private):
    """The file key in a `test` stanza (age_interop.Stanza) for the X25519 key `private`."""
    share, body = plugin.parse_stanza([a.encode() for a in stanza.args], stanza.body)
    file_key = plugin.unwrap(private, share, body)
    if file_key is None or len(file_key) != 16:
        raise AssertionError(f"the test stanza {stanza.text!r} does not open with the identity")
    return file_key


class Key:
    """A plugin key: identity and recipient strings, the X25519 private key, an identity file."""

    def __init__(self, case, pin=False):
        self.identity, self.recipient = plugin.make_identity(pin=pin)
        self.private = plugin.parse_identity(self.identity)[1]
        self.file = write_file(case.path(case.unique_name("plugin-id-")),
                               f"# recipient: {self.recipient}\n{self.identity}\n".encode(), 0o600)


class PluginTestCase(ScratchTestCase):
    prefix = "paes-plugin-interop-"

    def setUp(self):
        super().setUp()
        self.bin = self.new_dir("bin")
        script = f'#!/bin/sh\nexec {shlex.quote(sys.executable)} {shlex.quote(os.path.abspath(PLUGIN_SCRIPT))} "$@"\n'
        self.wrapper = write_file(os.path.join(self.bin, "age-plugin-test"), script.encode(), 0o755)
        self.path_var = self.bin + os.pathsep + os.environ.get("PATH", "")
        self.log = self.path("plugin.log")
        self.key = Key(self)
        self.out_dir = self.new_dir("out")

    def need_age(self):
        if AGE is None:
            self.skipTest(NO_AGE)

    def mixed_recipients_file(self):
        """A -R file of two plugin recipients and an X25519 one (with a comment and a blank
        line); returns it and the three identity files that each open what is sealed to it."""
        x_text, x_recipient = x25519_keys()
        x_file = write_file(self.path("x25519.key"), x_text.encode(), 0o600)
        other = Key(self)
        rfile = write_file(self.path("recipients.txt"),
                           f"# plugins and X25519\n{self.key.recipient}\n\n{x_recipient}\n{other.recipient}\n".encode())
        return rfile, (self.key.file, x_file, other.file)

    def env(self, **extra):
        """The variables a run adds: PATH with the plugin first, the log, `extra` (PAES_TEST_PLUGIN_*)."""
        return {"PATH": self.path_var, "PAES_TEST_PLUGIN_LOG": self.log, **extra}

    def full_env(self, **extra):
        return {**os.environ, **self.env(**extra)}

    def sessions(self):
        """The plugin's sessions since the last call, from its log: [(state machine, phase 1's
        commands, phase 2's answers)], each a list of lines."""
        if not os.path.exists(self.log):
            return []
        with open(self.log, "rb") as f:
            text = f.read().decode()
        os.remove(self.log)
        found = []
        for line in text.splitlines():
            if line in ("[recipient-v1]", "[identity-v1]"):
                found.append((line[1:-1], []))
            else:
                found[-1][1].append(line)
        return [(machine, lines[:lines.index("done")] if "done" in lines else lines,
                 lines[lines.index("done") + 1:] if "done" in lines else []) for machine, lines in found]

    def known(self, phase1, commands):
        """phase 1's lines that begin with one of `commands` (the rest is the client's grease)."""
        return [line for line in phase1 if line.split(" ")[0] in commands]

    def run_age(self, args, **extra):
        return subprocess.run([AGE, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT,
                              env=self.full_env(**extra))

    def age_ok(self, args, **extra):
        proc = self.run_age(args, **extra)
        self.assertEqual(proc.returncode, 0, f"age {' '.join(args)}: {describe(proc)}")
        return proc

    def paes(self, args, **extra):
        return run_paes(args, env=self.env(**extra), timeout=TIMEOUT)

    def paes_ok(self, args, **extra):
        proc = self.paes(args, **extra)
        self.assertEqual(proc.returncode, 0, f"paes {' '.join(map(str, args))}: {describe(proc)}")
        return proc

    def plain(self, size=5000):
        data = os.urandom(size)
        return data, write_file(self.path(self.unique_name("plain-")), data)

    def paes_seal(self, key_args, plain_path, **extra):
        out = self.path(self.unique_name("sealed-"))
        self.paes_ok(["encrypt", *key_args, "--segment-size", "4K", plain_path, "-o", out], **extra)
        return out

    def paes_open(self, key_args, sealed, **extra):
        out = os.path.join(self.out_dir, self.unique_name("opened-"))
        self.paes_ok(["decrypt", *key_args, "-o", out, sealed], **extra)
        data = read_file(out)
        os.remove(out)
        return data

    def age_open(self, identity_file, sealed, **extra):
        return self.age_ok(["-d", "-i", identity_file, sealed], **extra).stdout

    def sealed_test_file(self, public, plain):
        """A paes file whose `test` stanza wraps a new file key to `public`: (path, file key)."""
        file_key = os.urandom(16)
        stanza = plugin.stanza_text(*plugin.wrap(public, file_key))
        path = write_file(self.path(self.unique_name("test-stanza-")),
                          paes_file(stanza, file_key, plain))
        return path, file_key

    def paes_header(self, data):
        """([Stanza], file key via self.key, offset of the body) of a paes version-3 file sealed to
        self.key, its header MAC checked here."""
        self.assertEqual(data[:5], b"PAES\x03", "a paes version-3 file")
        stanzas, end = parse_stanzas(data, 32)
        file_key = open_test_stanza(stanza_of_type(stanzas, "test"), self.key.private)
        self.assertEqual(mac_line(data[:end + 3], file_key), data[end + 3:end + 48],
                         "paes' header MAC is not age's MAC over preamble || stanzas || '---'")
        return stanzas, file_key, end + 48

    def current_directory_plugin(self):
        """(a directory holding age-plugin-test and sub/age-plugin-test, scripts that make a
        marker file, the marker's path)."""
        cwd = self.new_dir("cwd")
        marker = self.path("plugin-ran")
        for d in (cwd, self.new_dir(os.path.join("cwd", "sub"))):
            write_file(os.path.join(d, "age-plugin-test"), f"#!/bin/sh\ntouch {marker}\nexit 1\n".encode(), 0o755)
        return cwd, marker

    @staticmethod
    def relative_paths():
        """PATH values that reach the current directory's plugin only by a relative or empty entry."""
        base = os.environ.get("PATH", "/usr/bin:/bin")
        return (base, "." + os.pathsep + base, os.pathsep + base, base + os.pathsep,
                base + os.pathsep + os.pathsep + "/nonexistent", "sub" + os.pathsep + base, "./sub" + os.pathsep + base)


class PluginSession:
    """The plugin run by a client written here, over its pipes."""

    def __init__(self, case, machine, **env):
        self.proc = subprocess.Popen([case.wrapper, f"--age-plugin={machine}"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=case.full_env(**env))

    def send(self, args, body=b""):
        self.proc.stdin.write(plugin.encode_stanza([a if isinstance(a, bytes) else a.encode() for a in args], body))
        self.proc.stdin.flush()

    def run(self, phase1, answer=None):
        """Sends `phase1` ([(args, body)]) and done, then answers phase 2 (answer(words, body)
        returns (args, body) or None for the default) until done. Returns phase 2's commands,
        [(words as str, body)], and the plugin's stderr after it exited 0."""
        for args, body in phase1:
            self.send(args, body)
        self.send(["done"])
        commands = []
        while True:
            stanza = read_stanza(self.proc.stdout)
            if stanza is None:
                raise AssertionError(f"the plugin ended phase 2 without done: {self.finish()}")
            words, body = [w.decode() for w in stanza[0]], stanza[1]
            if words == ["done"]:
                break
            commands.append((words, body))
            reply = answer(words, body) if answer else None
            self.send(*(reply or default_answer(words)))
        return commands, self.finish(0)

    def finish(self, code=None):
        self.proc.stdin.close()
        err = self.proc.stderr.read()
        self.proc.wait(timeout=TIMEOUT)
        self.proc.stdout.close()
        self.proc.stderr.close()
        if code is not None and self.proc.returncode != code:
            raise AssertionError(f"the plugin exited {self.proc.returncode}, stderr {err!r}")
        return err


PHASE2_COMMANDS = {"msg", "confirm", "request-public", "request-secret", "recipient-stanza", "labels", "file-key",
                   "error"}


def default_answer(words):
    if words[0] not in PHASE2_COMMANDS:
        return (["unsupported"], b"")
    if words[0] == "request-secret":
        return (["ok"], plugin.PIN)
    if words[0] == "confirm":
        return (["ok", "yes"], b"")
    return (["ok"], b"")


def grease_of(commands):
    return [words for words, _ in commands if words[0] not in PHASE2_COMMANDS]


def without_grease(commands):
    return [(words, body) for words, body in commands if words[0] in PHASE2_COMMANDS]


class PluginProtocolTest(PluginTestCase):
    """The plugin against a client written here from the spec: the oracle paes is tested with."""

    def test_generate(self):
        for flags, args in ((0, []), (1, ["--pin"])):
            proc = subprocess.run([self.wrapper, "--generate", *args], capture_output=True, timeout=TIMEOUT)
            self.assertEqual(proc.returncode, 0, describe(proc))
            comment, identity = proc.stdout.decode().splitlines()
            self.assertTrue(comment.startswith("# recipient: age1test1"), comment)
            self.assertTrue(identity.startswith("AGE-PLUGIN-TEST-1") and identity == identity.upper(), identity)
            hrp, data = bech32_decode(identity)
            self.assertEqual((hrp, len(data), data[0]), ("age-plugin-test-", 33, flags))
            hrp, public = bech32_decode(comment.removeprefix("# recipient: "))
            expected = X25519PrivateKey.from_private_bytes(data[1:]).public_key().public_bytes_raw()
            self.assertEqual((hrp, public), ("age1test", bytes([flags]) + expected))

    def test_unknown_state_machine_refused(self):
        for args in (["--age-plugin=recipient-v2"], ["--age-plugin=identity"], []):
            proc = subprocess.run([self.wrapper, *args], stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=TIMEOUT)
            self.assertNotEqual(proc.returncode, 0, f"{args}: {describe(proc)}")
            self.assertEqual(proc.stdout, b"", args)
            self.assertNotEqual(proc.stderr, b"", args)

    def test_recipient_v1(self):
        pin_key, other = Key(self, pin=True), Key(self)
        keys = [os.urandom(16), os.urandom(16)]
        phase1 = [(["paes-client-grease", "x", "-y"], os.urandom(70)), (["add-recipient", self.key.recipient], b""),
                  (["extension-labels"], b""), (["add-identity", other.identity], b""),
                  (["wrap-file-key"], keys[0]), (["add-recipient", pin_key.recipient], b""),
                  (["wrap-file-key"], keys[1])]
        commands, _ = PluginSession(self, "recipient-v1").run(phase1)
        self.assertGreaterEqual(len(grease_of(commands)), 1, "the plugin sends grease")
        self.assertTrue(all(w[0].startswith("paes-grease-") for w in grease_of(commands)), grease_of(commands))
        opened = set()
        for words, body in without_grease(commands):
            self.assertEqual(words[0], "recipient-stanza", words)
            self.assertEqual(words[2:3], ["test"], words)
            share = b64(words[3].encode())
            for n, key in enumerate((self.key, other, pin_key)):
                file_key = plugin.unwrap(key.private, share, body)
                if file_key is not None:
                    self.assertEqual(file_key, keys[int(words[1])])
                    opened.add((int(words[1]), n))
        self.assertEqual(opened, {(j, n) for j in (0, 1) for n in range(3)}, "a stanza per file key and key")
        self.assertEqual(len(without_grease(commands)), 6)

    def test_recipient_v1_checks_grease_answer(self):
        def answer(words, body):
            return (["ok"], b"") if words[0].startswith("paes-grease-") else None
        commands, _ = PluginSession(self, "recipient-v1").run(
            [(["add-recipient", self.key.recipient], b""), (["wrap-file-key"], os.urandom(16))], answer)
        self.assertEqual([w for w, _ in without_grease(commands)], [["error", "internal"]], commands)

    def test_recipient_v1_foreign_recipient(self):
        _, x25519 = x25519_keys()
        commands, _ = PluginSession(self, "recipient-v1").run(
            [(["add-recipient", self.key.recipient], b""), (["add-recipient", x25519], b""),
             (["wrap-file-key"], os.urandom(16))])
        self.assertEqual([w for w, _ in without_grease(commands)], [["error", "recipient", "1"]], commands)

    def test_identity_v1(self):
        pin_key = Key(self, pin=True)
        keys = [os.urandom(16) for _ in range(4)]

        def stanza(file_index, public, key):
            share, body = plugin.wrap(public, key)
            return (["recipient-stanza", str(file_index), "test", plugin.b64encode(share).decode()], body)
        _, x_recipient = x25519_keys()
        x_line, x_body = x25519_stanza(bech32_decode(x_recipient)[1], keys[0]).split(b"\n", 1)
        phase1 = [
            (["add-identity", self.key.identity], b""),
            (["recipient-stanza", "0", *x_line.decode().split(" ")[1:]], b64(x_body.strip())),
            stanza(0, plugin.public_of(self.key.private), keys[0]),
            (["paes-client-grease"], b""),
            stanza(1, plugin.public_of(Key(self).private), keys[1]),                      # nobody's
            (["add-identity", pin_key.identity], b""),
            (["recipient-stanza", "2", "test", plugin.b64encode(os.urandom(31)).decode()], os.urandom(32)),
            stanza(2, plugin.public_of(self.key.private), keys[2]),
            stanza(3, plugin.public_of(pin_key.private), keys[3]),
            stanza(4, plugin.public_of(pin_key.private), keys[0]),
        ]
        commands, _ = PluginSession(self, "identity-v1").run(phase1)
        got = [(w, b) for w, b in without_grease(commands)]
        self.assertEqual(got, [(["error", "stanza", "2", "0"], got[0][1]), (["request-secret"], plugin.PIN_PROMPT),
                               (["file-key", "0"], keys[0]), (["file-key", "3"], keys[3]),
                               (["file-key", "4"], keys[0])])

    def test_identity_v1_pin_refused(self):
        pin_key = Key(self, pin=True)
        file_key = os.urandom(16)
        phase1 = [(["add-identity", pin_key.identity], b""), (["add-identity", self.key.identity], b"")]
        for key in (pin_key, self.key):
            share, body = plugin.wrap(plugin.public_of(key.private), file_key)
            phase1.append((["recipient-stanza", "0", "test", plugin.b64encode(share).decode()], body))
        for reply in ((["fail"], b""), (["ok"], b"4321")):
            commands, _ = PluginSession(self, "identity-v1").run(
                phase1, lambda words, body: reply if words[0] == "request-secret" else None)
            self.assertEqual([w for w, _ in without_grease(commands)],
                             [["request-secret"], ["file-key", "0"], ["error", "identity", "0"]], reply)

    def test_identity_v1_foreign_identity(self):
        x_text, _ = x25519_keys()
        share, body = plugin.wrap(plugin.public_of(self.key.private), os.urandom(16))
        commands, _ = PluginSession(self, "identity-v1").run(
            [(["add-identity", self.key.identity], b""), (["add-identity", x_text.splitlines()[1]], b""),
             (["recipient-stanza", "0", "test", plugin.b64encode(share).decode()], body)])
        self.assertEqual([w for w, _ in without_grease(commands)], [["error", "identity", "1"]], commands)


class AgePluginTest(PluginTestCase):
    """age 1.1.1's plugin client with the plugin: what the issue asks of paes, shown in age."""

    def age_file(self, args, plain_path, **extra):
        out = self.path(self.unique_name("aged-"))
        self.age_ok([*args, "-o", out, plain_path], **extra)
        return read_file(out), out

    def check_age_header(self, data, key):
        """The file key of age file `data` via its `test` stanza for `key`, its MAC checked."""
        self.assertTrue(data.startswith(AGE_VERSION_LINE), data[:40])
        stanzas, end = parse_stanzas(data, len(AGE_VERSION_LINE))
        file_key = open_test_stanza(stanza_of_type(stanzas, "test"), key.private)
        self.assertEqual(mac_line(data[:end + 3], file_key), data[end + 3:end + 48], "age's MAC, recomputed here")
        return stanzas, file_key

    def test_round_trip_and_log(self):
        self.need_age()
        for size in (0, 70000):
            plain, src = self.plain(size)
            data, path = self.age_file(["-r", self.key.recipient], src)
            self.check_age_header(data, self.key)
            [(machine, phase1, answers)] = self.sessions()
            self.assertEqual((machine, self.known(phase1, ("add-recipient", "add-identity", "wrap-file-key"))),
                             ("recipient-v1", [f"add-recipient {self.key.recipient}", "wrap-file-key"]))
            self.assertEqual(answers, ["unsupported", "ok", "unsupported"], "age's answers in phase 2")
            self.assertEqual(self.age_open(self.key.file, path), plain)
            [(machine, phase1, answers)] = self.sessions()
            self.assertEqual(machine, "identity-v1")
            self.assertEqual(self.known(phase1, ("add-identity", "recipient-stanza"))[0],
                             f"add-identity {self.key.identity}")

    def test_encrypt_to_identity(self):
        self.need_age()
        plain, src = self.plain()
        data, path = self.age_file(["-e", "-i", self.key.file], src)
        self.check_age_header(data, self.key)
        [(machine, phase1, _)] = self.sessions()
        self.assertIn(f"add-identity {self.key.identity}", phase1, "age -e -i wraps through add-identity")
        self.assertEqual(self.age_open(self.key.file, path), plain)

    def test_recipients_file_with_x25519(self):
        self.need_age()
        rfile, identities = self.mixed_recipients_file()
        plain, src = self.plain()
        data, path = self.age_file(["-R", rfile], src)
        stanzas, _ = parse_stanzas(data, len(AGE_VERSION_LINE))
        self.assertEqual(sorted(s.type for s in stanzas), ["X25519", "test", "test"])
        for identity in identities:
            self.assertEqual(self.age_open(identity, path), plain, identity)

    def test_pin_on_terminal(self):
        self.need_age()
        pin_key = Key(self, pin=True)
        plain, src = self.plain()
        _, path = self.age_file(["-r", pin_key.recipient], src)
        proc, screen = run_on_terminal([AGE, "-d", "-i", pin_key.file, path], plugin.PIN.decode(), TIMEOUT, "PIN",
                                       self.full_env())
        self.assertEqual((proc.returncode, proc.stdout), (0, plain), f"{describe(proc)}, terminal {screen!r}")
        self.assertIn(plugin.PIN_PROMPT, screen)
        proc, screen = run_on_terminal([AGE, "-d", "-i", pin_key.file, path], "4321", TIMEOUT, "PIN", self.full_env())
        self.assertEqual((proc.returncode, proc.stdout), (1, b""), f"a wrong PIN: {describe(proc)}")

    def test_pin_without_terminal(self):
        self.need_age()
        pin_key = Key(self, pin=True)
        sealed, _ = self.sealed_age_file(pin_key)
        proc = subprocess.run([AGE, "-d", "-i", pin_key.file, sealed], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=TIMEOUT, env=self.full_env(), start_new_session=True)
        self.assertEqual((proc.returncode, proc.stdout), (1, b""), describe(proc))

    def test_msg_and_confirm(self):
        self.need_age()
        plain, src = self.plain()
        _, path = self.age_file(["-r", self.key.recipient], src, PAES_TEST_PLUGIN_MSG=MSG)
        proc = self.age_ok(["-d", "-i", self.key.file, path], PAES_TEST_PLUGIN_MSG=MSG)
        self.assertEqual(proc.stdout, plain)
        self.assertIn(b"hello from the", proc.stderr, "age shows the plugin's msg")
        proc, screen = run_on_terminal([AGE, "-d", "-i", self.key.file, path], "1", TIMEOUT, "use the test plugin?",
                                       self.full_env(PAES_TEST_PLUGIN_CONFIRM="1"))
        self.assertEqual((proc.returncode, proc.stdout), (0, plain), f"{describe(proc)}, terminal {screen!r}")
        proc = self.run_age(["-d", "-i", self.key.file, path], PAES_TEST_PLUGIN_CONFIRM="1")
        self.assertEqual((proc.returncode, proc.stdout), (1, b""), f"confirm without a terminal: {describe(proc)}")

    def test_faults(self):
        """age refuses what it can see: every fault when decrypting; when encrypting, all but
        many-stanzas, huge-body (age 1.1.1 writes the 100,000 stanzas, the 64 MiB body, into the
        header) and bad-file-key (no file key comes back there)."""
        self.need_age()
        plain, src = self.plain(100)
        out = os.path.join(self.out_dir, "f.age")
        for fault in ("garbage", "early-exit", "long-line", "error", "bad-index"):
            proc = self.run_age(["-r", self.key.recipient, "-o", out, src], PAES_TEST_PLUGIN_FAULT=fault)
            self.assertEqual(proc.returncode, 1, f"encrypt, fault {fault}: {describe(proc)}")
            self.assertEqual(os.listdir(self.out_dir), [], f"encrypt, fault {fault}")
        sealed, plain = self.sealed_age_file(self.key)
        for fault in DECRYPT_FAULTS:
            proc = self.run_age(["-d", "-i", self.key.file, sealed], PAES_TEST_PLUGIN_FAULT=fault)
            self.assertEqual((proc.returncode, proc.stdout), (1, b""), f"decrypt, fault {fault}: {describe(proc)}")

    def sealed_age_file(self, key):
        """(path, plaintext) of an age file made here, its one `test` stanza for `key`."""
        plain, file_key = os.urandom(1000), os.urandom(16)
        header = AGE_VERSION_LINE + plugin.stanza_text(*plugin.wrap(plugin.public_of(key.private), file_key)) + b"---"
        path = write_file(self.path(self.unique_name("made-")),
                          header + mac_line(header, file_key) + age_payload(file_key, plain))
        return path, plain

    def test_malformed_stanza_refused(self):
        self.need_age()
        plain = b"a malformed test stanza"
        file_key = os.urandom(16)
        good = plugin.stanza_text(*plugin.wrap(plugin.public_of(self.key.private), file_key))
        bad = plugin.stanza_text(os.urandom(31), os.urandom(32))
        header = AGE_VERSION_LINE + bad + good + b"---"
        path = write_file(self.path("bad.age"), header + mac_line(header, file_key) + age_payload(file_key, plain))
        proc = self.run_age(["-d", "-i", self.key.file, path])
        self.assertEqual((proc.returncode, proc.stdout), (1, b""), describe(proc))
        header = AGE_VERSION_LINE + good + b"---"
        path = write_file(self.path("good.age"), header + mac_line(header, file_key) + age_payload(file_key, plain))
        self.assertEqual(self.age_open(self.key.file, path), plain, "the same file without the bad stanza")

    def test_plugin_in_current_directory_not_run(self):
        self.need_age()
        cwd, marker = self.current_directory_plugin()
        plain, src = self.plain(100)
        for path_var in self.relative_paths():
            out = os.path.join(self.out_dir, "f.age")
            proc = subprocess.run([AGE, "-r", self.key.recipient, "-o", out, src], stdin=subprocess.DEVNULL, cwd=cwd,
                                  capture_output=True, timeout=TIMEOUT, env={**os.environ, "PATH": path_var})
            self.assertEqual(proc.returncode, 1, f"PATH={path_var}: {describe(proc)}")
            self.assertFalse(os.path.exists(marker), f"PATH={path_var}: age ran ./age-plugin-test")

class AgeToPaesTest(PluginTestCase):
    """age -r's `test` stanza in a paes file opens with paes decrypt -i."""

    def test_age_stanza_in_a_paes_file(self):
        self.need_age()
        other = Key(self)
        for size in (0, 3 * SEGMENT + 7):
            plain, src = self.plain(size)
            aged = self.path(self.unique_name("f-age-"))
            self.age_ok(["-r", self.key.recipient, "-r", other.recipient, "-o", aged, src])
            data = read_file(aged)
            stanzas, _ = parse_stanzas(data, len(AGE_VERSION_LINE))
            self.assertEqual([s.type for s in stanzas], ["test", "test"])
            file_key = open_test_stanza(stanzas[0], self.key.private)
            moved = write_file(self.path(self.unique_name("moved-")),
                               paes_file(b"".join(s.text for s in stanzas), file_key, plain))
            for key in (self.key, other):
                self.assertEqual(self.paes_open(["-i", key.file], moved), plain, f"{size} bytes")


class PaesToAgeTest(PluginTestCase):
    """paes encrypt -r's `test` stanza in an age file opens with age -d -i."""

    def test_paes_stanza_in_an_age_file(self):
        self.need_age()
        for size in (0, 2 * SEGMENT + 99):
            plain, src = self.plain(size)
            data = read_file(self.paes_seal(["-r", self.key.recipient], src))
            stanzas, file_key, body_at = self.paes_header(data)
            self.assertEqual([s.type for s in stanzas], ["test"])
            self.assertEqual(tink_decrypt(tink_streaming_aead(body_ikm(file_key), SEGMENT), data[body_at:], data[:32]),
                             plain, "the body, opened with Tink under HKDF(file key, '', 'paes v3 body')")
            header = AGE_VERSION_LINE + stanzas[0].text + b"---"
            aged = write_file(self.path(self.unique_name("moved-")),
                              header + mac_line(header, file_key) + age_payload(file_key, plain))
            self.assertEqual(self.age_open(self.key.file, aged), plain, f"{size} bytes")


class AgeFilesTest(PluginTestCase):
    """Whole age files with plugin stanzas (issue 41): age's, sealed to the plugin and an X25519
    key, open in paes through the plugin; paes' --format age file to the plugin opens in age."""

    def test_age_files_both_ways(self):
        self.need_age()
        other = Key(self)
        for size in (0, 70000):
            plain, src = self.plain(size)
            aged = self.path(self.unique_name("by-age-"))
            self.age_ok(["-r", self.key.recipient, "-r", other.recipient, "-o", aged, src])
            for key in (self.key, other):
                self.assertEqual(self.paes_open(["-i", key.file], aged), plain, f"age's file, {size} bytes")
            sealed = self.path(self.unique_name("by-paes-"))
            self.paes_ok(["encrypt", "--format", "age", "-r", self.key.recipient, src, "-o", sealed])
            self.assertEqual(self.age_open(self.key.file, sealed), plain, f"paes' age file, {size} bytes")


class DataSetTest(PluginTestCase):
    """A data set sealed to a plugin recipient and opened with its identity (issue 42): one
    recipient-v1 session wraps every file's own key, one identity-v1 session opens all the
    files, so that a hardware key is touched once a set; a file no plugin opens (sealed to
    another key) fails alone, with its own session saying why."""

    def test_one_session_opens_the_set(self):
        tree = self.new_dir("tree")
        plains = {}
        for i in range(5):
            plains[f"f{i}"] = os.urandom(1000 * i)
            write_file(os.path.join(tree, f"f{i}"), plains[f"f{i}"])
        # age's file beside paes' files: the batch opens both formats.
        x_text, x_recipient = x25519_keys()
        # Sealing the set to the plugin and an X25519 key: one recipient-v1 session wraps the
        # five files' keys; each file has its own key all the same.
        self.paes_ok(["encrypt", "-r", self.key.recipient, "-r", x_recipient, "--recursive", tree])
        self.assertEqual([machine for machine, _, _ in self.sessions()], ["recipient-v1"])
        file_keys = {open_test_stanza(stanza_of_type(self.paes_header(read_file(os.path.join(tree, f"f{i}.paes")))[0],
                                                     "test"), self.key.private) for i in range(5)}
        self.assertEqual(len(file_keys), 5)
        self.paes_ok(["encrypt", "--format", "age", "-r", self.key.recipient, os.path.join(tree, "f1"),
                      "-o", os.path.join(tree, "g.age")])
        plains["g"] = plains["f1"]
        other = Key(self)
        stranger = write_file(os.path.join(tree, "h"), b"not for this key")
        self.paes_ok(["encrypt", "-r", other.recipient, "-r", x_recipient, stranger, "-o", stranger + ".paes"])
        self.sessions()  # sealing's: one a file
        proc = self.paes(["decrypt", "-i", self.key.file, "--recursive", tree, "--output-dir", self.out_dir])
        self.assertEqual(proc.returncode, 1, describe(proc))
        lines = proc.stderr.decode().splitlines()
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("h.paes", lines[0])
        opened = {name: read_file(os.path.join(self.out_dir, tree.lstrip("/"), name)) for name in plains}
        self.assertEqual(opened, plains)
        machines = [machine for machine, _, _ in self.sessions()]
        # One for the set, then h's own (which opens nothing and says so).
        self.assertEqual(machines, ["identity-v1", "identity-v1"])


class PaesPluginTest(PluginTestCase):
    """paes' plugin client."""

    def check_fails(self, proc, what, words=("plugin",), code=1):
        """One 'paes: ' line holding one of `words`, no control byte, nothing on stdout, the output
        directory as it was (empty)."""
        problem = self.check_error(proc, code, words, what)
        self.assertIsNone(problem, problem)
        self.assertEqual(control_bytes(proc.stderr), [], f"{what}: control bytes on stderr {proc.stderr!r}")
        self.assertEqual(proc.stdout, b"", what)
        self.assertEqual(os.listdir(self.out_dir), [], f"{what}: left in the output directory")

    def test_round_trip_and_log(self):
        plain, src = self.plain(3 * SEGMENT + 5)
        sealed = self.paes_seal(["-r", self.key.recipient], src)
        _, file_key, _ = self.paes_header(read_file(sealed))
        [(machine, phase1, answers)] = self.sessions()
        self.assertEqual((machine, self.known(phase1, ("add-recipient", "add-identity", "wrap-file-key"))),
                         ("recipient-v1", [f"add-recipient {self.key.recipient}", "wrap-file-key"]))
        self.assertEqual(answers, ["unsupported", "ok", "unsupported"], "paes' answers: grease, the stanza, grease")
        self.assertEqual(self.paes_open(["-i", self.key.file], sealed), plain)
        [(machine, phase1, answers)] = self.sessions()
        self.assertEqual(machine, "identity-v1")
        share = plugin.b64encode(b64(re.search(rb"-> test (\S+)\n", read_file(sealed))[1])).decode()
        self.assertEqual(self.known(phase1, ("add-identity", "recipient-stanza")),
                         [f"add-identity {self.key.identity}", f"recipient-stanza 0 test {share}"])
        self.assertEqual(answers, ["unsupported", "ok", "unsupported"], "paes' answers: grease, file-key, grease")

    def test_encrypt_to_identity(self):
        pin_key = Key(self, pin=True)
        plain, src = self.plain()
        sealed = self.paes_seal(["-i", self.key.file, "-i", pin_key.file], src)
        added = [line for _, phase1, _ in self.sessions() for line in phase1 if line.startswith("add-identity")]
        self.assertEqual(sorted(added), sorted(f"add-identity {k.identity}" for k in (self.key, pin_key)))
        self.assertEqual(self.paes_open(["-i", self.key.file], sealed), plain)

    def test_recipients_file_with_x25519(self):
        rfile, identities = self.mixed_recipients_file()
        plain, src = self.plain()
        sealed = self.paes_seal(["-R", rfile], src)
        stanzas, _ = parse_stanzas(read_file(sealed), 32)
        self.assertEqual(sorted(s.type for s in stanzas), ["X25519", "test", "test"])
        for identity in identities:
            self.assertEqual(self.paes_open(["-i", identity], sealed), plain, identity)

    def test_one_session_per_plugin(self):
        """Two identities of the plugin go to one identity-v1 session (the spec's amortization:
        one PIN prompt, one process); two recipients to one recipient-v1 session."""
        other = Key(self)
        plain, src = self.plain()
        sealed = self.paes_seal(["-r", self.key.recipient, "-r", other.recipient], src)
        [(machine, phase1, _)] = self.sessions()
        self.assertEqual(self.known(phase1, ("add-recipient", "wrap-file-key")),
                         [f"add-recipient {self.key.recipient}", f"add-recipient {other.recipient}", "wrap-file-key"])
        self.assertEqual(self.paes_open(["-i", other.file, "-i", self.key.file], sealed), plain)
        [(machine, phase1, _)] = self.sessions()
        self.assertEqual(self.known(phase1, ("add-identity",)),
                         [f"add-identity {other.identity}", f"add-identity {self.key.identity}"])

    def test_pin_on_terminal(self):
        pin_key = Key(self, pin=True)
        plain, src = self.plain()
        sealed = self.paes_seal(["-r", pin_key.recipient], src)
        out = os.path.join(self.out_dir, "opened")
        for pin, code in (("4321", 1), (plugin.PIN.decode(), 0)):
            proc, screen = run_on_terminal([PAES, "decrypt", "-i", pin_key.file, "-o", out, sealed], pin, TIMEOUT,
                                           "PIN", self.full_env())
            self.assertEqual(proc.returncode, code, f"PIN {pin}: {describe(proc)}, terminal {screen!r}")
            self.assertIn(plugin.PIN_PROMPT, screen, "the plugin's prompt on the terminal")
        self.assertEqual(read_file(out), plain)

    def test_pin_without_terminal(self):
        pin_key = Key(self, pin=True)
        plain, src = self.plain()
        sealed, _ = self.sealed_test_file(plugin.public_of(pin_key.private), plain)
        proc = run_paes(["decrypt", "-i", pin_key.file, "-o", os.path.join(self.out_dir, "opened"), sealed],
                        env=self.env(), timeout=TIMEOUT, start_new_session=True)
        self.check_fails(proc, "a PIN without a terminal", ("secret", "PIN"))

    def test_msg_sanitized(self):
        plain, src = self.plain()
        sealed = self.path("sealed")
        proc = self.paes(["encrypt", "-r", self.key.recipient, src, "-o", sealed], PAES_TEST_PLUGIN_MSG=MSG)
        self.assertEqual(proc.returncode, 0, describe(proc))
        for what, p in (("encrypt", proc), ("decrypt", None)):
            if p is None:
                out = os.path.join(self.out_dir, "opened")
                p = self.paes(["decrypt", "-i", self.key.file, "-o", out, sealed], PAES_TEST_PLUGIN_MSG=MSG)
                self.assertEqual((p.returncode, read_file(out)), (0, plain), describe(p))
            text = p.stderr.decode(errors="replace")
            self.assertEqual(control_bytes(p.stderr), [], f"{what}: control bytes on stderr {p.stderr!r}")
            for word in ("hello from the", "plugin", "bell", "second", "end"):
                self.assertIn(word, text, f"{what}: the plugin's message on stderr")

    def test_confirm_without_terminal(self):
        plain, src = self.plain()
        proc = self.paes(["encrypt", "-r", self.key.recipient, src, "-o", os.path.join(self.out_dir, "f")],
                         PAES_TEST_PLUGIN_CONFIRM="1")
        self.check_fails(proc, "confirm without a terminal", ("confirm",))

    def test_faults_encrypt(self):
        plain, src = self.plain()
        for fault in ENCRYPT_FAULTS:
            proc = self.paes(["encrypt", "-r", self.key.recipient, src, "-o", os.path.join(self.out_dir, "f")],
                             PAES_TEST_PLUGIN_FAULT=fault)
            self.check_fails(proc, f"encrypt, fault {fault}", ("test plugin failure",) if fault == "error" else
                             ("plugin",))

    def test_faults_decrypt(self):
        plain = b"the plugin misbehaves"
        sealed, _ = self.sealed_test_file(plugin.public_of(self.key.private), plain)
        self.assertEqual(self.paes_open(["-i", self.key.file], sealed), plain, "without a fault")
        for fault in DECRYPT_FAULTS:
            proc = self.paes(["decrypt", "-i", self.key.file, "-o", os.path.join(self.out_dir, "f"), sealed],
                             PAES_TEST_PLUGIN_FAULT=fault)
            self.check_fails(proc, f"decrypt, fault {fault}", ("test plugin failure",) if fault == "error" else
                             ("plugin", "identity", "header"))

    def test_missing_plugin(self):
        recipient = bech32_encode("age1missing", os.urandom(33))
        plain, src = self.plain(10)
        proc = self.paes(["encrypt", "-r", recipient, src, "-o", os.path.join(self.out_dir, "f")])
        self.check_fails(proc, "a missing plugin", ("age-plugin-missing",))
        identity = bech32_encode("age-plugin-missing-", os.urandom(33)).upper()
        id_file = write_file(self.path("missing.id"), f"{identity}\n".encode(), 0o600)
        sealed, _ = self.sealed_test_file(plugin.public_of(self.key.private), b"x")
        proc = self.paes(["decrypt", "-i", id_file, "-o", os.path.join(self.out_dir, "f"), sealed])
        self.check_fails(proc, "a missing plugin (decrypt)", ("age-plugin-missing",))

    def test_plugin_in_current_directory_not_run(self):
        cwd, marker = self.current_directory_plugin()
        plain, src = self.plain(100)
        for path_var in self.relative_paths():
            proc = run_paes(["encrypt", "-r", self.key.recipient, src, "-o", os.path.join(self.out_dir, "f")],
                            env={"PATH": path_var}, cwd=cwd, timeout=TIMEOUT)
            self.check_fails(proc, f"PATH={path_var}", ("age-plugin-test",))
            self.assertFalse(os.path.exists(marker), f"PATH={path_var}: paes ran a plugin from the current directory")

    def test_invalid_plugin_names(self):
        plain, src = self.plain(10)
        for name in ("te/st", "../test", "te:st", "te*st", "", "te\\st", "te%st"):
            recipient = bech32_encode("age1" + name, os.urandom(33))
            proc = self.paes(["encrypt", "-r", recipient, src, "-o", os.path.join(self.out_dir, "f")])
            self.check_fails(proc, f"-r {recipient}", ("plugin", "recipient"), code=2)
            rfile = write_file(self.path("recipients.txt"), f"{recipient}\n".encode())
            proc = self.paes(["encrypt", "-R", rfile, src, "-o", os.path.join(self.out_dir, "f")])
            self.check_fails(proc, f"-R with {recipient}", ("plugin", "recipient"), code=2)
            identity = bech32_encode(f"age-plugin-{name}-", os.urandom(33)).upper()
            id_file = write_file(self.path("bad.id"), f"{identity}\n".encode(), 0o600)
            sealed, _ = self.sealed_test_file(plugin.public_of(self.key.private), b"x")
            proc = self.paes(["decrypt", "-i", id_file, "-o", os.path.join(self.out_dir, "f"), sealed])
            self.check_fails(proc, f"-i with {identity}", ("plugin", "identity"), code=proc.returncode
                             if proc.returncode in (1, 2) else 1)
        self.assertEqual(self.sessions(), [], "no plugin ran")

    def test_malformed_stanza(self):
        plain = b"a malformed test stanza"
        file_key = os.urandom(16)
        good = plugin.stanza_text(*plugin.wrap(plugin.public_of(self.key.private), file_key))
        for bad in (plugin.stanza_text(os.urandom(31), os.urandom(32)),
                    plugin.stanza_text(os.urandom(32), os.urandom(31)),
                    b"-> test\n" + plugin.encode_stanza([], os.urandom(32)).split(b"\n", 1)[1]):
            sealed = write_file(self.path("bad"), paes_file(bad + good, file_key, plain))
            proc = self.paes(["decrypt", "-i", self.key.file, "-o", os.path.join(self.out_dir, "f"), sealed])
            self.check_fails(proc, f"a malformed stanza {bad!r}", ("stanza", "header", "plugin"))
        sealed = write_file(self.path("good"), paes_file(good, file_key, plain))
        self.assertEqual(self.paes_open(["-i", self.key.file], sealed), plain, "the same file without it")

    def test_interrupt_ends_the_plugin_group(self):
        """Ctrl-C while a plugin is stuck (it ignores its input's end and SIGINT): paes ends the
        plugin's process group, which the terminal's SIGINT doesn't reach, and leaves no output;
        the plugin's process is gone once paes is."""
        _, src = self.plain()
        out = os.path.join(self.out_dir, "interrupted")
        marker = f"PAES_INTERRUPT_MARK_{os.getpid()}_{id(self)}"
        env = {**self.full_env(PAES_TEST_PLUGIN_FAULT="hang"), marker: "1"}
        proc = subprocess.Popen([PAES, "encrypt", "-r", self.key.recipient, src, "-o", out], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            wait_for(lambda: os.path.exists(self.log) and b"done" in read_file(self.log), "the plugin to start",
                     gave_up=lambda: None if proc.poll() is None else f"paes ended first, exit {proc.returncode}")
            plugins = [pid for pid in processes_with(marker) if pid != proc.pid]
            self.assertEqual(len(plugins), 1, "one plugin process (python, exec'd by the wrapper)")
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=TIMEOUT)
        finally:
            killed_unless_finished(proc)
        self.assertEqual(proc.returncode, -signal.SIGINT, f"paes dies of the signal: {err!r}")
        wait_for(lambda: not processes_with(marker), "the plugin's process group to end")
        self.assertEqual(os.listdir(self.out_dir), [], "left in the output directory")


def processes_with(marker):
    """The pids of live processes whose environment holds `marker` (zombies have none)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker.encode() + b"=" in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return [pid for pid in found if pid != os.getpid()]


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals(), need_openssl=False))
