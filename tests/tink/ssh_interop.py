#!/usr/bin/env python3
"""ssh keys as age uses them (issue 40): paes' ssh-ed25519 and ssh-rsa stanzas, checked against age, both ways.

  .venv/bin/python tests/tink/ssh_interop.py --paes build/release/paes [TestClass ...]

paes encrypts to an OpenSSH public key (-r "ssh-ed25519 AAAA... comment", or a -R file of such
lines) and decrypts with the OpenSSH private key (-i ~/.ssh/id_ed25519), in stanzas exactly age's
(agessh): TAG = base64(SHA-256(the key's ssh wire encoding)[:4]);
  -> ssh-ed25519 TAG SHARE   the Ed25519 key as X25519 (u = (1+y)/(1-y); the scalar SHA-512(seed)[:32]),
                             the shared secret X25519(HKDF(ikm "", salt wire, label), X25519(e, u)), the file
                             key under ChaCha20-Poly1305 (zero nonce) keyed by HKDF(that secret,
                             SHARE || u, label), label "age-encryption.org/v1/ssh-ed25519";
  -> ssh-rsa TAG             RSA-OAEP-SHA256 of the file key, label "age-encryption.org/v1/ssh-rsa".
The rest of the file is paes' version 3, as for any stanza (see scrypt_interop.py). So:

  Ed25519Test, RsaTest  keys made by ssh-keygen (ed25519; rsa 3072, whose stanza body fills its
                        base64 lines exactly): paes seals to them (-r, -R) and opens with them; the
                        file key unwrapped here from paes' stanza (age's construction, written from
                        agessh) checks paes' header MAC and Tink body; paes' stanza moved into an
                        age file opens with `age -d -i KEY`; `age -R KEY.pub`'s stanza moved into a
                        paes file, and one built here, open with paes decrypt -i; another key of
                        the same type, or of the other, fails "no identity matches".
  PassphraseKeyTest     the same keys protected by a passphrase (ssh-keygen -p) typed on a
                        pseudo-terminal, both ways; paes asks only when a stanza's tag matches the
                        key, fails with one line without a terminal or with a wrong passphrase, and
                        never prints the passphrase.
  RefusedKeysTest       an RSA key under 2048 bits is refused (exit 2); an ecdsa line in a -R
                        file beside an ed25519 line is warned about and skipped (age 1.1.1 does
                        the same: the facts are checked against age too).
  PythonAgainstAgeTest  this script's wrap and unwrap against age alone (no paes): its stanzas
                        open with age -d, and age's open here.

ssh-keygen makes the keys once per class; age reads a passphrase from /dev/tty only, so it runs,
as paes does for a key's passphrase, with a pseudo-terminal as its controlling terminal.

Needs the Python packages `tink` and `cryptography` (exit 77 without them), ssh-keygen (each
class skips, saying why, without it) and age (the tests that run it skip without it). Exits
non-zero when a test fails.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import tink  # noqa: F401
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
except ImportError as exc:  # the whole file needs both
    print(f"ssh_interop.py: SKIP: the Python packages `tink` and `cryptography` are needed ({exc}); "
          f"run with scripts/setup.sh's .venv", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from age_interop import (AGE_CHUNK, AGE_VERSION_LINE, SEGMENT, age_payload, b64, paes_file, paes_preamble,  # noqa: E402
                         parse_stanzas, run_on_terminal, stanza_text)
from recipients_commit import body_ikm, mac_line  # noqa: E402
from tink_raw_key import tink_decrypt, tink_streaming_aead  # noqa: E402
from harness import (ScratchTestCase, describe, error_lines, read_file, run_paes, run_test_script,  # noqa: E402
                     write_file)
from harness.sealed_format import b64_unpadded, hkdf_sha256  # noqa: E402

PAES = "paes"
AGE = shutil.which("age")
SSH_KEYGEN = shutil.which("ssh-keygen")
NO_AGE = "age is not installed"
NO_SSH_KEYGEN = "ssh-keygen is not installed (OpenSSH's client tools make the keys)"
PASSPHRASE = "issue 40 ssh key secret"   # without the word run_on_terminal counts prompts by
WRONG_PASSPHRASE = "not the key's secret"
ED25519_LABEL = b"age-encryption.org/v1/ssh-ed25519"
RSA_LABEL = b"age-encryption.org/v1/ssh-rsa"
P25519 = 2 ** 255 - 19
NO_MATCH = "no identity matches"


# ---------------------------------------------------------------- age's ssh stanzas, from agessh

def ssh_wire(public_line):
    """The ssh wire encoding of the key on an authorized_keys-style line (its second field)."""
    return b64(public_line.split()[1].rstrip(b"="))


def ssh_tag(wire):
    """agessh's sshFingerprint: base64 (unpadded) of SHA-256(wire)[:4], 6 characters."""
    return b64_unpadded(hashlib.sha256(wire).digest()[:4]).decode()


