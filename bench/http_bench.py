#!/usr/bin/env python3
"""Scrape cost and load of `gpudoctor watch` /metrics on the fake NVML (issue 10 item 6).

Usage: bench/http_bench.py BUILD_DIR [SECONDS] [RATE]
Starts watch on loopback, then: bytes per scrape, CPU seconds of the daemon per scrape (from
/proc/PID/stat around 200 scrapes), and RATE requests/s for SECONDS with errors and RSS before
and after. Prints one line per figure."""
import os, subprocess, sys, time, urllib.request, socket

build = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10
rate = float(sys.argv[3]) if len(sys.argv) > 3 else 1000
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
env = dict(os.environ, FAKE_NVML_SCENARIO=f"{src}/tests/fixtures/nvml/h100_busy.scenario")
p = subprocess.Popen([f"{build}/gpudoctor", "watch", "--no-db", "--listen", f"127.0.0.1:{port}",
                      "--nvml-lib", f"{build}/tests/fake_nvml/libnvidia-ml.so.1",
                      "--path.sysfs", f"{src}/tests/fixtures/sysfs/hgx_h100"],
                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
url = f"http://127.0.0.1:{port}/metrics"
def cpu():
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
def rss():
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith("VmRSS"): return int(l.split()[1])
try:
    for _ in range(100):
        try:
            if urllib.request.urlopen(url, timeout=2).status == 200: break
        except Exception: time.sleep(0.1)
    body = urllib.request.urlopen(url, timeout=5).read()
    print(f"scrape_bytes {len(body)}")
    time.sleep(2); idle0 = cpu(); time.sleep(2); idle = (cpu() - idle0) / 2
    c0 = cpu(); t0 = time.time()
    for _ in range(200): urllib.request.urlopen(url, timeout=5).read()
    el = time.time() - t0
    print(f"cpu_ms_per_scrape {max(0.0, (cpu() - c0 - idle * el)) / 200 * 1000:.2f} (ticks excluded)")
    print(f"latency_ms_per_scrape {el / 200 * 1000:.2f}")
    r0 = rss(); errors = 0; n = 0; t0 = time.time(); nxt = t0
    while time.time() - t0 < seconds:
        try:
            if urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status != 200: errors += 1
        except Exception: errors += 1
        n += 1; nxt += 1 / rate
        d = nxt - time.time()
        if d > 0: time.sleep(d)
    el = time.time() - t0
    print(f"load requests {n} in {el:.1f} s ({n / el:.0f}/s) errors {errors} rss_kb {r0} -> {rss()}")
finally:
    p.terminate(); p.wait(5)
