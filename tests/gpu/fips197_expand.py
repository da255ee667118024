#!/usr/bin/env python3
"""Independent AES key expansion (FIPS-197 section 5.2), in plain Python.

It shares no code with src/cipher/gpu/: the S-box comes from brute-force GF(2^8)
inverses and the affine map written out bit by bit. It (re)writes or checks
tests/data/gpu/fips197_appendix_a.txt, the expected round keys of FIPS-197
appendix A that the C++ tests read:

  fips197_expand.py --write  tests/data/gpu/fips197_appendix_a.txt
  fips197_expand.py --check  tests/data/gpu/fips197_appendix_a.txt
"""
import argparse
import sys

# FIPS-197 appendix A keys (A.1, A.2, A.3).
KEYS = {
    "A.1": "2b7e151628aed2a6abf7158809cf4f3c",
    "A.2": "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
    "A.3": "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
}

# Spot values printed in FIPS-197 appendix A (first derived word and the last
# word of each expansion), so a bug in this script can't silently agree with
# itself.
PUBLISHED = {
    "A.1": {4: 0xA0FAFE17, 43: 0xB6630CA6},
    "A.2": {6: 0xFE0C91F7, 51: 0x01002202},
    "A.3": {8: 0x9BA35411, 59: 0x706C631E},
}


def gmul(a, b):
    p = 0
    for _ in range(8):
        if b & 1:
            p ^= a
        hi = a & 0x80
        a = (a << 1) & 0xFF
        if hi:
            a ^= 0x1B
        b >>= 1
    return p


def sbox_entry(x):
    inv = 0 if x == 0 else next(y for y in range(1, 256) if gmul(x, y) == 1)
    out = 0
    for i in range(8):
        bit = 0
        for k in (0, 4, 5, 6, 7):  # b'_i = b_i ^ b_{i+4} ^ b_{i+5} ^ b_{i+6} ^ b_{i+7} ^ c_i
            bit ^= (inv >> ((i + k) % 8)) & 1
        bit ^= (0x63 >> i) & 1
        out |= bit << i
    return out


SBOX = [sbox_entry(x) for x in range(256)]


def sub_word(w):
    return int.from_bytes(bytes(SBOX[b] for b in w.to_bytes(4, "big")), "big")


def expand(key_hex):
    key = bytes.fromhex(key_hex)
    nk = len(key) // 4
    nr = nk + 6
    w = [int.from_bytes(key[4 * i:4 * i + 4], "big") for i in range(nk)]
    rcon = 1
    for i in range(nk, 4 * (nr + 1)):
        t = w[i - 1]
        if i % nk == 0:
            t = sub_word(((t << 8) | (t >> 24)) & 0xFFFFFFFF) ^ (rcon << 24)
            rcon = gmul(rcon, 2)
        elif nk > 6 and i % nk == 4:
            t = sub_word(t)
        w.append(w[i - nk] ^ t)
    return nr, w


def render():
    lines = [
        "# FIPS-197 appendix A: key expansion examples (A.1 AES-128, A.2 AES-192,",
        "# A.3 AES-256). Generated and checked by tests/gpu/fips197_expand.py, an",
        "# independent Python key expansion; spot values match the printed standard.",
        "# Format: 'key <name> <hex key>', then one line per round key:",
        "# 'round <r> <w[4r]> <w[4r+1]> <w[4r+2]> <w[4r+3]>' (big-endian words).",
    ]
    for name, key in KEYS.items():
        nr, w = expand(key)
        for idx, value in PUBLISHED[name].items():
            if w[idx] != value:
                sys.exit(f"{name}: w[{idx}] = {w[idx]:08x}, FIPS-197 prints {value:08x}")
        lines.append("")
        lines.append(f"key {name} {key}")
        for r in range(nr + 1):
            lines.append(f"round {r} " + " ".join(f"{x:08x}" for x in w[4 * r:4 * r + 4]))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="FILE")
    group.add_argument("--check", metavar="FILE")
    args = parser.parse_args()
    assert SBOX[0x00] == 0x63 and SBOX[0x53] == 0xED, "S-box construction is wrong"
    text = render()
    if args.write:
        with open(args.write, "w") as f:
            f.write(text)
        return 0
    with open(args.check) as f:
        if f.read() != text:
            print(f"{args.check} differs from the independent expansion", file=sys.stderr)
            return 1
    print(f"{args.check}: matches the independent expansion")
    return 0


if __name__ == "__main__":
    sys.exit(main())
