#!/usr/bin/env python3
"""`promtool check metrics` on a real scrape of `gpudoctor watch` with NICs and InfiniBand ports.

Issue 20 item 9. The watch runs on the fixture sysfs tests/fixtures/net/sysfs_t1 (Ethernet NICs
and two mlx5 InfiniBand ports) with the fake NVML (8 GPUs), listening on 127.0.0.1. Its /metrics
must lint clean; with --dcgm-compat every complaint must be about a dcgm-exporter name (kept as
dcgm-exporter spells and types them), none about gpudoctor's own.

Usage: promtool_scrape_test.py GPUDOCTOR_BIN FAKE_NVML_LIB FIXTURES_DIR
"""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

PROMTOOL = "/usr/bin/promtool"
WANT = ("gpudoctor_nic_speed_bytes_per_second", "gpudoctor_ib_port_rate_bytes_per_second",
        "gpudoctor_gpu_temperature_celsius")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(binary, nvml_lib, fixtures, tmp, dcgm):
    port = free_port()
    argv = [binary, "watch", "--interval", "1", "--db", os.path.join(tmp, f"h{int(dcgm)}.db"),
            "--probes", "nvml,nic,infiniband", "--nvml-lib", nvml_lib,
            "--path.sysfs", os.path.join(fixtures, "net/sysfs_t1"),
            "--listen", f"127.0.0.1:{port}"]
    if dcgm:
        argv.append("--dcgm-compat")
    env = dict(os.environ, FAKE_NVML_SCENARIO=os.path.join(fixtures, "nvml/h100_healthy.scenario"))
    with open(os.path.join(tmp, "watch.log"), "a") as log:
        p = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            end = time.monotonic() + 30
            while time.monotonic() < end:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics",
                                                timeout=5) as r:
                        page = r.read().decode()
                    if all(w + "{" in page for w in WANT):
                        return page
                except OSError:
                    pass
                time.sleep(0.25)
            return None
        finally:
            p.terminate()
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    if not os.path.exists(PROMTOOL):
        print(f"FAIL: {PROMTOOL} missing (scripts/install-deps.sh installs Debian's prometheus)")
        return 1
    tmp = tempfile.mkdtemp(prefix="gd-promtool-")
    errors = []
    try:
        for dcgm in (False, True):
            page = scrape(*[os.path.abspath(a) for a in sys.argv[1:]], tmp, dcgm)
            if page is None:
                errors.append(f"dcgm={dcgm}: /metrics never showed {WANT}")
                with open(os.path.join(tmp, "watch.log"), errors="replace") as f:
                    print(f.read()[-2000:])
                continue
            r = subprocess.run([PROMTOOL, "check", "metrics"], input=page, capture_output=True,
                               text=True, timeout=30)
            complaints = [l for l in (r.stdout + r.stderr).splitlines() if l.strip()]
            own = [l for l in complaints if not l.startswith("DCGM_")]
            if own or (not dcgm and r.returncode != 0):
                errors.append(f"dcgm={dcgm}: promtool rc {r.returncode}: " + "; ".join(own))
            print(f"dcgm={dcgm}: {len(page.splitlines())} lines, "
                  f"{len(complaints) - len(own)} complaints about DCGM names only")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
