#!/usr/bin/env python3
"""False candidates of the kernel-log scanner's anchor set on a log (src/kmsg/anchor_filter.h).

The scanner flags a position when the three bytes there match some bucket's nibble masks
(Teddy); anchors share 8 buckets by fingerprint, so their masks combine and one new anchor can
make common text a candidate (each is then verified with memcmp). This counts the flagged
positions of the anchor set written in src/kmsg/log_scanner.cc (its Filter() list) on the first
MiB of LOG, and for each anchor named with --try, every 3-byte fingerprint of its text, so that a
new anchor's fingerprint can be chosen before timing it (docs/cost.md, twenty-first round).

Usage: bench/kmsg_anchor_candidates.py LOG [--try "anchor text" ...]
LOG: e.g. the usual mix of bench/kmsg_gen.py (/tmp/gpudoctor_kmsg_bench_*_xid0.001.log).
"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = open(os.path.join(here, "..", "src", "kmsg", "log_scanner.cc"), encoding="utf-8").read()
block = src[src.index("static const AnchorFilter filter({"):]
block = block[:block.index("});")]
anchors = [(t.encode().decode("unicode_escape"), f)
           for t, f in re.findall(r'\{"((?:[^"\\]|\\.)*)", "((?:[^"\\]|\\.)*)"\}', block)]


def candidates(anchor_list, data):
    bucket_of = {}
    lo = [[0] * 16 for _ in range(3)]
    hi = [[0] * 16 for _ in range(3)]
    for text, fp in anchor_list:
        if len(fp) != 3 or fp not in text:
            fp = text[:3]
        bucket_of.setdefault(fp, len(bucket_of))
        bit = 1 << (bucket_of[fp] % 8)
        for k in range(3):
            c = ord(fp[k])
            lo[k][c & 15] |= bit
            hi[k][c >> 4] |= bit
    masks = [bytes(lo[k][b & 15] & hi[k][b >> 4] for b in range(256)) for k in range(3)]
    a = int.from_bytes(data.translate(masks[0]), "little")
    b = int.from_bytes(data.translate(masks[1]), "little") >> 8
    c = int.from_bytes(data.translate(masks[2]), "little") >> 16
    x = (a & b & c).to_bytes(len(data), "little")
    return len(x) - x.count(0)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    data = open(sys.argv[1], "rb").read(1 << 20)
    tries = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--try" and i + 1 < len(sys.argv)]
    base = candidates(anchors, data)
    print(f"{len(anchors)} anchors, {base} candidate positions in the first {len(data)} bytes")
    for text in tries:
        # In its place when the set has it (the order decides the buckets), else appended.
        at = next((i for i, a in enumerate(anchors) if a[0] == text), len(anchors))

        def with_fp(fp):
            return anchors[:at] + [(text, fp)] + anchors[at + 1:]

        results = sorted((candidates(with_fp(text[i:i + 3]), data), text[i:i + 3])
                         for i in range(len(text) - 2))
        print(f"{text!r}: " + ", ".join(f"{fp!r} {n}" for n, fp in results[:6]))


main()
