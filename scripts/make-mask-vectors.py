#!/usr/bin/env python3
"""Writes testdata/mask-vectors.json: masked IDs that the Rust crate
(crates/snowflake-mask/tests) and the page's JavaScript check themselves
against (see testdata/README.md).

Every masked ID here comes from FF1 as NIST SP 800-38G writes it (Algorithm 7
and 8, radix 2, AES-256, the empty tweak), transcribed below over Python's
integers with AES from the `cryptography` package, independently of the Rust
`fpe` crate and of the page. Before writing anything the transcription checks
itself against NIST's published FF1 samples 7 to 9 (AES-256) and the Zcash
radix-2 vectors, so a mistake here cannot pass silently.

An ID of an n-bit layout is the numeral string of its n binary digits, most
significant first.

Run it again after adding a case: python3 scripts/make-mask-vectors.py
(Debian: apt-get install python3-cryptography)
"""
import json
import os

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

# Widths of the presets, as crates/snowflake/src/presets.rs builds them
# (checked there and by scripts/make-vectors.py); the permutation depends on
# the width alone.
PRESET_BITS = {
    "twitter": 63,
    "discord": 64,
    "instagram": 64,
    "sonyflake": 63,
    "mastodon": 64,
    "js53": 53,
}


def aes(key, block):
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(block) + enc.finalize()


def prf(key, data):
    """CBC-MAC with a zero IV: SP 800-38G, Algorithm 6."""
    assert len(data) % 16 == 0
    y = bytes(16)
    for j in range(0, len(data), 16):
        y = aes(key, bytes(a ^ b for a, b in zip(y, data[j:j + 16])))
    return y


def num(numerals, radix):
    x = 0
    for digit in numerals:
        x = x * radix + digit
    return x


def str_m(x, radix, m):
    out = []
    for _ in range(m):
        out.append(x % radix)
        x //= radix
    assert x == 0
    return out[::-1]


