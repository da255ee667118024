#!/usr/bin/env python3
"""Regenerates the committed seed corpora under fuzz/corpus/<target>/.

Valid inputs come from the real tools, so each fuzzer starts inside its
format: sealed files from the paes binary (with the fixed key of
fuzz_segment_decoder.cpp), "Salted__" files from openssl enc -pbkdf2 -iter 1
(the passphrase of fuzz_salted_header.cpp), age files from paes and age (to
the identity of fuzz_age_file.cpp), ssh public key lines from
ssh-keygen, and paes command lines from the documentation. Edge cases (empty, truncated, one byte changed) are added by
hand. Regression inputs (regression-*) and what scripts/fuzz.sh merged in
(sha1 names) are kept. Usage:

    fuzz/make_corpus.py --paes build/release/paes [--openssl openssl] [--ssh-keygen ssh-keygen]
"""
import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = bytes(range(32))  # kKey in fuzz_segment_decoder.cpp
AGE_IDENTITY = bytes(range(32, 64))  # kIdentity in fuzz_age_file.cpp
PASSPHRASE = "fuzz"     # kPassphrase in fuzz_salted_header.cpp
TINK_SEGMENT_LENS = [41, 57, 64, 100, 256, 1024, 4096, 1 << 20]  # kTinkSegmentLens
MODES = ["ecb", "cbc", "cfb", "cfb8", "cfb1", "ofb", "ctr"]      # paes::kAllModes order
OPENSSL_MODE = {"cfb": "cfb", "cfb8": "cfb8", "cfb1": "cfb1"}


def plaintext(length):
    return bytes((i * 7 + 3) % 256 for i in range(length))


class Maker:
    def __init__(self, paes, openssl, scratch):
        self.paes, self.openssl, self.scratch = paes, openssl, scratch
        self.key_files = {}
        for key_len in (16, 32):
            path = os.path.join(scratch, f"key{key_len}")
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write(KEY[:key_len].hex())
            self.key_files[key_len] = path

    def run(self, command, data, env=None):
        src = os.path.join(self.scratch, "in")
        dst = os.path.join(self.scratch, "out")
        with open(src, "wb") as f:
            f.write(data)
        subprocess.run(command + [src, "-o", dst, "-f"] if command[0] == self.paes else
                       command + ["-in", src, "-out", dst], check=True, env=env)
        with open(dst, "rb") as f:
            return f.read()

    def seal(self, data, key_len=32, extra=()):
        return self.run([self.paes, "encrypt", "--key-file", self.key_files[key_len], *extra], data)

    def seal_passphrase(self, data):
        env = dict(os.environ, FUZZ_PASS=PASSPHRASE)
        return self.run([self.paes, "encrypt", "--passphrase-env", "FUZZ_PASS", "--scrypt-log-n", "10"], data, env)

    def seal_recipients(self, data, count):
        """Sealed to `count` fresh X25519 recipients (format version 3)."""
        recipients = []
        for i in range(count):
            proc = subprocess.run([self.paes, "keygen", "--x25519", "-f", "-o",
                                   os.path.join(self.scratch, f"id{i}")], check=True, capture_output=True)
            recipients += ["-r", proc.stdout.decode().strip()]
        return self.run([self.paes, "encrypt", *recipients], data)

    def salted(self, mode, key_bits, data, nopad=False):
        command = [self.openssl, "enc", f"-aes-{key_bits}-{OPENSSL_MODE.get(mode, mode)}", "-pbkdf2",
                   "-iter", "1", "-pass", f"pass:{PASSPHRASE}"]
        if nopad:
            command.append("-nopad")
        return self.run(command, data)


def write_corpus(target, seeds):
    """Replaces the made seeds; keeps regression-* reproducers and the inputs
    scripts/fuzz.sh merged in (40-hex sha1 names)."""
    directory = os.path.join(HERE, "corpus", target)
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if not (name.startswith("regression-") or re.fullmatch(r"[0-9a-f]{40}", name)):
            os.unlink(os.path.join(directory, name))
    for name, data in seeds.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    print(f"{target}: {len(seeds)} seeds")


