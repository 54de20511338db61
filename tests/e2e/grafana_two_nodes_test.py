#!/usr/bin/env python3
"""deploy/grafana/gpudoctor.json against a real Prometheus scraping two `gpudoctor watch` nodes.

Issue 20 item 7. Two fake nodes (fake NVML scenarios, GPUDOCTOR_HOSTNAME names them gd-node-a
with 8 GPUs and gd-node-b with 2), each `gpudoctor watch` on its own 127.0.0.1 port, scraped
every second by Debian's `prometheus` on 127.0.0.1. Run twice: without --dcgm-compat, then with
it plus a dcgm-exporter-only node (dcgm-node-c, 2 GPUs, a static page). Each time the host
picker's query is evaluated as Grafana would (query_result + the variable's regex) and must list
the hostnames; then every panel's query, with $host substituted for "All", for each single host
and for two hosts at once, is evaluated through /api/v1/query and must return exactly the
expected series: one per GPU of the selected hosts for GPU panels (never one per name set),
one per open finding (as the node's own /metrics lists them), one per gpudoctor host for the
tick age. A panel this test has no expectation for fails it.

With --dcgm-compat, also issue 20 item 8: every counter of dcgm-exporter's default counters file
(fixtures/dcgm_exporter/default-counters.csv) that NVML can provide is on each gpudoctor node's
/metrics with dcgm-exporter's type, and every panel of dcgm-exporter's own dashboard
(fixtures/dcgm_exporter/dcgm-exporter-dashboard.json) whose counters NVML provides draws one
series per GPU (one for an aggregate) for $instance "All" and each instance. Skipped, and said on
stdout: the "Tensor Core Utilization" panel (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM profiling).

Usage: grafana_two_nodes_test.py GPUDOCTOR_BIN FAKE_NVML_LIB FIXTURES_DIR DASHBOARD_JSON
Exit 0 on success, 1 with the mismatches listed otherwise. Never skips: prometheus missing is a
failure (scripts/install-deps.sh installs it).
"""

import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

PROMETHEUS = "/usr/bin/prometheus"
DEADLINE_S = 45  # per phase: waiting for both nodes' findings in Prometheus

GPU_PANELS = {"GPU temperature", "GPU power", "GPU utilisation", "GPU memory used", "SM clock",
              "PCIe replays"}