def ff1(key, tweak, radix, x, decrypt=False):
    """FF1.Encrypt (Algorithm 7) or FF1.Decrypt (Algorithm 8)."""
    n, t = len(x), len(tweak)
    u = n // 2
    v = n - u
    a, b_ = x[:u], x[u:]
    # b = ceil(ceil(v * log2(radix)) / 8), in exact integers.
    b = ((radix ** v - 1).bit_length() + 7) // 8
    d = 4 * ((b + 3) // 4) + 4
    p = bytes([1, 2, 1]) + radix.to_bytes(3, "big") + bytes([10, u % 256]) \
        + n.to_bytes(4, "big") + t.to_bytes(4, "big")
    rounds = range(9, -1, -1) if decrypt else range(10)
    for i in rounds:
        source = a if decrypt else b_
        q = tweak + bytes((-t - b - 1) % 16) + bytes([i]) + num(source, radix).to_bytes(b, "big")
        r = prf(key, p + q)
        s = r
        j = 1
        while len(s) < d:
            s += aes(key, bytes(x ^ y for x, y in zip(r, j.to_bytes(16, "big"))))
            j += 1
        y = int.from_bytes(s[:d], "big")
        m = u if i % 2 == 0 else v
        if decrypt:
            c = (num(b_, radix) - y) % radix ** m
            a, b_ = str_m(c, radix, m), a
        else:
            c = (num(a, radix) + y) % radix ** m
            a, b_ = b_, str_m(c, radix, m)
    return a + b_


NIST_KEY = bytes.fromhex("2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94")


def check_published_vectors():
    """NIST FF1 samples 7-9 (AES-256) and the Zcash radix-2 vectors."""
    ten = list(range(10))
    nineteen = list(range(19))
    tweak36 = bytes([0x37, 0x37, 0x37, 0x37, 0x70, 0x71, 0x72, 0x73, 0x37, 0x37, 0x37])
    samples = [
        (b"", 10, ten, [6, 6, 5, 7, 6, 6, 7, 0, 0, 9]),
        (bytes.fromhex("39383736353433323130"), 10, ten, [1, 0, 0, 1, 6, 2, 3, 4, 6, 3]),
        (tweak36, 36, nineteen,
         [33, 28, 8, 10, 0, 10, 35, 17, 2, 10, 31, 34, 10, 21, 34, 35, 30, 32, 13]),
    ]
    for tweak, radix, pt, ct in samples:
        assert ff1(NIST_KEY, tweak, radix, pt) == ct, (radix, tweak)
        assert ff1(NIST_KEY, tweak, radix, ct, decrypt=True) == pt
    # Zcash's vectors give the bits as bytes in little-endian bit order.
    def bits_le(hexbytes):
        return [(byte >> k) & 1 for byte in bytes.fromhex(hexbytes) for k in range(8)]
    zcash = [
        (b"", "0000000000000000000000", "90acee3f83cde7ae5622f3"),
        (b"", "90acee3f83cde7ae5622f3", "5b8bf120f39bab8527ea1b"),
        (b"", "aaaaaaaaaaaaaaaaaaaaaa", "f082b7ee8f29c07691ce64"),
        (bytes(range(255)), "aaaaaaaaaaaaaaaaaaaaaa", "be11b886a8059c27517bc5"),
    ]
    for tweak, pt, ct in zcash:
        assert ff1(NIST_KEY, tweak, 2, bits_le(pt)) == bits_le(ct), pt
        assert ff1(NIST_KEY, tweak, 2, bits_le(ct), decrypt=True) == bits_le(pt)


def mask(key, bits, value, decrypt=False):
    digits = [(value >> (bits - 1 - k)) & 1 for k in range(bits)]
    return num(ff1(key, b"", 2, digits, decrypt), 2)


def width(layout):
    if layout in PRESET_BITS:
        return PRESET_BITS[layout]
    return sum(int(part.split(":")[1]) for part in layout.split(","))


KEYS = [
    NIST_KEY.hex(),
    "00" * 32,
    "6c0f9d6b0c2b8f6a3f8e4d2a1b0c9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d",
]

CUSTOM = [
    "time:16,sequence:4",  # 20 bits, the narrowest
    "time:17,sequence:4",  # 21, odd: halves of 10 and 11
    "time:24,worker:4,sequence:4",  # 32
    "time:29,worker:21,sequence:13",  # 63, Baidu's
    "time:40,machine:10,sequence:12",  # 62
]


def ids_for(bits):
    top = (1 << bits) - 1
    # Ends, neighbours, a tweet (for the 63-bit layouts) and fixed patterns.
    ids = [0, 1, 2, top, top - 1, (top + 1) // 2, 0x5555555555555555 & top, 0xA5A5A5A5A5A5A5A5 & top]
    if bits >= 61:
        ids += [1541815603606036480, 1541815603606036481, 4194439168]
    return sorted(set(ids))


def main():
    check_published_vectors()
    cases = []
    for key_hex in KEYS:
        key = bytes.fromhex(key_hex)
        for layout in list(PRESET_BITS) + CUSTOM:
            bits = width(layout)
            for value in ids_for(bits):
                masked = mask(key, bits, value)
                assert mask(key, bits, masked, decrypt=True) == value
                assert 0 <= masked < (1 << bits)
                cases.append({
                    "key": key_hex,
                    "layout": layout,
                    "bits": bits,
                    "id": str(value),
                    "masked": str(masked),
                })
    doc = {
        "about": "FF1 (NIST SP 800-38G), AES-256, radix 2, empty tweak, over each layout's bits; "
                 "written by scripts/make-mask-vectors.py; see testdata/README.md",
        "cases": cases,
    }
    out = os.path.join(os.path.dirname(__file__), "..", "testdata", "mask-vectors.json")
    # One case a line: easy to read, and a changed case is a one-line diff.
    with open(out, "w") as f:
        f.write('{\n "about": %s,\n "cases": [\n' % json.dumps(doc["about"]))
        f.write(",\n".join("  " + json.dumps(case) for case in cases))
        f.write("\n ]\n}\n")
    print(f"wrote {len(cases)} cases to testdata/mask-vectors.json")


if __name__ == "__main__":
    main()
