#!/usr/bin/env python3
"""deploy/k8s as shipped: every manifest through kubectl's create --dry-run=client round trip
(against a local API discovery stub: kubectl maps kinds to resources through discovery even for a
client-side dry run, and no cluster is reachable here), then the fields the deployment depends
on: hostNetwork and hostPID, read-only host mounts that match the --path.* flags, /dev/kmsg where
gpudoctor reads it, probes on /healthz at the listen port, requests and limits, RBAC for
node-problem-detector, Service and ServiceMonitor wiring, and NPD's rules asking the local watch
(check --npd --connect) with a warnings condition per layer. The NPD rule arguments and the watch
flags are also given to the real binary.

Usage: k8s_manifests_test.py SOURCE_DIR BUILD_DIR
"""
import glob
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading

try:
    import yaml
except ImportError:
    sys.exit("FAIL: python3-yaml is not installed (scripts/install-deps.sh)")

SRC, BUILD = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
K8S = os.path.join(SRC, "deploy", "k8s")
BIN = os.path.join(BUILD, "gpudoctor")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


# ---- kubectl round trip against a discovery stub --------------------------------------------
def res(name, kind, namespaced, verbs=("create", "get", "list")):
    return {"name": name, "singularName": kind.lower(), "namespaced": namespaced, "kind": kind,
            "verbs": list(verbs)}


GROUPS = {
    "v1": [res("namespaces", "Namespace", False), res("serviceaccounts", "ServiceAccount", True),
           res("configmaps", "ConfigMap", True), res("services", "Service", True),
           res("nodes", "Node", False), res("events", "Event", True)],
    "apps/v1": [res("daemonsets", "DaemonSet", True)],
    "rbac.authorization.k8s.io/v1": [res("clusterroles", "ClusterRole", False),
                                     res("clusterrolebindings", "ClusterRoleBinding", False)],
    "monitoring.coreos.com/v1": [res("servicemonitors", "ServiceMonitor", True),
                                 res("podmonitors", "PodMonitor", True)],
}


