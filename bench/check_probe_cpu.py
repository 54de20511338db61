#!/usr/bin/env python3
"""CPU (user + sys, getrusage of the child) of `check` per probe set, binaries side by side.

Usage: bench/check_probe_cpu.py RUNS BINARY[,BINARY...] [probe-set ...]
Each run starts every binary once, alternating, so both see the same load. Prints the median
and the minimum in ms for `check` with all probes and for each `--probes SET` given (default:
pressure sockets suspicious inference sockets,suspicious,inference). Uses the fake NVML from
the first binary's build tree (FAKE_NVML_SCENARIO defaults to the healthy H100 scenario).
"""
import os
import resource
import statistics
import subprocess
import sys

runs = int(sys.argv[1])
binaries = sys.argv[2].split(",")
sets = sys.argv[3:] or ["pressure", "sockets", "suspicious", "inference",
                        "sockets,suspicious,inference"]
repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("FAKE_NVML_SCENARIO",
                      os.path.join(repo, "tests/fixtures/nvml/h100_healthy.scenario"))
nvml = os.path.join(os.path.dirname(binaries[0]), "tests/fake_nvml/libnvidia-ml.so.1")
for probes in [None] + sets:
    args = ["check", "--nvml-lib", nvml] + (["--probes", probes] if probes else [])
    cpu = {b: [] for b in binaries}
    for _ in range(runs):
        for b in binaries:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([b] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[b].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
    for b in binaries:
        print(f"{probes or 'default':32s} {b}: median {statistics.median(cpu[b]):.1f} ms, "
              f"min {min(cpu[b]):.1f} ms")