def segment_seeds(m):
    def paes_file(data, key_len=32, aad=False, segment=64):
        extra = ["--segment-size", str(segment)] + (["--aad", "fuzz"] if aad else [])
        return bytes([4 if aad else 0]) + m.seal(data, key_len, extra)

    def tink_stream(data, key_len=32, aad=False, segment=64):
        variant = 1 | (2 if key_len == 16 else 0) | (4 if aad else 0) | (TINK_SEGMENT_LENS.index(segment) << 3)
        extra = ["--format", "tink", "--segment-size", str(segment)] + (["--aad", "fuzz"] if aad else [])
        return bytes([variant]) + m.seal(data, key_len, extra)

    seeds = {
        "paes-aes256-seg64-empty": paes_file(b""),
        "paes-aes256-seg64-1B": paes_file(plaintext(1)),
        "paes-aes256-seg64-7B-exactly-one-segment": paes_file(plaintext(64 - 41 - 16)),
        "paes-aes256-seg64-300B": paes_file(plaintext(300)),
        "paes-aes128-seg41-200B": paes_file(plaintext(200), key_len=16, segment=41),
        "paes-aes256-seg64-aad-100B": paes_file(plaintext(100), aad=True),
        "paes-aes256-seg1M-100B": paes_file(plaintext(100), segment=1 << 20),
        "tink-aes256-seg64-300B": tink_stream(plaintext(300)),
        "tink-aes128-seg41-100B": tink_stream(plaintext(100), key_len=16, segment=41),
        "tink-aes256-seg256-aad-1000B": tink_stream(plaintext(1000), aad=True, segment=256),
        "tink-aes256-seg57-empty": tink_stream(b"", segment=57),
    }
    whole = seeds["paes-aes256-seg64-300B"]
    seeds["paes-truncated-mid-tag"] = whole[:-5]
    seeds["paes-truncated-at-segment-end"] = whole[:1 + 32 + 64 * 3]
    flipped = bytearray(whole)
    flipped[1 + 32 + 41 + 3] ^= 1
    seeds["paes-one-bit-flipped"] = bytes(flipped)
    seeds["paes-passphrase-refused-with-key"] = b"\0" + m.seal_passphrase(plaintext(10))
    return seeds


def end_of_mac_line(sealed):
    """Where a version-3 file's header ends: after the LF of its "---" line."""
    return sealed.index(b"\n", sealed.index(b"---")) + 1


def header_seeds(m):
    sealed256 = m.seal(plaintext(10))
    sealed128 = m.seal(plaintext(10), 16)
    with_passphrase = m.seal_passphrase(plaintext(10))
    tink = m.seal(plaintext(10), 32, ["--format", "tink"])
    recipients = m.seal_recipients(plaintext(10), 2)
    bad_version = bytearray(sealed256[:end_of_mac_line(sealed256) + 41])
    bad_version[4] = 2
    # Version 1 (read with --allow-uncommitted): the preamble, no header, the Tink header.
    v1 = bytearray(sealed256[:32]) + sealed256[end_of_mac_line(sealed256):end_of_mac_line(sealed256) + 41]
    v1[4], v1[16:32] = 1, bytes(16)
    v1_scrypt = bytearray(v1)
    v1_scrypt[5:10], v1_scrypt[16:32] = bytes([2, 32, 10, 8, 1]), bytes(range(16))
    stanza_at = end_of_mac_line(with_passphrase)
    work_factor_23 = with_passphrase.replace(b" 10\n", b" 23\n", 1)
    return {
        "empty": b"",
        "magic-only": b"PAES",
        "aes256-preamble-and-header": sealed256[:end_of_mac_line(sealed256) + 41],
        "aes128-preamble-and-header": sealed128[:end_of_mac_line(sealed128) + 25],
        "scrypt-stanza-and-header": with_passphrase[:stanza_at + 41],
        "scrypt-stanza-work-factor-23": work_factor_23[:stanza_at + 41],
        "version-1-raw-key": bytes(v1),
        "version-1-scrypt": bytes(v1_scrypt),
        "truncated-preamble": sealed256[:31],
        "truncated-header": sealed256[:end_of_mac_line(sealed256) + 40],
        "version-2": bytes(bad_version),
        "tink-header-aes256": tink[:41],
        "recipients-2-preamble-stanzas-header": recipients[:end_of_mac_line(recipients) + 41],
    }


