#!/usr/bin/env python3
"""deploy/alertmanager/gpudoctor.yml's routes and inhibit rules on a real Alertmanager.

Issue 20 item 4. Debian's prometheus-alertmanager on 127.0.0.1 with the shipped file receives
alerts in the vocabulary both the shipped rules and watch's notifier send (GpudoctorFinding,
severity critical|warning, finding, action, gpu, hostname); /api/v2/alerts must then show:
a node-level critical finding that takes the node out suppresses the same node's GPU findings
(and nothing on another node); a finding's critical alert suppresses its own warning; a
node-level warning suppresses nothing; pages (oncall) only for critical node-taking actions.

Usage: alertmanager_inhibit_test.py CONFIG_YML. Exit 0 on success, 1 otherwise; a missing
Alertmanager is a failure (scripts/install-deps.sh installs it), never a skip.
"""

import datetime
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ALERTMANAGER = "/usr/bin/prometheus-alertmanager"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return r.read().decode()


def finding(host, fid, severity, action, gpu=None, layer="hardware"):
    labels = {"alertname": "GpudoctorFinding", "finding": fid, "id": fid, "severity": severity,
              "action": action, "layer": layer, "hostname": host}
    if gpu is not None:
        labels.update({"gpu": str(gpu), "pci_bus_id": f"0000:{0x18 + gpu:02x}:00.0",
                       "serial": f"165432100{gpu}"})
    return labels


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    if not os.path.exists(ALERTMANAGER):
        print(f"FAIL: {ALERTMANAGER} missing (scripts/install-deps.sh installs it)")
        return 1
    tmp = tempfile.mkdtemp(prefix="gd-am-")
    port = free_port()
    log = open(os.path.join(tmp, "am.log"), "w")
    am = subprocess.Popen([ALERTMANAGER, "--config.file=" + sys.argv[1],
                           "--storage.path=" + os.path.join(tmp, "data"),
                           "--web.listen-address=127.0.0.1:" + str(port),
                           "--cluster.listen-address="], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    errors = []
    try:
        end = time.monotonic() + 30
        while True:
            try:
                request(base + "/-/ready")
                break
            except OSError:
                if time.monotonic() > end or am.poll() is not None:
                    errors.append("alertmanager never became ready")
                    return 1
                time.sleep(0.2)
        alerts = {
            # n1: the driver is broken; its GPU findings are consequences.
            "n1 node crit": finding("n1", "driver.mismatch", "critical", "reboot",
                                    layer="software"),
            "n1 gpu crit": finding("n1", "gpu.ecc.dbe", "critical", "drain_reset", gpu=1),
            "n1 gpu warn": finding("n1", "gpu.thermal", "warning", "watch", gpu=3),
            # n2: one finding critical on GPU 1 with its warning still open, a node warning.
            "n2 gpu crit": finding("n2", "gpu.ecc.dbe", "critical", "drain_reset", gpu=1),
            "n2 gpu warn same finding": finding("n2", "gpu.ecc.dbe", "warning", "watch", gpu=1),
            "n2 gpu warn other gpu": finding("n2", "gpu.thermal", "warning", "watch", gpu=2),
            "n2 node warn": finding("n2", "host.disk.full", "warning", "fix_config",
                                    layer="resources"),
        }
        want_suppressed = {"n1 gpu crit", "n1 gpu warn", "n2 gpu warn same finding"}
        now = datetime.datetime.now(datetime.timezone.utc)
        ends = (now + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        request(base + "/api/v2/alerts",
                [{"labels": l, "annotations": {"runbook_url": "docs/findings.md#" + l["finding"]},
                  "endsAt": ends} for l in alerts.values()])
        got = {}
        end = time.monotonic() + 15
        while time.monotonic() < end:
            listed = json.loads(request(base + "/api/v2/alerts"))
            got = {}
            for a in listed:
                for name, labels in alerts.items():
                    if all(a["labels"].get(k) == v for k, v in labels.items()) and \
                            set(a["labels"]) == set(labels):
                        got[name] = a
            if len(got) == len(alerts):
                break
            time.sleep(0.2)
        for name in alerts:
            if name not in got:
                errors.append(f"{name}: not listed by Alertmanager")
                continue
            state = got[name]["status"]["state"]
            want = "suppressed" if name in want_suppressed else "active"
            if state != want:
                errors.append(f"{name}: {state}, want {want} ({got[name]['status']})")
            receivers = sorted(r["name"] for r in got[name]["receivers"])
            want_rx = ["oncall"] if got[name]["labels"]["severity"] == "critical" and \
                got[name]["labels"]["action"] in ("reboot", "drain_reset") else ["team"]
            if receivers != want_rx:
                errors.append(f"{name}: routed to {receivers}, want {want_rx}")
    finally:
        am.terminate()
        try:
            am.wait(10)
        except subprocess.TimeoutExpired:
            am.kill()
            am.wait()
        log.close()
        if errors:
            with open(os.path.join(tmp, "am.log"), errors="replace") as f:
                print("--- alertmanager log (tail)\n" + f.read()[-2000:])
        shutil.rmtree(tmp, ignore_errors=True)
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"{len(alerts)} alerts: inhibitions and routes as shipped")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