def ed25519_public_to_x25519(public):
    """The Montgomery u of an Ed25519 public key (its y, little-endian, sign bit cleared):
    u = (1 + y) / (1 - y) mod p, as edwards25519's BytesMontgomery."""
    y = int.from_bytes(public, "little") & ((1 << 255) - 1)
    return ((1 + y) * pow(1 - y, P25519 - 2, P25519) % P25519).to_bytes(32, "little")


def x25519(scalar, point):
    """X25519(scalar, u) (the scalar clamped, as RFC 7748 and Go do)."""
    return X25519PrivateKey.from_private_bytes(scalar).exchange(X25519PublicKey.from_public_bytes(point))


def ed25519_tweak(wire):
    """agessh: hkdf.New(sha256.New, nil, wire, label): the wire key is HKDF's salt, its secret empty."""
    return hkdf_sha256(b"", wire, ED25519_LABEL)


def load_private(path):
    """An unencrypted OpenSSH private key file, as a cryptography key."""
    return serialization.load_ssh_private_key(read_file(path), password=None)


def wrap_ssh(public_line, file_key):
    """The stanza text age's ssh-ed25519 or ssh-rsa recipient writes for `file_key`."""
    wire = ssh_wire(public_line)
    key = serialization.load_ssh_public_key(public_line)
    if isinstance(key, ed25519.Ed25519PublicKey):
        theirs = ed25519_public_to_x25519(key.public_bytes_raw())
        e = X25519PrivateKey.generate()
        share = e.public_key().public_bytes_raw()
        shared = x25519(ed25519_tweak(wire), e.exchange(X25519PublicKey.from_public_bytes(theirs)))
        wrap_key = hkdf_sha256(shared, share + theirs, ED25519_LABEL)
        wrapped = ChaCha20Poly1305(wrap_key).encrypt(bytes(12), file_key, None)
        return stanza_text("ssh-ed25519", [ssh_tag(wire), b64_unpadded(share).decode()], wrapped)
    assert isinstance(key, rsa.RSAPublicKey), key
    return stanza_text("ssh-rsa", [ssh_tag(wire)], key.encrypt(file_key, rsa_oaep()))


def rsa_oaep():
    return padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=RSA_LABEL)


def unwrap_ssh(stanza, private_path):
    """The file key in `stanza` (a Stanza) for the unencrypted private key at `private_path`, as
    agessh's identities unwrap it; AssertionError when the stanza is not one for that key."""
    key = load_private(private_path)
    wire = ssh_wire(key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH))
    if isinstance(key, ed25519.Ed25519PrivateKey):
        if stanza.type != "ssh-ed25519" or len(stanza.args) != 2:
            raise AssertionError(f"not an ssh-ed25519 stanza: {stanza.text!r}")
        seed = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption())
        scalar = hashlib.sha512(seed).digest()[:32]
        ours = ed25519_public_to_x25519(key.public_key().public_bytes_raw())
        if X25519PrivateKey.from_private_bytes(scalar).public_key().public_bytes_raw() != ours:
            raise AssertionError("this script's Ed25519-to-X25519 conversion disagrees with itself")
        share = b64(stanza.args[1].encode())
        if len(share) != 32 or len(stanza.body) != 32:
            raise AssertionError(f"an ssh-ed25519 stanza of a 32-byte share and body: {stanza.text!r}")
        shared = x25519(ed25519_tweak(wire), x25519(scalar, share))
        wrap_key = hkdf_sha256(shared, share + ours, ED25519_LABEL)
    else:
        assert isinstance(key, rsa.RSAPrivateKey), key
        if stanza.type != "ssh-rsa" or len(stanza.args) != 1:
            raise AssertionError(f"not an ssh-rsa stanza: {stanza.text!r}")
        if len(stanza.body) != key.key_size // 8:
            raise AssertionError(f"an ssh-rsa stanza's body is the modulus' size, {key.key_size // 8}: {stanza.text!r}")
    if stanza.args[0] != ssh_tag(wire):
        raise AssertionError(f"the stanza's tag {stanza.args[0]} is not the key's, {ssh_tag(wire)}")
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return ChaCha20Poly1305(wrap_key).decrypt(bytes(12), stanza.body, None)
    return key.decrypt(stanza.body, rsa_oaep())