def salted_seeds(m):
    seeds = {}
    for index, mode in enumerate(MODES):
        for key_bits, size in ((128, 0), (192, 5), (256, 33)):
            key_index = {128: 0, 192: 1, 256: 2}[key_bits]
            variant = index | (key_index << 4)
            seeds[f"{mode}-aes{key_bits}-{size}B"] = bytes([variant]) + m.salted(mode, key_bits, plaintext(size))
    for index, mode in ((0, "ecb"), (1, "cbc")):
        seeds[f"{mode}-aes256-nopad-32B"] = bytes([index | 8 | (2 << 4)]) + m.salted(mode, 256, plaintext(32), True)
    seeds["magic-only"] = b"\1Salted__"
    seeds["header-15B"] = b"\1Salted__1234567"
    seeds["cbc-not-whole-blocks"] = b"\1Salted__12345678" + bytes(20)
    return seeds


def ssh_key_line_seeds(ssh_keygen, scratch):
    """Lines as ssh-keygen writes NAME.pub: each supported type, one it skips,
    one too small, and broken ones."""
    def public_line(name, *key_type):
        path = os.path.join(scratch, name)
        subprocess.run([ssh_keygen, "-q", "-t", *key_type, "-N", "", "-C", "user@host", "-f", path],
                       check=True, stdin=subprocess.DEVNULL)
        with open(path + ".pub", "rb") as f:
            return f.read()

    ed25519 = public_line("ed25519", "ed25519")
    key_type, blob, _ = ed25519.split(b" ", 2)
    return {
        "ed25519-with-comment": ed25519,
        "ed25519-no-comment-tab": key_type + b"\t" + blob,
        "rsa-2048": public_line("rsa2048", "rsa", "-b", "2048"),
        "rsa-1024-too-small": public_line("rsa1024", "rsa", "-b", "1024"),
        "ecdsa-p256-unsupported": public_line("ecdsa", "ecdsa"),
        "ed25519-type-says-rsa": b"ssh-rsa " + blob,
        "ed25519-truncated-blob": key_type + b" " + blob[:-8],
        "ed25519-trailing-bytes": key_type + b" " + blob + b"AAAA",  # 3 zero bytes past the key
        "type-only": key_type,
        "empty": b"",
    }


CLI_SEEDS = {
    "encrypt-sealed": ["encrypt", "--key-file", "backup.key", "data.tar", "-o", "data.tar.paes"],
    "decrypt-sealed": ["decrypt", "--key-file", "backup.key", "data.tar.paes", "-o", "data.tar"],
    "encrypt-tink": ["encrypt", "--format", "tink", "--key-file", "tink.key", "--segment-size", "4M",
                     "--aad", "host=db1", "-v", "in.bin", "-o", "in.tink"],
    "encrypt-passphrase": ["encrypt", "--passphrase-file", "pass.txt", "--scrypt-log-n", "12", "--key-bits", "128"],
    "encrypt-ctr": ["encrypt", "--mode", "ctr", "--key-file", "aes.key", "--iv",
                    "000102030405060708090a0b0c0d0e0f", "--chunk-size", "64K", "--threads", "4",
                    "--engine", "serial", "data.bin", "-o", "data.ctr"],
    "decrypt-cbc-pbkdf2": ["decrypt", "--mode", "cbc", "--pbkdf2", "--iter", "1000", "--passphrase-env", "PASS",
                           "--no-pad", "--json", "-f", "--no-progress", "a.enc", "-o", "a"],
    "encrypt-equals": ["encrypt", "--mode=ecb", "--key-hex=000102030405060708090a0b0c0d0e0f", "--engine=auto",
                       "--device=0", "-"],
    "bench": ["bench", "--size", "16K,64KiB,1M", "--modes", "ctr,sealed", "--key-bits", "128,256",
              "--directions", "encrypt", "--thread-counts", "1,2", "--repeat", "3", "--chunk-size", "16K", "--json"],
    "info-json": ["info", "--json"],
    "keygen": ["keygen", "-o", "k.key", "--key-bits", "192", "-f"],
    "help-encrypt": ["encrypt", "--help"],
    "version": ["--version"],
    "bad-size": ["encrypt", "--segment-size", "64X"],
    "two-keys": ["encrypt", "--key-file", "a", "--key-env", "B"],
    "empty": [],
}


def plugin_message(command, args=(), body=b""):
    """An age-plugin.md message as a plugin writes it: a stanza, its body in base64 lines of 64."""
    text = base64.b64encode(body).decode().rstrip("=")
    lines = [text[i:i + 64] for i in range(0, len(text), 64)]
    if not lines or len(lines[-1]) == 64:
        lines.append("")
    return ("-> " + " ".join([command, *args]) + "\n" + "\n".join(lines) + "\n").encode()


