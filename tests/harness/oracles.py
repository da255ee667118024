"""openssl enc, the oracle of paes' raw modes: its command lines and the bytes it makes,
and the argument lists of the paes runs compared with it."""

import subprocess

from .processes import Tools, describe

RAW_MODES = ["ecb", "cbc", "cfb", "cfb8", "cfb1", "ofb", "ctr"]  # --mode's choices, openssl's names


def openssl_enc_command(openssl, mode, key, iv, decrypt=False, nopad=False):
    """The `openssl enc` command line that is paes' oracle for a raw mode."""
    cmd = [openssl, "enc", f"-aes-{len(key) * 8}-{mode}", "-K", key.hex()]
    if mode != "ecb":
        cmd += ["-iv", iv.hex()]
    if decrypt:
        cmd.append("-d")
    if nopad:
        cmd.append("-nopad")
    return cmd


def openssl_enc(mode, key, iv, data, decrypt=False, nopad=False, timeout=120):
    """`openssl enc` run on `data`: the CompletedProcess, stdout and stderr as bytes."""
    return subprocess.run(openssl_enc_command(Tools.openssl, mode, key, iv, decrypt, nopad), input=data,
                          capture_output=True, timeout=timeout)


def openssl_ok(mode, key, iv, data, decrypt=False, nopad=False, timeout=120):
    """What `openssl enc` makes of `data`; AssertionError when it fails."""
    proc = openssl_enc(mode, key, iv, data, decrypt, nopad, timeout)
    if proc.returncode != 0:
        raise AssertionError(f"openssl enc -{mode} failed: {describe(proc)}")
    return proc.stdout


def oracle_input_and_output(direction, mode, key, iv, plaintext, nopad=False):
    """(what paes reads, what it must write) for one raw-mode case, both made by openssl:
    for a decryption, openssl's ciphertext and its decryption (checked to give `plaintext`
    back)."""
    ciphertext = openssl_ok(mode, key, iv, plaintext, nopad=nopad)
    if direction == "encrypt":
        return plaintext, ciphertext
    expected = openssl_ok(mode, key, iv, ciphertext, decrypt=True, nopad=nopad)
    if expected != plaintext:
        raise AssertionError(f"openssl did not round-trip {mode}")
    return ciphertext, expected


def raw_args(direction, mode, key_args, iv, extra=(), inp=None, out=None):
    """The arguments of one raw-mode run: `key_args` (["--key-file", path], ["--key-hex",
    hex], ...), --iv unless the mode is ECB, `extra`, then the input and -o output when
    given."""
    args = [direction, "--mode", mode, *key_args]
    if mode != "ecb":
        args += ["--iv", iv.hex()]
    args += list(extra)
    if inp is not None:
        args.append(inp)
    if out is not None:
        args += ["-o", out]
    return args