def parse_header(data, start):
    """([Stanza], the MAC, offset of the payload) of an age or paes v3 header's stanzas at `start`."""
    stanzas, dashes = parse_stanzas(data, start)
    m = re.compile(rb"--- ([A-Za-z0-9+/]{43})\n").match(data, dashes)
    if m is None:
        raise AssertionError(f"no MAC line after the stanzas: {data[dashes:dashes + 60]!r}")
    return stanzas, b64(m[1]), m.end()


# ---------------------------------------------------------------- keys

class SshKey:
    """A key ssh-keygen made: `path` (the private key, encrypted under PASSPHRASE when
    `protected`), `path`.pub, `plain` (the same key unencrypted, for the unwrap here), the
    public line, its wire encoding and age's tag."""

    def __init__(self, directory, name, kind, bits=None, protected=False, pem=False):
        self.name, self.kind, self.bits, self.protected, self.pem = name, kind, bits, protected, pem
        self.path = os.path.join(directory, name)
        self.plain = self.path + "-plain" if protected else self.path
        cmd = [SSH_KEYGEN, "-q", "-t", kind, "-N", "", "-C", f"{name}@ssh-interop", "-f", self.plain]
        run_tool(cmd + (["-b", str(bits)] if bits else []))
        if protected:
            shutil.copyfile(self.plain, self.path)
            shutil.copyfile(self.plain + ".pub", self.path + ".pub")
            os.chmod(self.path, 0o600)
            run_tool([SSH_KEYGEN, "-q", "-p", "-P", "", "-N", PASSPHRASE, *(["-m", "PEM"] if pem else []),
                      "-f", self.path])
            if read_file(self.path) == read_file(self.plain):
                raise AssertionError("ssh-keygen -p did not encrypt the key")
        self.pub = self.path + ".pub"
        self.line = read_file(self.pub).strip()
        self.wire = ssh_wire(self.line)
        self.tag = ssh_tag(self.wire)
        self.stanza_type = self.line.split()[0].decode()


def run_tool(cmd):
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)}: {describe(proc)}")
    return proc


