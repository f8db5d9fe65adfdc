#!/usr/bin/env python3
"""Writes the seed corpus of a gzip fuzz target into a directory (Fuzz/run calls it).

GzipDecoderFuzz: every seed is the target's control bytes (output chunk size, input chunk sizes, output limit:
see Fuzz/GzipDecoderFuzz/GzipDecoderFuzz.swift) followed by a payload. Payloads: members at
every level 0-9 of text, random, zero and empty data; the gzip cases C01-C07 of the round-1
list (concatenated members, bytes after the last member, empty things, truncations, corrupt
trailers, optional header fields, not gzip); truncations and flipped bits of members.
GzipHeaderFuzz: control bytes, then headers described field by field (see
Fuzz/GzipHeaderFuzz/GzipHeaderFuzz.swift): every flag alone and together, reserved bits, empty
and long fields, a NUL inside a name, wrong header CRCs, two members, a cut after the header.
Deterministic: the same directory every run, so nothing binary is committed.

ParallelGzipDecoderFuzz: the control bytes of GzipDecoderFuzz, then indexed members with small
segments, BGZF members, forged indexes, and their truncations and flipped bits.

usage: make-corpus.py [--target GzipDecoderFuzz|GzipHeaderFuzz|ParallelGzipDecoderFuzz] DIR
"""
import hashlib
import os
import random
import struct
import sys
import zlib

OUTPUT_CHUNK_SIZES = [1, 2, 7, 64, 511, 4096, 32768, 65536]


def control(output_chunk_index, chunk_sizes=(), limit_byte=None):
    """The control bytes: output chunk size index, input chunk sizes, optional small limit."""
    assert 0 <= output_chunk_index < 8 and len(chunk_sizes) < 8
    first = output_chunk_index | (len(chunk_sizes) << 3) | (0x40 if limit_byte is not None else 0)
    return bytes([first, *chunk_sizes]) + (bytes([limit_byte]) if limit_byte is not None else b"")


# Ways to feed a payload: whole, byte by byte, odd sizes with empty chunks, a small limit.
FEEDS = [
    control(7),
    control(3, [1]),
    control(2, [7, 255, 3]),
    control(5, [200, 13]),
    control(4, [0], limit_byte=20),
]


def member(data, level=6, wbits=31, mtime=0):
    compressor = zlib.compressobj(level, zlib.DEFLATED, wbits)
    return compressor.compress(data) + compressor.flush()


def header_member(payload, flags=0x1E, extra=b"AB\x02\x00xy", name=b"name.txt", comment=b"a comment"):
    """A member with the optional fields of `flags` (FHCRC 0x02, FEXTRA 0x04, FNAME 0x08, FCOMMENT 0x10)."""
    body = member(payload, 9, -15)
    header = b"\x1f\x8b\x08" + bytes([flags]) + struct.pack("<I", 0) + b"\x00\xff"
    if flags & 0x04:
        header += struct.pack("<H", len(extra)) + extra
    if flags & 0x08:
        header += name + b"\x00"
    if flags & 0x10:
        header += comment + b"\x00"
    if flags & 0x02:
        header += struct.pack("<H", zlib.crc32(header) & 0xFFFF)
    return header + body + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


def sample(kind, size, seed):
    rng = random.Random(seed)
    if kind == "text":
        words = [b"sluice", b"chunk", b"gzip", b"member", b"backpressure", b"the", b"of"]
        out = bytearray()
        while len(out) < size:
            out += b"line %d: " % len(out) + b" ".join(rng.choice(words) for _ in range(8)) + b"\n"
        return bytes(out[:size])
    if kind == "random":
        return bytes(rng.getrandbits(8) for _ in range(size))
    return bytes(size)


