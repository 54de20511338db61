#!/usr/bin/env python3
"""Checks that the gpudoctor binary was laid out by cmake/layout.order (ctest LayoutOrderApplied).

The order file lists the functions `watch` runs every tick first (its header says how many).
Linked by lld with the file, they sit together at the start of .text, in a span of a few MiB
(whole translation units move with them: see scripts/layout_order.py). Linked without it (GNU
ld, or the option lost), they are spread over the text: SQLite's and libstdc++'s near its end.
Fails when fewer than 95% of the steady functions the binary has lie in the first 60% of .text,
or when fewer than half of the listed names exist (the order file is stale: rerun
scripts/layout_profile.sh).
Usage: check_layout.py BINARY ORDER_FILE
"""

import re
import subprocess
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    binary, order_path = sys.argv[1], sys.argv[2]
    with open(order_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    m = next((re.search(r"steady: (\d+) functions", l) for l in lines if "steady:" in l), None)
    if not m:
        sys.exit(f"{order_path}: no '# steady: N functions' header line")
    names = [l.strip() for l in lines if l.strip() and not l.startswith("#")]
    steady = set(names[: int(m.group(1))])

    headers = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True,
                             check=True).stdout
    text = re.search(r"\] \.text\s+PROGBITS\s+([0-9a-f]+) [0-9a-f]+ ([0-9a-f]+)", headers)
    if not text:
        sys.exit(f"{binary}: no .text section")
    start, size = int(text.group(1), 16), int(text.group(2), 16)

    nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                        check=True).stdout
    addr = {}
    for line in nm.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tTwW" and f[2] in steady:
            addr.setdefault(f[2], int(f[0], 16))
    if len(addr) < len(steady) / 2:
        sys.exit(f"only {len(addr)} of the {len(steady)} steady functions of {order_path} are in "
                 f"{binary}: the order file is stale (scripts/layout_profile.sh)")
    limit = start + size * 60 // 100
    inside = sum(1 for a in addr.values() if start <= a < limit)
    share = inside / len(addr)
    print(f"{inside} of {len(addr)} steady functions ({share:.1%}) in the first 60% of .text "
          f"({size // 1024} KiB)")
    if share < 0.95:
        late = sorted((a, n) for n, a in addr.items() if a >= limit)[:5]
        sys.exit("not laid out by the order file; e.g. " +
                 ", ".join(f"{n} at +{(a - start) // 1024} KiB" for a, n in late))


if __name__ == "__main__":
    main()
