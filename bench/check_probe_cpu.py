#!/usr/bin/env python3
"""CPU (user + sys, getrusage of the child) of `check` per probe set, binaries side by side, and
node_exporter's CPU per scrape in the same run.

Usage: bench/check_probe_cpu.py RUNS BINARY[,BINARY...] [probe-set ...]
Each run starts every binary once, alternating, so both see the same load. Prints the median
and the minimum in ms, and the median page faults and context switches, for `check` with all
probes and for each `--probes SET` given (default: config pressure sockets suspicious inference
sockets,suspicious,inference; the set "config" is
every probe with the commented default config file, `config --default`, passed as --config).
Uses the fake NVML from the first binary's build tree (FAKE_NVML_SCENARIO defaults to the
healthy H100 scenario).

With prometheus-node-exporter installed (scripts/install-deps.sh; NODE_EXPORTER=0 turns it off)
it runs on 127.0.0.1 beside them and is scraped NODE_EXPORTER_SCRAPES times (default 3) after
each run of `check` with all probes: its CPU per scrape (utime + stime of the whole process,
/proc/PID/stat, across the scrapes only, so its idle CPU between scrapes is not counted) is
printed with each binary's default `check` CPU as a multiple of it (issue 23: <= 2x).
"""
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

runs = int(sys.argv[1])
binaries = sys.argv[2].split(",")
sets = sys.argv[3:] or ["config", "pressure", "sockets", "suspicious", "inference",
                        "sockets,suspicious,inference"]
repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("FAKE_NVML_SCENARIO",
                      os.path.join(repo, "tests/fixtures/nvml/h100_healthy.scenario"))
nvml = os.path.join(os.path.dirname(binaries[0]), "tests/fake_nvml/libnvidia-ml.so.1")
tick_s = 1.0 / os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * tick_s  # utime, stime (fields 14, 15)


ne_path = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"
ne = None
ne_cpu = []  # seconds of node_exporter CPU per scrape, one entry per batch of scrapes
scrapes = int(os.environ.get("NODE_EXPORTER_SCRAPES", "3"))
if os.environ.get("NODE_EXPORTER", "1") != "0" and os.path.exists(ne_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    ne = subprocess.Popen([ne_path, f"--web.listen-address=127.0.0.1:{port}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/metrics"
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=2).read()
            break
        except OSError:
            time.sleep(0.1)
    for _ in range(3):  # warm-up: the first scrapes start collectors and grow buffers
        urllib.request.urlopen(url, timeout=5).read()
elif os.environ.get("NODE_EXPORTER", "1") != "0":
    print("node_exporter: not installed (scripts/install-deps.sh)")


def scrape_node_exporter():
    c0 = cpu_s(ne.pid)
    for _ in range(scrapes):
        urllib.request.urlopen(url, timeout=5).read()
    ne_cpu.append((cpu_s(ne.pid) - c0) / scrapes)


# The set "config": every probe with the commented default config file (`config --default`), as
# deployments run `check` (the NHC check and the Slurm README pass --config): reading a config
# file is part of what such a check costs.
default_config = os.path.join(
    os.environ.get("TMPDIR", "/tmp"), f"check_probe_cpu.{os.getpid()}.toml")
with open(default_config, "w") as f:
    f.write(subprocess.run([binaries[0], "config", "--default"], capture_output=True, text=True,
                           check=True, timeout=60).stdout)

extra = [subprocess.Popen(["sleep", "3600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
         for _ in range(int(os.environ.get("EXTRA_PROCESSES", "0")))]
if extra:
    print(f"{len(extra)} extra idle processes; /proc lists "
          f"{sum(1 for d in os.listdir('/proc') if d.isdigit())} tasks")

default_cpu = {}
try:
    for probes in [None] + sets:
        if probes == "config":
            args = ["check", "--nvml-lib", nvml, "--config", default_config]
        else:
            args = ["check", "--nvml-lib", nvml] + (["--probes", probes] if probes else [])
        cpu = {b: [] for b in binaries}
        faults = {b: [] for b in binaries}
        switches = {b: [] for b in binaries}
        for _ in range(runs):
            for b in binaries:
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run([b] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=60)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[b].append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
                faults[b].append(r1.ru_minflt - r0.ru_minflt)
                switches[b].append(r1.ru_nvcsw - r0.ru_nvcsw + r1.ru_nivcsw - r0.ru_nivcsw)
            if probes is None and ne is not None:
                scrape_node_exporter()
        for b in binaries:
            # Page faults and context switches are counts, steadier than CPU time on a VM whose
            # figures move by 20% within the hour, and each is dear on one (docs/cost.md).
            print(f"{probes or 'default':32s} {b}: median {statistics.median(cpu[b]):.1f} ms, "
                  f"min {min(cpu[b]):.1f} ms; median {statistics.median(faults[b]):.0f} page "
                  f"faults, {statistics.median(switches[b]):.0f} context switches")
            if probes is None:
                default_cpu[b] = statistics.median(cpu[b])
finally:
    for p in extra:
        p.kill()
        p.wait()
    os.unlink(default_config)
    if ne is not None:
        ne.terminate()
        ne.wait(10)
if ne_cpu:
    # Mean over every scrape: /proc/PID/stat counts in clock ticks, so one scrape alone is coarse.
    per = 1000 * statistics.mean(ne_cpu)
    print(f"node_exporter (defaults), {len(ne_cpu) * scrapes} scrapes between the default runs: "
          f"{per:.1f} ms CPU per scrape")
    for b in binaries:
        print(f"default check / node_exporter scrape  {b}: {default_cpu[b] / per:.2f}x "
              f"(issue 23: <= 2)")