class Discovery(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        body = None
        if path == "/api":
            body = {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                    "serverAddress": "127.0.0.1"}]}
        elif path == "/apis":
            groups = []
            for gv in GROUPS:
                if "/" not in gv:
                    continue
                g, v = gv.split("/")
                ver = {"groupVersion": gv, "version": v}
                groups.append({"name": g, "versions": [ver], "preferredVersion": ver})
            body = {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}
        elif path == "/api/v1" or path.startswith("/apis/"):
            gv = "v1" if path == "/api/v1" else path[len("/apis/"):]
            if gv in GROUPS:
                body = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                        "resources": GROUPS[gv]}
        data = json.dumps(body if body is not None else {"kind": "Status", "code": 404}).encode()
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def kubectl_round_trip(paths):
    kubectl = shutil.which("kubectl")
    if not check(kubectl is not None, "kubectl is not installed (scripts/install-deps.sh)"):
        return
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Discovery)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % server.server_address[1]
    home = os.path.join(BUILD, "k8s-manifests-test-home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, KUBECONFIG=os.devnull)
    try:
        for path in paths:
            sent = [d for d in yaml.safe_load_all(open(path)) if d]
            r = subprocess.run([kubectl, "--server", url, "--request-timeout=10s", "create",
                                "--dry-run=client", "--validate=false", "-o", "yaml", "-f", path],
                               capture_output=True, text=True, timeout=60, env=env)
            if not check(r.returncode == 0, "kubectl create %s: %s" % (path, r.stderr.strip())):
                continue
            back = [d for d in yaml.safe_load_all(r.stdout) if d]
            if len(back) == 1 and back[0].get("kind") == "List":
                back = back[0]["items"]
            check(len(back) == len(sent), "%s: %d objects sent, %d came back" %
                  (path, len(sent), len(back)))
            for a, b in zip(sent, back):
                check(a == b, "%s: %s/%s changed in the round trip:\n%s\n%s" %
                      (path, a.get("kind"), a["metadata"]["name"], a, b))
            print("ok: kubectl create --dry-run=client round trip of", os.path.basename(path),
                  "(%d objects)" % len(back))
    finally:
        server.shutdown()


# ---- fields ---------------------------------------------------------------------------------
def flag(args, name):
    """--name=value or --name value from an argument list; None when absent."""
    for i, a in enumerate(args):
        if a == name and i + 1 < len(args):
            return args[i + 1]
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    return None


def fields(docs):
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    ds = by_kind["DaemonSet"][0]
    pod = ds["spec"]["template"]["spec"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    check(ds["spec"]["selector"]["matchLabels"].items() <= labels.items(),
          "DaemonSet selector does not match its pod labels")
    check(pod.get("hostNetwork") is True, "hostNetwork is not true")
    check(pod.get("hostPID") is True, "hostPID is not true")
    check(pod.get("dnsPolicy") == "ClusterFirstWithHostNet",
          "hostNetwork pods need dnsPolicy ClusterFirstWithHostNet")
    containers = {c["name"]: c for c in pod["containers"]}
    watch = containers.get("watch")
    npd = containers.get("node-problem-detector")
    if not check(watch and npd, "containers watch and node-problem-detector"):
        return
    args = watch.get("args", [])
    check(args[:1] == ["watch"], "the watch container runs `gpudoctor watch`")
    env = {e["name"]: e.get("value") for e in watch.get("env", [])}
    check(pod.get("runtimeClassName") == "nvidia" or env.get("NVIDIA_VISIBLE_DEVICES") == "all",
          "NVML through the toolkit: runtimeClassName nvidia or NVIDIA_VISIBLE_DEVICES=all")
    check(env.get("NVIDIA_VISIBLE_DEVICES") == "all", "NVIDIA_VISIBLE_DEVICES=all on watch")
    node_name = [e for e in watch.get("env", []) if e["name"] == "GPUDOCTOR_HOSTNAME"]
    check(len(node_name) == 1 and node_name[0].get("valueFrom", {}).get("fieldRef", {})
          .get("fieldPath") == "spec.nodeName",
          "GPUDOCTOR_HOSTNAME from spec.nodeName (series and alerts name the Kubernetes node)")

    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in watch["volumeMounts"]}

    def host_mount(host_path):
        for m in watch["volumeMounts"]:
            hp = volumes[m["name"]].get("hostPath")
            if hp and hp["path"] == host_path:
                return m
        return None

    for host_path, flag_name in (("/proc", "--path.procfs"), ("/sys", "--path.sysfs"),
                                 ("/", "--path.rootfs")):
        m = host_mount(host_path)
        if check(m is not None, "host %s is mounted in watch" % host_path):
            check(m.get("readOnly") is True, "host %s is mounted read-only" % host_path)
            check(flag(args, flag_name) == m["mountPath"],
                  "%s %s is where host %s is mounted (%s)" %
                  (flag_name, flag(args, flag_name), host_path, m["mountPath"]))
    kmsg = host_mount("/dev/kmsg")
    if check(kmsg is not None, "host /dev/kmsg is mounted in watch"):
        check(kmsg.get("readOnly") is True, "/dev/kmsg is mounted read-only")
        rootfs = flag(args, "--path.rootfs") or "/"
        check(kmsg["mountPath"] == rootfs.rstrip("/") + "/dev/kmsg",
              "/dev/kmsg is mounted where gpudoctor reads it (<rootfs>/dev/kmsg)")
        check(volumes[kmsg["name"]]["hostPath"].get("type") == "CharDevice",
              "/dev/kmsg hostPath type CharDevice")
        check(flag(args, "--kmsg-source") == "kmsg", "--kmsg-source kmsg (no journal in a pod)")
    for m in watch["volumeMounts"]:
        hp = volumes[m["name"]].get("hostPath")
        if hp and hp["path"] != "/var/lib/gpudoctor":
            check(m.get("readOnly") is True, "host %s must be read-only" % hp["path"])
    db = flag(args, "--db")
    check(db is not None and any(db.startswith(p + "/") for p in mounts),
          "the history (--db %s) is on a mounted volume" % db)
    check(watch["securityContext"].get("privileged") is True,
          "watch is privileged (/dev/kmsg is outside the device allow-list)")

    listen = flag(args, "--listen") or ""
    port = int(listen.rsplit(":", 1)[1]) if ":" in listen else 0
    check(listen.startswith(":") or listen.startswith("0.0.0.0:"),
          "watch listens on all addresses (--listen %s): kubelet probes and Prometheus reach the "
          "node IP" % listen)
    for probe in ("livenessProbe", "startupProbe", "readinessProbe"):
        p = watch.get(probe, {}).get("httpGet", {})
        check(p.get("path") == "/healthz" and p.get("port") in (port, "metrics"),
              "%s is GET /healthz on the listen port %d" % (probe, port))
    ports = {p["name"]: p["containerPort"] for p in watch.get("ports", [])}
    check(ports.get("metrics") == port, "container port 'metrics' is the listen port")

    def cpu_m(v):
        v = str(v)
        return float(v[:-1]) if v.endswith("m") else float(v) * 1000

    def mem_b(v):
        units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
        m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", str(v))
        return int(m.group(1)) * units.get(m.group(2), 1)

    for c in pod["containers"] + pod.get("initContainers", []):
        r = c.get("resources", {})
        req, lim = r.get("requests", {}), r.get("limits", {})
        check("cpu" in req and "memory" in req and "memory" in lim,
              "%s has cpu/memory requests and a memory limit" % c["name"])
        if "memory" in req and "memory" in lim:
            check(mem_b(req["memory"]) <= mem_b(lim["memory"]), "%s: request <= limit" % c["name"])
        if "cpu" in req and "cpu" in lim:
            check(cpu_m(req["cpu"]) <= cpu_m(lim["cpu"]), "%s: cpu request <= limit" % c["name"])
    wr = watch["resources"]
    check("cpu" in wr["limits"], "watch has a cpu limit")

    # RBAC for node-problem-detector.
    sa = pod.get("serviceAccountName")
    ns = ds["metadata"]["namespace"]
    check(any(s["metadata"]["name"] == sa and s["metadata"]["namespace"] == ns
              for s in by_kind.get("ServiceAccount", [])), "ServiceAccount %s/%s exists" % (ns, sa))
    roles = {r["metadata"]["name"]: r for r in by_kind.get("ClusterRole", [])}
    bound = [b for b in by_kind.get("ClusterRoleBinding", [])
             if any(s.get("kind") == "ServiceAccount" and s["name"] == sa and
                    s.get("namespace") == ns for s in b["subjects"])]
    if check(bound, "a ClusterRoleBinding binds %s" % sa):
        role = roles.get(bound[0]["roleRef"]["name"])
        if check(role is not None, "the bound ClusterRole exists"):
            def allows(resource, verb):
                return any(resource in r["resources"] and verb in r["verbs"] and
                           "" in r["apiGroups"] for r in role["rules"])
            check(allows("nodes", "get"), "NPD may get nodes")
            check(allows("nodes/status", "patch"), "NPD may patch nodes/status")
            check(allows("events", "create") and allows("events", "patch"),
                  "NPD may create and patch events")
    check(any(n["metadata"]["name"] == ns for n in by_kind.get("Namespace", [])),
          "namespace %s is created" % ns)

    # Service and ServiceMonitor / PodMonitor.
    svc = by_kind["Service"][0]
    check(svc["spec"]["selector"].items() <= labels.items(), "the Service selects the pods")
    svc_ports = {p["name"]: p for p in svc["spec"]["ports"]}
    check("metrics" in svc_ports and svc_ports["metrics"]["targetPort"] in ("metrics", port),
          "the Service's metrics port targets the watch")
    monitors = by_kind.get("ServiceMonitor", []) + by_kind.get("PodMonitor", [])
    if check(monitors, "a ServiceMonitor or PodMonitor"):
        for m in by_kind.get("ServiceMonitor", []):
            check(m["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items(),
                  "the ServiceMonitor selects the Service")
            check(all(e["port"] in svc_ports for e in m["spec"]["endpoints"]),
                  "ServiceMonitor endpoints name a Service port")
            check(all(e.get("path", "/metrics") == "/metrics" for e in m["spec"]["endpoints"]),
                  "ServiceMonitor scrapes /metrics")

    # node-problem-detector: the binary from the init container, the plugin config, the rules.
    npd_cmd = npd["command"]
    init = pod.get("initContainers", [])
    npd_mounts = {m["name"]: m["mountPath"] for m in npd["volumeMounts"]}
    check(any(npd_cmd[0] in " ".join(i.get("command", [])) for i in init) or
          npd_cmd[0].startswith(tuple(npd_mounts.values())),
          "NPD's binary %s comes from the init container" % npd_cmd[0])
    check(npd["image"] == watch["image"], "NPD runs in the gpudoctor image (its rules run it)")
    cfg_path = flag(npd_cmd, "--config.custom-plugin-monitor")
    cms = {c["metadata"]["name"]: c for c in by_kind["ConfigMap"]}
    cfg = None
    for vol, mp in npd_mounts.items():
        cm = volumes[vol].get("configMap")
        if cm and cfg_path and cfg_path.startswith(mp + "/"):
            cfg = json.loads(cms[cm["name"]]["data"][cfg_path[len(mp) + 1:]])
    if check(cfg is not None, "NPD's --config.custom-plugin-monitor is in a mounted ConfigMap"):
        plugin_config("ConfigMap " + cfg_path, cfg, port)
        host = json.load(open(os.path.join(K8S, "npd-gpudoctor-plugin.json")))
        check(host["rules"] == cfg["rules"] and host["conditions"] == cfg["conditions"],
              "npd-gpudoctor-plugin.json has the ConfigMap's rules and conditions")
    return watch


def seconds(text):
    m = re.fullmatch(r"(\d+)s", text)
    return int(m.group(1)) if m else None


def plugin_config(where, cfg, port):
    pc = cfg["pluginConfig"]
    check(pc.get("max_output_length", 80) >= 200, where + ": max_output_length >= 200")
    check(pc.get("enable_message_change_based_condition_update") is True,
          where + ": message changes update a True condition")
    defaults = {c["type"] for c in cfg["conditions"]}
    layers = {"hardware", "software", "network", "resources"}
    seen = set()
    for r in cfg["rules"]:
        a = r["args"]
        name = "%s rule %s" % (where, r["condition"])
        check(r["type"] == "permanent", name + ": permanent")
        check(r["condition"] in defaults, name + ": has a default condition")
        check(a[:2] == ["check", "--npd"], name + ": check --npd")
        layer = flag(a, "--npd-layer")
        check(layer in layers, name + ": --npd-layer")
        url = flag(a, "--connect")
        check(url == "http://127.0.0.1:%d" % port, name + ": --connect to the local watch (%s)" % url)
        deadline = float(flag(a, "--deadline") or 10)
        timeout = seconds(r.get("timeout", pc.get("timeout", "5s")))
        check(timeout is not None and timeout >= deadline + 2,
              name + ": NPD's timeout %s leaves the --deadline %g room" % (r.get("timeout"), deadline))
        warn = "--npd-warnings" in a
        check(r["condition"].endswith("Warning" if warn else "Problem"),
              name + ": Warning conditions use --npd-warnings, Problem ones do not")
        seen.add((layer, warn))
    check(seen == {(l, w) for l in layers for w in (False, True)},
          where + ": a problem and a warning rule for every layer")
    return cfg


def rule_args_run(cfg):
    """The rules' arguments parse: pointed at a closed port they answer exit 2 naming the URL."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    closed = s.getsockname()[1]
    s.close()
    for r in cfg["rules"]:
        a = [x.replace("127.0.0.1:9835", "127.0.0.1:%d" % closed) for x in r["args"]]
        p = subprocess.run([BIN] + a, capture_output=True, text=True, timeout=30)
        check(p.returncode == 2 and p.stdout.startswith("unknown: ") and
              ("127.0.0.1:%d" % closed) in p.stdout,
              "rule %s with no watch: exit %d, %r" % (r["condition"], p.returncode, p.stdout))
    print("ok: %d NPD rules run: exit 2 naming the unreachable watch" % len(cfg["rules"]))


def watch_flags_parse(watch):
    """The watch container's flags are the binary's: `gpudoctor help watch` lists each."""
    p = subprocess.run([BIN, "help", "watch"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "gpudoctor help watch")
    for a in watch["args"][1:]:
        name = a.split("=")[0]
        if name.startswith("--"):
            check(re.search(r"(^|\s)%s\b" % re.escape(name), p.stdout) is not None,
                  "watch flag %s is one `gpudoctor help watch` lists" % name)


def main():
    paths = sorted(glob.glob(os.path.join(K8S, "*.yaml")))
    check(paths, "manifests in deploy/k8s")
    kubectl_round_trip(paths)
    docs = [d for p in paths for d in yaml.safe_load_all(open(p)) if d]
    watch = fields(docs)
    cms = [d for d in docs if d["kind"] == "ConfigMap"]
    if cms:
        rule_args_run(json.loads(cms[0]["data"]["gpudoctor-plugin.json"]))
    if watch:
        watch_flags_parse(watch)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("PASS: %d manifests, %d objects" % (len(paths), len(docs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