FINDING_PANELS = {"Active findings (gpudoctor)"}
DAEMON_PANELS = {"gpudoctor tick age"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def prom_query(port, expr):
    q = urllib.parse.urlencode({"query": expr})
    j = json.loads(get(f"http://127.0.0.1:{port}/api/v1/query?{q}"))
    if j.get("status") != "success":
        raise RuntimeError(f"query failed: {expr}: {j}")
    return j["data"]["result"]


def wait_for(pred, timeout_s, step=0.25):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if pred():
                return True
        except (OSError, ValueError, RuntimeError):
            pass
        time.sleep(step)
    return False


def samples(page, name):
    """Label texts of `name`'s samples in an exposition page."""
    out = []
    for line in page.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            out.append(line)
    return out


class Node:
    def __init__(self, tmp, binary, nvml_lib, fixtures, name, scenario_text, dcgm):
        self.name = name
        self.port = free_port()
        d = os.path.join(tmp, name)
        os.makedirs(d)
        scen = os.path.join(d, "live.scenario")
        with open(scen, "w") as f:
            f.write(scenario_text.replace("@FIXTURES@", fixtures))
        cfg = os.path.join(d, "gpudoctor.toml")
        with open(cfg, "w") as f:
            f.write('[finding."gpu.thermal"]\nfor_s = 0\nresolve_after_s = 1\n')
        argv = [binary, "watch", "--interval", "1", "--config", cfg, "--db",
                os.path.join(d, "h.db"), "--probes", "nvml,pci_gpu", "--nvml-lib", nvml_lib,
                "--path.sysfs", os.path.join(fixtures, "sysfs/hgx_h100"),
                "--listen", f"127.0.0.1:{self.port}"]
        if dcgm:
            argv.append("--dcgm-compat")
        env = dict(os.environ, FAKE_NVML_SCENARIO=scen, GPUDOCTOR_HOSTNAME=name)
        self.log = open(os.path.join(d, "watch.log"), "w")
        self.proc = subprocess.Popen(argv, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def metrics(self):
        return get(f"http://127.0.0.1:{self.port}/metrics")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def dcgm_page(host, gpus):
    """A dcgm-exporter page (its names, units and labels) for a node without gpudoctor."""
    fams = [("DCGM_FI_DEV_GPU_TEMP", 35), ("DCGM_FI_DEV_POWER_USAGE", 70.5),
            ("DCGM_FI_DEV_GPU_UTIL", 12), ("DCGM_FI_DEV_FB_USED", 553),
            ("DCGM_FI_DEV_SM_CLOCK", 1980), ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", 0)]
    out = []
    for name, v in fams:
        out.append(f"# HELP {name} test\n# TYPE {name} gauge")
        for g in range(gpus):
            out.append(f'{name}{{gpu="{g}",UUID="GPU-c{g}",device="nvidia{g}",'
                       f'modelName="NVIDIA A100",Hostname="{host}",'
                       f'pci_bus_id="00000000:{0x10 + g:02X}:00.0"}} {v}')
    return "\n".join(out) + "\n"


class StaticPage:
    def __init__(self, text):
        body = text.encode()

        class H(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def grafana_regex_escape(value):
    """A variable's value in a =~ matcher, escaped as Grafana's Prometheus data source does
    (a regex metacharacter gets two backslashes: one for the PromQL string, one for the regex)."""
    return "".join("\\\\" + c if c in "\\^$*+?.()|[]{}/" else c for c in value)


def grafana_query_result_values(prom_port, var):
    """Values of a query_result(...) variable, as Grafana computes them."""
    query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", query, re.S)
    if m:  # label_values(selector, label)
        res = prom_query(prom_port, f"group by ({m.group(2)}) ({m.group(1)})")
        return {r["metric"].get(m.group(2), "") for r in res}
    m = re.fullmatch(r"query_result\((.*)\)", query, re.S)
    assert m, f"host variable query not understood: {query}"
    res = prom_query(prom_port, m.group(1))
    regex = re.compile(var.get("regex", "(.*)").strip("/"))
    values = set()
    for r in res:
        labels = {k: v for k, v in r["metric"].items() if k != "__name__"}
        text = (r["metric"].get("__name__", "") + "{" +
                ", ".join(f'{k}="{v}"' for k, v in labels.items()) + "} " +
                str(r["value"][1]) + " " + str(int(float(r["value"][0]) * 1000)))
        mm = regex.search(text)
        if mm:
            values.add(mm.group(1))
    return values


# Counters of dcgm-exporter's default set NVML cannot provide, and why: DCGM's profiling counters
# (DCGM_FI_PROF_*, read from the GPU's performance monitors by DCGM's profiling module; the PCIe
# bytes are the exception, NVML measures them) and the vGPU licence state (a vGPU guest's).
DCGM_ONLY = {
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": "DCGM profiling (performance monitors), not in NVML",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": "DCGM profiling (performance monitors), not in NVML",
    "DCGM_FI_PROF_DRAM_ACTIVE": "DCGM profiling (performance monitors), not in NVML",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS": "vGPU guests only",
}


def dcgm_default_counters(fixtures):
    """dcgm-exporter's etc/default-counters.csv (copy in fixtures): name -> type."""
    out = {}
    with open(os.path.join(fixtures, "dcgm_exporter", "default-counters.csv")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(",", 2)]
            if len(parts) >= 2:
                out[parts[0]] = parts[1]
    return out


def page_types(page):
    return {m.group(1): m.group(2) for m in re.finditer(r"^# TYPE (\S+) (\S+)$", page, re.M)}


def check_dcgm_exporter_parity(prom_port, nodes, gpus, fixtures, phase, errors):
    """Issue 20 item 8 on the real daemons: every default counter NVML provides is on each
    --dcgm-compat node's /metrics with dcgm-exporter's type, and every panel of dcgm-exporter's
    own dashboard whose counters NVML provides draws one series per GPU (one for an aggregate)
    through Prometheus, for $instance All and each single instance. Returns queries checked."""
    checked = 0
    counters = dcgm_default_counters(fixtures)
    if len(counters) < 20:
        errors.append(f"[{phase}] default-counters.csv read as {counters}")
    # NVLink bandwidth is a rate between two reads: present from a node's second tick on.
    for host, node in nodes.items():
        page = ""

        def complete():
            nonlocal page
            page = node.metrics()
            types = page_types(page)
            return all(n in types for n, t in counters.items()
                       if n not in DCGM_ONLY and t != "label")
        wait_for(complete, 10)
        types = page_types(page)
        for name, typ in sorted(counters.items()):
            if name in DCGM_ONLY:
                if name in types:
                    errors.append(f"[{phase}] {host}: {name} written, but NVML has no such value")
                continue
            if typ == "label":
                rows = samples(page, "DCGM_FI_DEV_GPU_TEMP")
                if not rows or not all(f'{name}="' in r for r in rows):
                    errors.append(f"[{phase}] {host}: label {name} missing: {rows[:1]}")
                continue
            if types.get(name) != typ:
                errors.append(f"[{phase}] {host}: {name} typed {types.get(name, 'absent')}, "
                              f"dcgm-exporter types it {typ}")
            elif len(samples(page, name)) != gpus[host]:
                errors.append(f"[{phase}] {host}: {name} has {len(samples(page, name))} "
                              f"samples, want {gpus[host]}")
    # dcgm-exporter's dashboard: $instance from label_values(DCGM_FI_DEV_GPU_TEMP, instance),
    # $gpu from label_values(DCGM_FI_DEV_GPU_TEMP, gpu), both multi-value with "All".
    with open(os.path.join(fixtures, "dcgm_exporter", "dcgm-exporter-dashboard.json")) as f:
        dash = json.load(f)
    variables = {v["name"]: v for v in dash["templating"]["list"]}
    instances = sorted(grafana_query_result_values(prom_port, variables["instance"]))
    host_of = {r["metric"]["instance"]: r["metric"].get("Hostname") for r in
               prom_query(prom_port, "group by (instance, Hostname) (DCGM_FI_DEV_GPU_TEMP)")}
    if set(host_of.values()) != set(gpus):
        errors.append(f"[{phase}] dcgm-exporter dashboard instances {host_of}, want hosts "
                      f"{sorted(gpus)}")
    gpu_values = sorted(grafana_query_result_values(prom_port, variables["gpu"]))
    all_gpus = "(" + "|".join(grafana_regex_escape(v) for v in gpu_values) + ")"
    selections = [("All", "(" + "|".join(grafana_regex_escape(i) for i in instances) + ")",
                   instances)]
    selections += [(host_of.get(i, i), grafana_regex_escape(i), [i]) for i in instances]
    skipped = []

    def panels(ps):
        for p in ps:
            yield from panels(p.get("panels", []))
            if p.get("targets"):
                yield p

    drawn = 0
    for panel in panels(dash["panels"]):
        title = panel.get("title")
        for target in panel["targets"]:
            expr = target["expr"]
            names = set(re.findall(r"\bDCGM_FI_\w+", expr))
            if names & set(DCGM_ONLY):
                why = ", ".join(DCGM_ONLY[n] for n in sorted(names & set(DCGM_ONLY)))
                skipped.append(f"{title!r}: {why}")
                continue
            aggregate = re.match(r"\s*(avg|sum|min|max|count)\s*\(", expr) is not None
            for sel_name, sel_value, insts in selections:
                q = expr.replace("$instance", sel_value).replace("$gpu", all_gpus)
                want = 1 if aggregate else sum(gpus[host_of[i]] for i in insts if i in host_of)
                res = prom_query(prom_port, q)
                checked += 1
                if len(res) != want:
                    errors.append(f"[{phase}] dcgm-exporter panel {title!r}, instance {sel_name}: "
                                  f"{len(res)} series, want {want}: {q}")
            drawn += 1
    if drawn == 0:
        errors.append(f"[{phase}] no panel of dcgm-exporter's dashboard was evaluated")
    print(f"[{phase}] dcgm-exporter dashboard: {drawn} panel queries drawn, skipped: "
          f"{'; '.join(skipped) or 'none'}")
    return checked


def run_phase(args, tmp, dcgm, errors):
    binary, nvml_lib, fixtures, dashboard = [os.path.abspath(a) for a in args]
    phase = "dcgm-compat" if dcgm else "plain"
    tmp = os.path.join(tmp, phase)
    os.makedirs(tmp)
    with open(dashboard) as f:
        dash = json.load(f)
    nodes = {}
    static = None
    prom = None
    try:
        nodes["gd-node-a"] = Node(tmp, binary, nvml_lib, fixtures, "gd-node-a",
                                  "include=@FIXTURES@/nvml/thermal.scenario\n", dcgm)
        nodes["gd-node-b"] = Node(tmp, binary, nvml_lib, fixtures, "gd-node-b",
                                  "include=@FIXTURES@/nvml/ecc_dbe.scenario\ndevice_count=2\n",
                                  dcgm)
        gpus = {"gd-node-a": 8, "gd-node-b": 2}
        gd_hosts = set(nodes)
        targets = ", ".join(f"'127.0.0.1:{n.port}'" for n in nodes.values())
        cfg = ("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
               "scrape_configs:\n  - job_name: gpudoctor\n"
               f"    static_configs:\n      - targets: [{targets}]\n")
        if dcgm:
            static = StaticPage(dcgm_page("dcgm-node-c", 2))
            gpus["dcgm-node-c"] = 2
            cfg += ("  - job_name: dcgm-exporter\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{static.port}']\n")
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write(cfg)
        prom_port = free_port()
        prom_log = open(os.path.join(tmp, "prometheus.log"), "w")
        prom = subprocess.Popen(
            [PROMETHEUS, "--config.file=" + os.path.join(tmp, "prometheus.yml"),
             "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
             "--web.listen-address=127.0.0.1:" + str(prom_port)],
            stdout=prom_log, stderr=subprocess.STDOUT)

        # Ready: every host's GPUs and every node's open findings are in Prometheus.
        def expected_findings():
            return {h: len(samples(n.metrics(), "gpudoctor_finding_active")) for h, n in
                    nodes.items()}

        def ready():
            temps = prom_query(prom_port, "count by (hostname) (gpudoctor_gpu_temperature_celsius)"
                               " or count by (hostname) (label_replace(DCGM_FI_DEV_GPU_TEMP,"
                               ' "hostname", "$1", "Hostname", "(.*)"))')
            have = {r["metric"].get("hostname"): int(r["value"][1]) for r in temps}
            if have != gpus:
                return False
            want = expected_findings()
            if min(want.values()) == 0:
                return False
            got = prom_query(prom_port, "count by (hostname) (gpudoctor_finding_active)")
            return {r["metric"]["hostname"]: int(r["value"][1]) for r in got} == want

        if not wait_for(ready, DEADLINE_S):
            errors.append(f"[{phase}] nodes never all visible in Prometheus with their findings")
            for h, n in nodes.items():
                try:
                    errors.append(f"  {h} /metrics findings: " +
                                  "; ".join(samples(n.metrics(), "gpudoctor_finding_active")))
                except OSError as e:
                    errors.append(f"  {h}: {e}")
            return
        findings = expected_findings()

        # The host picker.
        var = next(v for v in dash["templating"]["list"] if v["name"] == "host")
        values = grafana_query_result_values(prom_port, var)
        if values != set(gpus):
            errors.append(f"[{phase}] host picker lists {sorted(values)}, want {sorted(gpus)}")

        selections = [("All", var.get("allValue", ".*"), set(gpus))]
        selections += [(h, grafana_regex_escape(h), {h}) for h in sorted(gpus)]
        selections.append(("a+b", "(gd-node-a|gd-node-b)", {"gd-node-a", "gd-node-b"}))
        checked = 0
        for panel in dash["panels"]:
            title = panel["title"]
            for target in panel["targets"]:
                for sel_name, sel_value, hosts in selections:
                    expr = target["expr"].replace("$host", sel_value)
                    if title in GPU_PANELS:
                        want = sum(gpus[h] for h in hosts)
                    elif title in FINDING_PANELS:
                        want = sum(findings.get(h, 0) for h in hosts)
                    elif title in DAEMON_PANELS:
                        want = len(hosts & gd_hosts)
                    else:
                        errors.append(f"panel {title!r} has no expectation in this test")
                        continue
                    res = prom_query(prom_port, expr)
                    checked += 1
                    where = f"[{phase}] panel {title!r}, host {sel_name}"
                    got_hosts = {r["metric"].get("hostname") for r in res}
                    if len(res) != want:
                        errors.append(f"{where}: {len(res)} series, want {want}: {expr}")
                    if want > 0 and not res:
                        errors.append(f"{where}: empty")
                    if not got_hosts <= hosts:
                        errors.append(f"{where}: series of hosts {sorted(got_hosts - hosts)}")
                    if title in GPU_PANELS:
                        keys = [(r["metric"].get("hostname"), r["metric"].get("gpu")) for r in res]
                        if len(set(keys)) != len(keys):
                            errors.append(f"{where}: a GPU drawn twice: {sorted(keys)}")
        if dcgm:
            checked += check_dcgm_exporter_parity(prom_port, nodes, gpus, fixtures,
                                                  phase, errors)
        print(f"[{phase}] {checked} panel queries checked; hosts {sorted(values)}; "
              f"findings {findings}")
    finally:
        for n in nodes.values():
            n.stop()
        if prom:
            prom.terminate()
            try:
                prom.wait(10)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()
        if static:
            static.stop()


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    if not os.path.exists(PROMETHEUS):
        print(f"FAIL: {PROMETHEUS} missing (scripts/install-deps.sh installs Debian's prometheus)")
        return 1
    start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="gd-grafana-")
    errors = []
    try:
        run_phase(sys.argv[1:], tmp, False, errors)
        run_phase(sys.argv[1:], tmp, True, errors)
    finally:
        if errors:
            for phase in ("plain", "dcgm-compat"):
                for log in ("prometheus.log", "gd-node-a/watch.log", "gd-node-b/watch.log"):
                    p = os.path.join(tmp, phase, log)
                    if os.path.exists(p):
                        with open(p, errors="replace") as f:
                            tail = f.read()[-1500:]
                        print(f"--- {phase}/{log} (tail)\n{tail}")
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{time.monotonic() - start:.1f} s")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
