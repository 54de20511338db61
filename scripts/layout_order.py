#!/usr/bin/env python3
"""Writes the function order of the gpudoctor binary (cmake/layout.order) from callgrind profiles.

Why: the kernel maps a program's code 64 KiB at a time (fault-around), so the resident code of
`gpudoctor watch` is every 64 KiB block that holds one function a tick runs. Scattered over the
9 MiB of text, a few hundred small functions keep ~6 MiB resident (docs/cost.md, "watch RSS").
The order file puts the functions `watch` runs in steady state first, then those only its
start-up runs, and the linker (lld --symbol-ordering-file, see CMakeLists.txt) lays them out in
that order; everything else follows in the usual order.

Input: callgrind dumps of one `watch` run (--demangle=no, so names are the symbols the linker
sees): --steady is a dump taken after the first ticks (counters zeroed by an earlier dump), so it
holds what ticks, slow rounds and /metrics scrapes run; --startup is the first dump (start-up and
the first ticks). Only functions of the profiled binary (--object, a path suffix) are written.
A stale order file is harmless: symbols that no longer exist are ignored by the linker (the
build passes --no-warn-symbol-ordering), new functions just land in the cold part.

Profile (see scripts/layout_profile.sh, which runs all of this):
  valgrind --tool=callgrind --demangle=no --dump-instr=no --callgrind-out-file=cg.%p \
      build/gpudoctor watch ...;  callgrind_control -d startup PID (after start-up);
  ... ticks, a slow round, /metrics scrapes ...;  callgrind_control -d steady PID
  scripts/layout_order.py --object /gpudoctor --binary build/gpudoctor --startup cg.PID.1 \
      --steady cg.PID.2 --out cmake/layout.order
"""

import argparse
import collections
import re
import subprocess
import sys

# fn=/ob= start a function's block; cfn=/cob= (a call) may be where an id is first named.
FN_RE = re.compile(r"^(c?)fn=\((\d+)\)(?: (.*))?$")
OB_RE = re.compile(r"^(c?)ob=\((\d+)\)(?: (.*))?$")


def functions_of(path, object_suffix, names, objects):
    """Mangled names of the functions of the object that ran in one callgrind dump. Callgrind
    names each function and object once per run, in the first dump that has it: `names` and
    `objects` carry them from the earlier dumps of the run (read in dump order)."""
    current_object = ""
    ran = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = OB_RE.match(line)
            if m:
                if m.group(3) is not None:
                    objects[m.group(2)] = m.group(3)
                if not m.group(1):
                    current_object = objects.get(m.group(2), "")
                continue
            m = FN_RE.match(line)
            if m:
                if m.group(3) is not None:
                    names[m.group(2)] = m.group(3)
                if m.group(1):
                    continue  # a callee: it has a block of its own if it ran
                name = names.get(m.group(2))
                if name is None:
                    sys.exit(f"{path}: fn=({m.group(2)}) has no name: give every dump of the run, "
                             "in order (the earlier dumps name it)")
                if current_object.endswith(object_suffix):
                    # Recursion cycles are written as name'2; unknown code as an address; callgrind's own
                    # entries have spaces: "(below main)".
                    name = name.split("'")[0]
                    if not name.startswith("0x") and " " not in name:
                        ran.add(name)
    return ran


def ambiguous_names(binary):
    """Names the binary defines more than once: local functions of the same name in several
    translation units (an anonymous-namespace helper). The linker orders by name, so listing one
    would pull every translation unit that has such a function into the hot part."""
    nm = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                        check=True).stdout
    count = collections.Counter(line.split()[-1] for line in nm.splitlines() if line.strip())
    return {name for name, n in count.items() if n > 1}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--object", required=True, help="path suffix of the profiled binary")
    ap.add_argument("--steady", nargs="+", required=True, help="callgrind dumps of steady ticks, in dump order")
    ap.add_argument("--startup", nargs="*", default=[], help="earlier callgrind dumps (start-up), in dump order")
    ap.add_argument("--binary", required=True, help="the profiled binary (read with nm)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    names, objects = {}, {}
    startup = set()
    for p in args.startup:  # dumped first
        startup |= functions_of(p, args.object, names, objects)
    steady = set()
    for p in args.steady:
        steady |= functions_of(p, args.object, names, objects)
    startup -= steady
    ambiguous = ambiguous_names(args.binary)
    dropped = len((steady | startup) & ambiguous)
    steady -= ambiguous
    startup -= ambiguous
    if not steady:
        sys.exit(f"no function of an object ending in {args.object!r} in the steady dumps")
    with open(args.out, "w", encoding="utf-8") as out:
        out.write("# Function order for the gpudoctor binary: written by scripts/layout_order.py\n")
        out.write(f"# steady: {len(steady)} functions, start-up only: {len(startup)} "
                  f"({dropped} names defined more than once left out)\n")
        # Sorted within each group: a new profile changes the file only where the sets change.
        for name in sorted(steady):
            out.write(name + "\n")
        for name in sorted(startup):
            out.write(name + "\n")
    print(f"{args.out}: {len(steady)} steady + {len(startup)} start-up functions, "
          f"{dropped} names defined more than once left out")


if __name__ == "__main__":
    main()