class SshTestCase(ScratchTestCase):
    """Makes the class's KEYS ((name, ssh-keygen -t, -b or None, passphrase-protected)) once,
    in setUpClass, as self.keys[name]."""

    prefix = "paes-ssh-interop-"
    KEYS = ()

    @classmethod
    def setUpClass(cls):
        if SSH_KEYGEN is None:
            raise unittest.SkipTest(NO_SSH_KEYGEN)
        cls.key_dir = tempfile.mkdtemp(prefix="paes-ssh-interop-keys-")
        try:
            cls.keys = {name: SshKey(cls.key_dir, name, *spec) for name, *spec in cls.KEYS}
        except BaseException:
            shutil.rmtree(cls.key_dir, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.key_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.out_dir = self.new_dir("out")
        self.out = os.path.join(self.out_dir, "plain")

    def need_age(self):
        if AGE is None:
            self.skipTest(NO_AGE)

    # -- paes

    def paes_seal(self, plain, recipient_args, aad=b""):
        """paes encrypt to `recipient_args` (-r LINE, -R FILE ...); the file's bytes."""
        inp = write_file(self.path(self.unique_name("plain-")), plain)
        out = self.path(self.unique_name("sealed-"))
        aad_args = ["--aad", aad.decode()] if aad else []
        proc = run_paes(["encrypt", *recipient_args, "--segment-size", "4K", *aad_args, inp, "-o", out])
        self.assertEqual(proc.returncode, 0, f"paes encrypt {' '.join(map(str, recipient_args))}: {describe(proc)}")
        self.assertEqual(proc.stderr, b"", "paes encrypt printed something")
        return read_file(out)

    def open_paes_file(self, data, key, plain, aad=b"", stanzas=1):
        """Checks a paes file sealed to `key` (and stanzas - 1 other recipients) here: its
        stanza for the key unwrapped as age would, the header MAC and the Tink body checked
        under that file key. Returns (the key's Stanza, file key)."""
        self.assertEqual(data[:32].hex(), paes_preamble().hex(), "the preamble")
        found, _, end = parse_header(data, 32)
        self.assertEqual(len(found), stanzas, f"the stanzas: {[s.text for s in found]}")
        mine = [s for s in found if s.type == key.stanza_type and s.args[:1] == [key.tag]]
        self.assertEqual(len(mine), 1, f"one {key.stanza_type} stanza tagged {key.tag} in {[s.text for s in found]}")
        file_key = unwrap_ssh(mine[0], key.plain)
        self.assertEqual(len(file_key), 16, "the file key")
        self.assertEqual(mac_line(data[:end - 45] + aad, file_key), data[end - 45:end],
                         "paes' header MAC is not age's MAC under the file key in its ssh stanza")
        body = tink_decrypt(tink_streaming_aead(body_ikm(file_key), SEGMENT), data[end:], data[:32] + aad)
        self.assertEqual(body, plain, "the body, opened with Tink under the file key in paes' ssh stanza")
        return mine[0], file_key

    def paes_open(self, data, identities, plain, aad=b"", what=""):
        """paes decrypt -i each of `identities` (paths) opens `data` to `plain`, saying nothing."""
        path = write_file(self.path(self.unique_name("in-")), data)
        args = [a for i in identities for a in ("-i", i)] + (["--aad", aad.decode()] if aad else [])
        proc = run_paes(["decrypt", *args, "-o", self.out, path])
        self.assertEqual(proc.returncode, 0, f"paes decrypt {' '.join(args)} ({what}): {describe(proc)}")
        self.assertEqual(read_file(self.out), plain, f"paes decrypt {' '.join(args)} ({what})")
        self.assertEqual(proc.stderr, b"", f"paes decrypt {' '.join(args)} ({what}) printed something")
        os.remove(self.out)

    def paes_on_terminal(self, data, identities, passphrase=PASSPHRASE):
        """paes decrypt -i each of `identities`, with a pseudo-terminal that types `passphrase`
        at each prompt: (process, what the terminal showed, the output or None)."""
        path = write_file(self.path(self.unique_name("in-")), data)
        args = [a for i in identities for a in ("-i", i)]
        proc, screen = run_on_terminal([PAES, "decrypt", *args, "-o", self.out, path], passphrase, timeout=60)
        out = None
        if os.path.exists(self.out):
            out = read_file(self.out)
            os.remove(self.out)
        for secret in (PASSPHRASE, WRONG_PASSPHRASE):
            self.assertNotIn(secret.encode(), proc.stdout + proc.stderr + screen, "paes printed a passphrase")
        return proc, screen, out

    def assert_no_match(self, data, identities, **run_options):
        path = write_file(self.path(self.unique_name("in-")), data)
        self.assert_fails(["decrypt", *[a for i in identities for a in ("-i", i)], "-o", self.out, path], 1,
                          NO_MATCH, out_dir=self.out_dir, **run_options)

    # -- age

    def age_seal(self, plain, key):
        """`age -R key.pub`'s file for `plain`: (its bytes, its one Stanza, its file key)."""
        inp = write_file(self.path(self.unique_name("plain-")), plain)
        out = self.path(self.unique_name("aged-"))
        run_tool([AGE, "-R", key.pub, "-o", out, inp])
        data = read_file(out)
        self.assertTrue(data.startswith(AGE_VERSION_LINE), data[:40])
        stanzas, _, end = parse_header(data, len(AGE_VERSION_LINE))
        self.assertEqual([(s.type, s.args[0]) for s in stanzas], [(key.stanza_type, key.tag)],
                         f"age's stanza for {key.name}: type and tag")
        file_key = unwrap_ssh(stanzas[0], key.plain)
        self.assertEqual(mac_line(data[:end - 45], file_key), data[end - 45:end], "age's MAC, recomputed here")
        return data, stanzas[0], file_key

    def age_open(self, stanza, file_key, plain, key):
        """An age file of `stanza` and `file_key` opens with `age -d -i key` to `plain` (the
        passphrase typed on a terminal when the key has one)."""
        header = AGE_VERSION_LINE + stanza.text + b"---"
        aged = write_file(self.path(self.unique_name("moved-")), header + mac_line(header, file_key)
                          + age_payload(file_key, plain))
        proc, screen = run_on_terminal([AGE, "-d", "-i", key.path, aged], PASSPHRASE, timeout=60)
        self.assertEqual(proc.returncode, 0, f"age -d -i {key.name} of the moved stanza: {describe(proc)}, "
                                             f"terminal {screen!r}")
        self.assertEqual(proc.stdout, plain, f"age -d -i {key.name} of the moved stanza ({len(plain)} bytes)")
        self.assertEqual(b"passphrase" in screen.lower(), key.protected, f"age's prompt: {screen!r}")


class KeyTypeChecks:
    """The checks of one key type (a mixin: SshTestCase subclasses set KEY and OTHERS): paes
    seals to KEY and opens with it, both ways with age, and with any of OTHERS fails."""

    KEY = None
    OTHERS = ()
    SIZES = (0, 1, SEGMENT, 3 * SEGMENT + 77, AGE_CHUNK + 5)

    @property
    def key(self):
        return self.keys[self.KEY]

    def test_paes_seals_and_opens(self):
        key = self.key
        no_comment = write_file(self.path("recipients.txt"), b"# ssh keys\n\n" + b" ".join(key.line.split()[:2])
                                + b"\n")
        for size in self.SIZES:
            plain = os.urandom(size)
            for args in (["-r", key.line.decode()], ["-R", key.pub], ["-R", no_comment]):
                data = self.paes_seal(plain, args)
                self.open_paes_file(data, key, plain)
                self.paes_open(data, [key.path], plain, what=f"{size} bytes, sealed with {args[0]}")
        plain = b"with an aad"
        data = self.paes_seal(plain, ["-r", key.line.decode()], aad=b"ssh ctx")
        self.open_paes_file(data, key, plain, aad=b"ssh ctx")
        self.paes_open(data, [key.path], plain, aad=b"ssh ctx", what="--aad")

    def test_several_recipients(self):
        key, other = self.key, self.keys[self.OTHERS[0]]
        plain = os.urandom(2 * SEGMENT)
        data = self.paes_seal(plain, ["-r", other.line.decode(), "-r", key.line.decode()])
        self.assertEqual(self.open_paes_file(data, key, plain, stanzas=2)[1],
                         self.open_paes_file(data, other, plain, stanzas=2)[1], "one file key in both stanzas")
        self.paes_open(data, [key.path], plain, what="the second of two recipients")
        self.paes_open(data, [other.path], plain, what="the first of two recipients")

    def test_wrong_key_fails(self):
        plain = b"for one key only"
        data = self.paes_seal(plain, ["-r", self.key.line.decode()])
        for name in self.OTHERS:
            self.assert_no_match(data, [self.keys[name].path])
        self.paes_open(data, [self.keys[self.OTHERS[0]].path, self.key.path], plain, what="the second identity")

    def test_python_stanza_opens_in_paes(self):
        for plain in (b"", os.urandom(3 * SEGMENT + 5)):
            file_key = os.urandom(16)
            data = paes_file(wrap_ssh(self.key.line, file_key), file_key, plain)
            self.paes_open(data, [self.key.path], plain, what="a stanza built here")
        # The tag decides: a stanza of this type tagged for another key is not this key's.
        stanza = wrap_ssh(self.key.line, file_key)
        tag = self.key.tag.encode()
        wrong = b"AAAAAA" if tag != b"AAAAAA" else b"BBBBBB"
        self.assert_no_match(paes_file(stanza.replace(tag, wrong, 1), file_key, plain), [self.key.path])

    def test_paes_stanza_opens_in_age(self):
        self.need_age()
        for size in (0, 5000, 2 * AGE_CHUNK + 3):
            plain = os.urandom(size)
            data = self.paes_seal(plain, ["-r", self.key.line.decode()])
            stanza, file_key = self.open_paes_file(data, self.key, plain)
            self.age_open(stanza, file_key, plain, self.key)

    def test_age_stanza_opens_in_paes(self):
        self.need_age()
        plain = os.urandom(3 * SEGMENT + 99)
        _, stanza, file_key = self.age_seal(plain, self.key)
        for aad in (b"", b"age meets paes"):
            self.paes_open(paes_file(stanza.text, file_key, plain, aad), [self.key.path], plain, aad,
                           f"age's stanza, aad {aad!r}")
        self.assert_no_match(paes_file(stanza.text, file_key, plain), [self.keys[n].path for n in self.OTHERS])


class Ed25519Test(KeyTypeChecks, SshTestCase):
    """ssh-ed25519: ssh-keygen -t ed25519."""

    KEYS = (("id_ed25519", "ed25519", None, False), ("other_ed25519", "ed25519", None, False),
            ("other_rsa", "rsa", 2048, False))
    KEY = "id_ed25519"
    OTHERS = ("other_ed25519", "other_rsa")


class RsaTest(KeyTypeChecks, SshTestCase):
    """ssh-rsa: ssh-keygen -t rsa -b 3072 (a 384-byte body: 8 full base64 lines, then an empty one)."""

    KEYS = (("id_rsa", "rsa", 3072, False), ("other_rsa", "rsa", 2048, False),
            ("other_ed25519", "ed25519", None, False))
    KEY = "id_rsa"
    OTHERS = ("other_rsa", "other_ed25519")


class PassphraseKeyTest(SshTestCase):
    """Keys under a passphrase (ssh-keygen -p), typed on a pseudo-terminal when a stanza is theirs.
    An RSA key so protected is in PEM (ssh-keygen -p -m PEM): libssh 0.10 decrypts one in OpenSSH's
    container but can't hand the RSA key over, so paes refuses that one, saying how to convert it."""

    KEYS = (("id_ed25519", "ed25519", None, True), ("id_rsa", "rsa", 2048, True, True),
            ("other_ed25519", "ed25519", None, False), ("openssh_rsa", "rsa", 2048, True))

    def protected(self):
        return [self.keys["id_ed25519"], self.keys["id_rsa"]]

    def assert_opened(self, result, plain, what):
        proc, screen, out = result
        self.assertEqual(proc.returncode, 0, f"{what}: {describe(proc)}, terminal {screen!r}")
        self.assertEqual(out, plain, what)
        self.assertIn(b"passphrase", screen.lower(), f"{what}: no passphrase prompt on the terminal")
        self.assertEqual(proc.stderr, b"", f"{what}: printed something")

    def test_typed_on_terminal(self):
        for key in self.protected():
            plain = os.urandom(2 * SEGMENT + 1)
            data = self.paes_seal(plain, ["-r", key.line.decode()])
            self.open_paes_file(data, key, plain)
            self.assert_opened(self.paes_on_terminal(data, [key.path]), plain, f"paes decrypt -i {key.name}")

    def test_public_key_from_the_key_file(self):
        """An OpenSSH key file holds its public key unencrypted: no NAME.pub is needed, before
        or after the passphrase. A protected PEM key has none: paes names the NAME.pub it needs."""
        alone = self.new_dir("alone")
        plain = b"no .pub beside the key"
        key = self.keys["id_ed25519"]
        path = shutil.copy(key.path, os.path.join(alone, key.name))
        data = self.paes_seal(plain, ["-r", key.line.decode()])
        self.assert_opened(self.paes_on_terminal(data, [path]), plain, f"{key.name} without {key.name}.pub")
        rsa = self.keys["id_rsa"]
        path = shutil.copy(rsa.path, os.path.join(alone, rsa.name))
        proc, screen, out = self.paes_on_terminal(self.paes_seal(plain, ["-r", rsa.line.decode()]), [path])
        self.assertEqual((proc.returncode, out), (2, None), f"a PEM key without its .pub: {describe(proc)}")
        self.assertIn(b"id_rsa.pub", proc.stderr)
        self.assertNotIn(b"passphrase", screen.lower(), "asked for a passphrase before finding the public key")

    def test_openssh_rsa_refused_with_the_way_out(self):
        key = self.keys["openssh_rsa"]
        data = self.paes_seal(b"x", ["-r", key.line.decode()])
        proc, screen, out = self.paes_on_terminal(data, [key.path])
        self.assertEqual((proc.returncode, out), (2, None), f"a protected OpenSSH rsa key: {describe(proc)}")
        self.assertIn(b"PEM format", proc.stderr)
        self.assertEqual(len(error_lines(proc.stderr)), 1, proc.stderr)
        self.assertNotIn(b"passphrase:", screen.lower(), "asked for a passphrase paes can't use")

    def test_no_prompt_for_another_key(self):
        other = self.keys["other_ed25519"]
        plain = b"sealed to another key"
        data = self.paes_seal(plain, ["-r", other.line.decode()])
        for key in self.protected():
            proc, screen, out = self.paes_on_terminal(data, [key.path])
            self.assertEqual((proc.returncode, out), (1, None), f"-i {key.name}: {describe(proc)}")
            self.assertNotIn(b"passphrase", screen.lower(), f"-i {key.name}: asked for a passphrase it needs not")
            problem = self.check_error(proc, 1, NO_MATCH, f"paes decrypt -i {key.name} of another key's file")
            self.assertIsNone(problem, problem)
            # Without a terminal too, and with the other key's identity beside it: it opens.
            self.assert_no_match(data, [key.path], start_new_session=True)
            proc, screen, out = self.paes_on_terminal(data, [key.path, other.path])
            self.assertEqual((proc.returncode, out), (0, plain), f"-i {key.name} -i other: {describe(proc)}")
            self.assertNotIn(b"passphrase", screen.lower(), f"-i {key.name} -i other: asked for a passphrase")

    def test_no_terminal(self):
        for key in self.protected():
            data = self.paes_seal(b"needs the passphrase", ["-r", key.line.decode()])
            path = write_file(self.path(self.unique_name("in-")), data)
            proc = self.assert_fails(["decrypt", "-i", key.path, "-o", self.out, path], 1,
                                     ("terminal", "passphrase", "tty"), out_dir=self.out_dir, start_new_session=True)
            self.assertNotIn(PASSPHRASE.encode(), proc.stderr)

    def test_wrong_passphrase(self):
        for key in self.protected():
            data = self.paes_seal(b"the right passphrase only", ["-r", key.line.decode()])
            proc, screen, out = self.paes_on_terminal(data, [key.path], WRONG_PASSPHRASE)
            self.assertEqual((proc.returncode, out), (1, None), f"-i {key.name}, a wrong passphrase: {describe(proc)}")
            self.assertIn(b"passphrase", screen.lower(), f"-i {key.name}: no prompt")
            lines = error_lines(proc.stderr)
            self.assertEqual(len(lines), 1, f"-i {key.name}, a wrong passphrase: one line, got {proc.stderr!r}")
            self.assertTrue(lines[0].startswith("paes: "), lines)
            self.assertEqual(os.listdir(self.out_dir), [], "a wrong passphrase left output behind")

    def test_age_both_ways(self):
        self.need_age()
        for key in self.protected():
            plain = os.urandom(AGE_CHUNK + 17)
            data = self.paes_seal(plain, ["-r", key.line.decode()])
            stanza, file_key = self.open_paes_file(data, key, plain)
            self.age_open(stanza, file_key, plain, key)
            _, stanza, file_key = self.age_seal(plain, key)
            self.assert_opened(self.paes_on_terminal(paes_file(stanza.text, file_key, plain), [key.path]), plain,
                               f"age -R {key.name}.pub's stanza in a paes file")


class RefusedKeysTest(SshTestCase):
    """What age refuses or skips, paes does too: RSA under 2048 bits, other ssh key types."""

    KEYS = (("rsa1024", "rsa", 1024, False), ("ecdsa", "ecdsa", None, False), ("id_ed25519", "ed25519", None, False))

    def test_rsa_1024_refused(self):
        inp = write_file(self.path("plain"), b"not to a small key")
        self.assert_fails(["encrypt", "-r", self.keys["rsa1024"].line.decode(), inp, "-o", self.out], 2, "2048",
                          out_dir=self.out_dir)

    def ecdsa_beside_ed25519(self):
        """A -R file: a comment, the ed25519 line, the ecdsa line (line 3)."""
        return write_file(self.path("mixed.keys"), b"# two keys\n" + self.keys["id_ed25519"].line + b"\n"
                          + self.keys["ecdsa"].line + b"\n")

    def test_ecdsa_line_warned(self):
        keys = self.ecdsa_beside_ed25519()
        inp = write_file(self.path("plain"), b"to the ed25519 key")
        out = self.path("sealed")
        proc = run_paes(["encrypt", "-R", keys, "--segment-size", "4K", inp, "-o", out])
        self.assertEqual(proc.returncode, 0, f"paes encrypt -R with an ecdsa line: {describe(proc)}")
        lines = error_lines(proc.stderr)
        self.assertEqual(len(lines), 1, f"one warning line, got {proc.stderr!r}")
        self.assertIn("warning", lines[0].lower())
        self.assertIn("mixed.keys", lines[0], "the warning names the file")
        self.assertRegex(lines[0], r"\b3\b", "the warning names the line")
        data = read_file(out)
        self.open_paes_file(data, self.keys["id_ed25519"], b"to the ed25519 key")
        self.paes_open(data, [self.keys["id_ed25519"].path], b"to the ed25519 key")

    def test_age_does_the_same(self):
        """age 1.1.1, the facts paes follows: -r of a 1024-bit RSA key fails; a -R file's ecdsa
        line is skipped with a warning naming the file and line, the file sealed to the rest."""
        self.need_age()
        inp = write_file(self.path("plain"), b"age")
        proc = subprocess.run([AGE, "-r", self.keys["rsa1024"].line.decode(), "-o", self.out, inp],
                              capture_output=True, stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 1, describe(proc))
        self.assertIn(b"too small", proc.stderr)
        proc = subprocess.run([AGE, "-R", self.ecdsa_beside_ed25519(), "-o", self.out, inp],
                              capture_output=True, stdin=subprocess.DEVNULL)
        self.assertEqual(proc.returncode, 0, describe(proc))
        self.assertRegex(proc.stderr.decode(), r"warning: .*mixed\.keys.*ecdsa-sha2-nistp256.* line 3")


class PythonAgainstAgeTest(SshTestCase):
    """This script's wrap and unwrap, against age alone: no paes runs here."""

    KEYS = (("id_ed25519", "ed25519", None, False), ("id_rsa", "rsa", 3072, False))

    def test_stanzas_built_here_open_in_age(self):
        self.need_age()
        for key in self.keys.values():
            file_key, plain = os.urandom(16), os.urandom(1000)
            stanza = wrap_ssh(key.line, file_key)
            parsed, end = parse_stanzas(stanza + b"---", 0)
            self.assertEqual((len(parsed), parsed[0].text, end), (1, stanza, len(stanza)), "parse_stanzas")
            self.assertEqual(unwrap_ssh(parsed[0], key.plain), file_key, "unwrap of this script's wrap")
            self.age_open(parsed[0], file_key, plain, key)

    def test_age_stanzas_open_here(self):
        self.need_age()
        for key in self.keys.values():
            self.age_seal(b"age's", key)   # unwraps here and checks age's MAC with the file key


if __name__ == "__main__":
    sys.exit(run_test_script(__doc__, globals(), need_openssl=False))
