"""Bech32 (BIP-173, as age writes its keys; not Bech32m), for recipients made and read by tests."""

BECH32_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def bech32_polymod(values):
    """BIP-173's checksum of 5-bit values."""
    chk = 1
    for v in values:
        top = chk >> 25
        chk = (chk & 0x1ffffff) << 5 ^ v
        for i, g in enumerate((0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3)):
            if top >> i & 1:
                chk ^= g
    return chk


def bech32_hrp_expand(hrp):
    return [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp]


def bech32_encode(hrp, data):
    """Bech32 of the bytes `data` under the human-readable part `hrp`, lower case."""
    bits = "".join(f"{b:08b}" for b in data)
    bits += "0" * (-len(bits) % 5)
    words = [int(bits[i:i + 5], 2) for i in range(0, len(bits), 5)]
    check = bech32_polymod(bech32_hrp_expand(hrp) + words + [0] * 6) ^ 1
    words += [check >> 5 * (5 - i) & 31 for i in range(6)]
    return hrp + "1" + "".join(BECH32_CHARSET[w] for w in words)


def bech32_decode(text):
    """(hrp, bytes) of a Bech32 string in either case; ValueError when its checksum is wrong."""
    hrp, _, rest = text.lower().rpartition("1")
    words = [BECH32_CHARSET.index(c) for c in rest]
    if bech32_polymod(bech32_hrp_expand(hrp) + words) != 1:
        raise ValueError(f"bad Bech32 checksum in {text!r}")
    bits = "".join(f"{w:05b}" for w in words[:-6])
    return hrp, bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits) - 7, 8))