def plugin_seeds():
    """A plugin's side of both state machines (fuzz_plugin_protocol.cpp), each behind the first byte
    that picks the read size: 1 byte a read (0) and 64 (63)."""
    m = plugin_message
    share, body = base64.b64encode(plaintext(32)).decode().rstrip("="), plaintext(32)
    sessions = {
        "recipient-v1-reply": m("msg", body=b"Touch your key") + m("recipient-stanza", ["0", "X25519", share], body)
        + m("labels", ["postquantum"]) + m("done"),
        "identity-v1-reply": m("request-secret", body=b"Enter PIN") + m("file-key", ["0"], plaintext(16)) + m("done"),
        "confirm": m("confirm", [base64.b64encode(b"Yes").decode().rstrip("="), "U2tpcA"], b"Insert the key")
        + m("done"),
        "errors": m("error", ["recipient", "0"], b"bad recipient") + m("error", ["internal"], b"\x1b[31mred")
        + m("done"),
        "grease": m("x-grease", ["a", "b"], plaintext(100)) + m("done"),
        "long-body": m("recipient-stanza", ["0", "test"], plaintext(3000)) + m("done"),
        "truncated": m("recipient-stanza", ["0", "test"], plaintext(100))[:-20],
        "bad-base64": b"-> msg\nSGVsbG8=\n",
    }
    return {f"{name}-{first}": bytes([first]) + data for name, data in sessions.items() for first in (0, 63)}


def age_seeds(m, age):
    """age files to AGE_IDENTITY's recipient, from paes and (when installed) age: sizes around
    the 64 KiB chunk and the 1 MiB group of chunks, binary and armored, each read both ways
    (first byte 0: run_sealed; 1: open_age_bytes); and a few cut or changed."""
    sys.path.insert(0, os.path.join(HERE, "..", "tests"))
    from harness.bech32 import bech32_encode  # noqa: E402
    identity = os.path.join(m.scratch, "age-identity")
    with open(os.open(identity, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(bech32_encode("age-secret-key-", AGE_IDENTITY).upper() + "\n")
    recipient = subprocess.run([m.paes, "keygen", "-y", identity], check=True, capture_output=True,
                               text=True).stdout.strip()
    seeds = {}
    for size in (0, 1, 65535, 65536, 65537, 2 * 65536 + 100):
        source = os.path.join(m.scratch, f"age-plain-{size}")
        with open(source, "wb") as f:
            f.write(plaintext(size))
        for armor in ([], ["-a"]) if size <= 65537 else ([],):
            tools = [("paes", [m.paes, "encrypt", "--format", "age", "-r", recipient, *armor])]
            if age and size <= 65537:
                tools.append(("age", [age, "-r", recipient, *armor]))
            for tool, cmd in tools:
                out = os.path.join(m.scratch, "age-out")
                subprocess.run([*cmd, "-o", out, source], check=True, capture_output=True)
                with open(out, "rb") as f:
                    sealed = f.read()
                os.unlink(out)
                name = f"{tool}-{size}{'-armor' if armor else ''}"
                for first in (0, 1):
                    seeds[f"{name}-{first}"] = bytes([first]) + sealed
                if not armor and size == 65537:
                    seeds[f"{name}-cut-chunk-0"] = b"\x00" + sealed[:-2]
                    seeds[f"{name}-cut-header-1"] = b"\x01" + sealed[:sealed.index(b"---") + 10]
                    seeds[f"{name}-flipped-0"] = b"\x00" + sealed[:-20] + bytes([sealed[-20] ^ 1]) + sealed[-19:]
    return seeds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paes", required=True, help="a built paes binary")
    parser.add_argument("--openssl", default="openssl")
    parser.add_argument("--ssh-keygen", default="ssh-keygen")
    parser.add_argument("--age", default=shutil.which("age"), help="age, for seeds age wrote (default: on PATH)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        m = Maker(os.path.abspath(args.paes), args.openssl, scratch)
        write_corpus("fuzz_sealed_header", header_seeds(m))
        write_corpus("fuzz_segment_decoder", segment_seeds(m))
        write_corpus("fuzz_age_file", age_seeds(m, args.age))
        write_corpus("fuzz_salted_header", salted_seeds(m))
        write_corpus("fuzz_ssh_key_line", ssh_key_line_seeds(args.ssh_keygen, scratch))
    write_corpus("fuzz_plugin_protocol", plugin_seeds())
    write_corpus("fuzz_cli_options", {name: "\n".join(words).encode() for name, words in CLI_SEEDS.items()})


if __name__ == "__main__":
    main()