def payloads():
    hello, world = member(b"hello\n"), member(b"world\n")
    yield "hello", hello
    # Members from every level, of text, random bytes, zeros and nothing.
    for level in range(10):
        for kind, size in [("text", 3000), ("random", 600), ("zeros", 20000)]:
            yield f"level{level}-{kind}", member(sample(kind, size, level), level)
        yield f"level{level}-empty", member(b"", level)
    yield "raw-mix", member(sample("text", 1500, 9) + sample("random", 300, 9) + bytes(500), 6)
    # C01: concatenated members, and many small ones.
    yield "c01-two", hello + world
    yield "c01-many", b"".join(member(b"line %d\n" % i) for i in range(1, 201))
    # C02: bytes after the last member.
    yield "c02-nul", hello + bytes(512)
    yield "c02-garbage", hello + b"GARBAGE!!"
    yield "c02-1f", hello + b"\x1f"
    yield "c02-1f41", hello + b"\x1f\x41\x42"
    yield "c02-nul-member", hello + b"\x00\x00" + world
    # C03: empty things.
    yield "c03-empty", b""
    yield "c03-empty-member", member(b"")
    yield "c03-magic", b"\x1f\x8b"
    # C04: truncations of a larger member.
    p = member(sample("text", 40000, 4))
    for name, cut in [("half", len(p) // 2), ("before-trailer", len(p) - 8), ("3-short", len(p) - 3), ("header", 10)]:
        yield f"c04-{name}", p[:cut]
    # C05: corrupt trailers.
    yield "c05-crc", hello[:-8] + bytes([hello[-8] ^ 0xFF]) + hello[-7:]
    yield "c05-isize", hello[:-1] + bytes([hello[-1] ^ 0x01])
    # C06: optional header fields, and the same with the comment changed.
    payload = b"header-flags test payload\n" * 100
    good = header_member(payload)
    yield "c06-fields", good
    at = good.index(b"a comment")
    yield "c06-bad-hcrc", good[:at] + b"A" + good[at + 1:]
    for flags in [0x02, 0x04, 0x08, 0x10, 0x1C, 0x01, 0x20, 0xE0]:
        yield f"c06-flags-{flags:02x}", header_member(b"x" * 50, flags)
    yield "c06-empty-extra", header_member(b"y", 0x04, extra=b"")
    # C07: not gzip.
    data = sample("text", 2000, 7)
    yield "c07-zlib", zlib.compress(data)
    yield "c07-zlib-wbits9", member(data, 6, 9)
    yield "c07-raw", member(data, 6, -15)
    yield "c07-method7", hello[:2] + b"\x07" + hello[3:]
    yield "c07-second-method7", hello + world[:2] + b"\x07" + world[3:]


def mutations(name, payload, rng):
    """Truncations and flipped bits of a payload."""
    if len(payload) < 2:
        return
    for cut in sorted({1, 2, 3, 9, 10, 11, len(payload) // 3, len(payload) - 9, len(payload) - 1}):
        if 0 < cut < len(payload):
            yield f"{name}-cut{cut}", payload[:cut]
    for i in range(4):
        position = rng.randrange(len(payload))
        flipped = bytearray(payload)
        flipped[position] ^= 1 << rng.randrange(8)
        yield f"{name}-flip{i}", bytes(flipped)


def indexed_member(data, segment, level=6):
    """A member as `sluice compress` indexes it (Sources/Sluice/Sluice.docc/Guides/IndexedGzip.md),
    with segments of `segment` bytes: each compressed alone (an access point), all but the
    last ended with a sync flush, the index in an `SL` subfield."""
    bodies = []
    for start in range(0, max(len(data), 1), segment):
        part = data[start:start + segment]
        compressor = zlib.compressobj(level, zlib.DEFLATED, -15)
        last = start + segment >= len(data)
        bodies.append((compressor.compress(part) + compressor.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH),
                       zlib.crc32(part)))
    table = struct.pack("<BBQQI", 1, 1, segment, len(data), len(bodies))
    table += b"".join(struct.pack("<II", len(body), crc) for body, crc in bodies)
    extra = b"SL" + struct.pack("<H", len(table)) + table
    header = b"\x1f\x8b\x08\x04" + b"\x00" * 4 + b"\x00\x03" + struct.pack("<H", len(extra)) + extra
    return header + b"".join(body for body, _ in bodies) + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def bgzf_member(data):
    """A BGZF member (the SAM specification, section 4.1): a `BC` subfield with the member's size - 1."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = compressor.compress(data) + compressor.flush()
    size = 12 + 6 + len(body) + 8
    header = b"\x1f\x8b\x08\x04" + b"\x00" * 4 + b"\x00\xff" + struct.pack("<H", 6) + b"BC" + struct.pack("<HH", 2, size - 1)
    return header + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def parallel_payloads():
    """Payloads of ParallelGzipDecoderFuzz: indexed members with small segments, BGZF members,
    forged indexes, and a member gzip wrote after them."""
    text = sample("text", 6000, 1)
    mixed = sample("text", 1500, 2) + sample("random", 1500, 3) + sample("zeros", 1500, 4)
    for segment in (512, 1024, 2048):
        yield f"indexed-text-{segment}", indexed_member(text, segment)
    yield "indexed-mixed", indexed_member(mixed, 1024)
    yield "indexed-one-byte-segments", indexed_member(b"abcdefgh" * 8, 1)
    member_bytes = bytearray(indexed_member(text, 1024))
    table = 16 + 22
    forged_crc = bytearray(member_bytes)
    forged_crc[table + 8 + 4] ^= 1
    yield "indexed-forged-crc", bytes(forged_crc)
    forged_lengths = bytearray(member_bytes)
    forged_lengths[table] += 2
    forged_lengths[table + 8] -= 2
    yield "indexed-forged-lengths", bytes(forged_lengths)
    yield "bgzf", bgzf_member(text[:3000]) + bgzf_member(text[3000:]) + bgzf_member(b"")
    yield "indexed-then-gzip", indexed_member(text, 2048) + member(mixed) + b"\x00\x00"
    yield "two-indexed", indexed_member(text, 2048) + indexed_member(mixed, 512)
    # A BGZF member the workers refuse (more than 1 MiB of output) that gzip accepts, then an
    # indexed member: the one thread that takes over must get the indexed member's header too.
    yield "bgzf-large-then-indexed", bgzf_member(bytes(1 << 20) + b"x") + indexed_member(text, 1024)


def header_seeds(rng):
    """Seeds of GzipHeaderFuzz: FLG, MODE, the three fields, the data."""
    def field(b):
        return bytes([len(b)]) + b
    data = b"header-flags test payload\n" * 20
    for flags in [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1E, 0x1F, 0x0A, 0x14, 0x20, 0x40, 0x80, 0xFF]:
        for mode in [0x60, 0x61, 0x02, 0x04, 0x08, 0x90]:
            for extra, name, comment in [(b"AB\x02\x00xy", b"name.txt", b"a comment"),
                                         (b"", b"", b""), (b"x" * 255, b"n\x00m", b"c" * 200)]:
                body = bytes([flags, mode]) + field(extra) + field(name) + field(comment) + data
                yield rng.choice(FEEDS) + body


def main():
    arguments = sys.argv[1:]
    target = "GzipDecoderFuzz"
    if len(arguments) == 3 and arguments[0] == "--target":
        target = arguments[1]
        arguments = arguments[2:]
    if len(arguments) != 1 or target not in ("GzipDecoderFuzz", "GzipHeaderFuzz", "ParallelGzipDecoderFuzz"):
        sys.exit(__doc__)
    directory = arguments[0]
    os.makedirs(directory, exist_ok=True)
    rng = random.Random(0x5EED)
    seeds = {}
    if target == "GzipHeaderFuzz":
        for seed in header_seeds(rng):
            seeds[hashlib.sha1(seed).hexdigest()] = seed
    sources = {"GzipDecoderFuzz": payloads, "ParallelGzipDecoderFuzz": parallel_payloads}.get(target, lambda: [])
    for name, payload in sources():
        variants = [(name, payload)]
        if len(payload) < 5000 or name in ("hello", "c01-two", "c06-fields", "level6-text") or target != "GzipDecoderFuzz":
            variants += list(mutations(name, payload, rng))
        for variant, body in variants:
            feeds = FEEDS if variant == name else [rng.choice(FEEDS)]
            for feed in feeds:
                seed = feed + body
                seeds[hashlib.sha1(seed).hexdigest()] = seed
    for digest, seed in seeds.items():
        with open(os.path.join(directory, digest), "wb") as f:
            f.write(seed)
    print(f"make-corpus: {target}: {len(seeds)} seeds, {sum(map(len, seeds.values()))} bytes in {directory}")


if __name__ == "__main__":
    main()
