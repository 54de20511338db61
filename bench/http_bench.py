#!/usr/bin/env python3
"""Latency, load and scrape cost of `gpudoctor watch` over HTTP on the fake NVML (issue 10).

Usage: bench/http_bench.py BUILD_DIR [--only latency,load,scrape] [--load-seconds 60]
                           [--rate 1000] [--trials 5]

latency  A fault (GPU 3 overheating: tests/fixtures/nvml/thermal.scenario) is written into the
         live scenario file of a `watch --interval 1` whose config opens gpu.thermal at once
         (for_s = 0). Measured per trial: time until /metrics carries
         gpudoctor_finding_active{id="gpu.thermal",...} (polled every 20 ms) and until a local
         webhook receiver (python http.server on 127.0.0.1) gets the firing payload. Target <= 2 s.
load     RATE requests/s for SECONDS against /metrics and /api/v1/status alternately
         (BUILD_DIR/bench/http_load: 4 client threads, keep-alive, paced open-loop): errors
         (non-200 or no answer), latency percentiles, and the daemon's RSS sampled every 5 s
         (start, end, max). Target: 0 errors, flat RSS.
scrape   CPU per scrape, bytes and latency of gpudoctor /metrics side by side with Debian's
         prometheus-node-exporter (if installed), each daemon's idle CPU subtracted.
Prints one line per figure."""
import argparse, http.client, http.server, os, socket, statistics, subprocess, sys, tempfile
import threading, time

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--only", default="latency,load,scrape")
ap.add_argument("--load-seconds", type=float, default=60)
ap.add_argument("--rate", type=float, default=1000)
ap.add_argument("--trials", type=int, default=5)
args = ap.parse_args()
build = os.path.abspath(args.build)
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = f"{src}/tests/fixtures"
tmp = tempfile.mkdtemp(prefix="http_bench_")
hz = os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"): return int(line.split()[1])
    return 0


def set_scenario(base):
    live = f"{tmp}/live.scenario"
    with open(live + ".tmp", "w") as f: f.write(f"include={fixtures}/nvml/{base}\n")
    os.rename(live + ".tmp", live)


def get(port, path, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path); r = c.getresponse(); return r.status, r.read()
    finally:
        c.close()


def start_watch(port, extra_config=""):
    with open(f"{tmp}/gpudoctor.toml", "w") as f:
        f.write(f'[watch]\nlisten = "127.0.0.1:{port}"\n\n'
                '[finding."gpu.thermal"]\nfor_s = 0\nresolve_after_s = 1\n' + extra_config)
    env = dict(os.environ, FAKE_NVML_SCENARIO=f"{tmp}/live.scenario")
    p = subprocess.Popen([f"{build}/gpudoctor", "watch", "--interval", "1", "--no-db",
                          "--config", f"{tmp}/gpudoctor.toml",
                          "--nvml-lib", f"{build}/tests/fake_nvml/libnvidia-ml.so.1",
                          "--skip-probes", "reachability",
                          "--path.sysfs", f"{fixtures}/sysfs/hgx_h100"],
                         env=env, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/watch.log", "w"))
    for _ in range(300):
        try:
            if get(port, "/healthz", 1)[0] == 200: return p
        except OSError: pass
        time.sleep(0.1)
    p.kill(); sys.exit("watch did not become healthy: " + open(f"{tmp}/watch.log").read())


def stop(p):
    p.terminate()
    try: p.wait(10)
    except subprocess.TimeoutExpired: p.kill()


def bench_latency():
    hooks = []  # (arrival time, body)

    class Rx(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            hooks.append((time.monotonic(), body))
            self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()

        def log_message(self, *a): pass

    rx = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Rx)
    threading.Thread(target=rx.serve_forever, daemon=True).start()
    port = free_port()
    set_scenario("h100_busy.scenario")
    p = start_watch(port, f'\n[[notify.webhook]]\nurl = "http://127.0.0.1:{rx.server_port}/hook"\n'
                          'min_severity = "warn"\n')
    needle = b'gpudoctor_finding_active{id="gpu.thermal"'
    to_metrics, to_hook = [], []
    try:
        time.sleep(2)
        for _ in range(args.trials):
            n_hooks = len(hooks)
            t0 = time.monotonic(); set_scenario("thermal.scenario")
            t_metrics = None
            while time.monotonic() - t0 < 10:
                if needle in get(port, "/metrics")[1]:
                    t_metrics = time.monotonic() - t0; break
                time.sleep(0.02)
            t_hook = None
            while time.monotonic() - t0 < 10:
                fired = [t for t, b in hooks[n_hooks:] if b'"firing"' in b and b"gpu.thermal" in b]
                if fired: t_hook = fired[0] - t0; break
                time.sleep(0.02)
            to_metrics.append(t_metrics); to_hook.append(t_hook)
            set_scenario("h100_busy.scenario")
            t1 = time.monotonic()
            while time.monotonic() - t1 < 15 and needle in get(port, "/metrics")[1]:
                time.sleep(0.1)
            time.sleep(1.5)  # the resolved webhook goes out; the next trial starts clean
    finally:
        stop(p); rx.shutdown()

    def fmt(xs):
        ok = [x for x in xs if x is not None]
        if not ok: return "never"
        return (f"min {min(ok):.2f} s median {statistics.median(ok):.2f} s max {max(ok):.2f} s"
                f" ({len(ok)}/{len(xs)} arrived)")
    print(f"latency fault->/metrics (interval 1 s, for_s 0, {args.trials} trials): {fmt(to_metrics)}")
    print(f"latency fault->webhook  (interval 1 s, for_s 0, {args.trials} trials): {fmt(to_hook)}")


def bench_load():
    load = f"{build}/bench/http_load"
    if not os.path.exists(load): sys.exit(f"{load} missing: cmake --build {build} --target http_load")
    port = free_port()
    set_scenario("h100_busy.scenario")
    p = start_watch(port)
    samples = []
    try:
        time.sleep(2)
        r0 = rss_kb(p.pid); c0 = cpu_s(p.pid); t0 = time.monotonic()
        gen = subprocess.Popen([load, str(port), str(args.rate), str(args.load_seconds),
                                "/metrics,/api/v1/status", "4"], stdout=subprocess.PIPE, text=True)
        while gen.poll() is None:
            samples.append((round(time.monotonic() - t0), rss_kb(p.pid)))
            try: gen.wait(5)
            except subprocess.TimeoutExpired: pass
        out = gen.stdout.read().strip()
        el = time.monotonic() - t0
        r1 = rss_kb(p.pid); cpu = cpu_s(p.pid) - c0
    finally:
        stop(p)
    print(f"load /metrics + /api/v1/status alternately at {args.rate:.0f}/s for "
          f"{args.load_seconds:.0f} s (4 keep-alive clients): {out.replace(chr(10), '; ')}")
    print(f"load daemon CPU {cpu:.1f} s over {el:.0f} s ({100 * cpu / el:.0f}% of one core, ticks "
          f"included)")
    print(f"load RSS KiB start {r0} end {r1} max {max([s for _, s in samples] + [r1])} "
          f"(end vs start {100 * (r1 - r0) / max(r0, 1):+.1f}%); every 5 s: "
          + " ".join(f"{t}s:{s}" for t, s in samples))


def scrape_cost(name, pid, port, n=300):
    time.sleep(1)
    i0 = cpu_s(pid); time.sleep(3); idle_per_s = (cpu_s(pid) - i0) / 3
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    body = b""
    c0 = cpu_s(pid); t0 = time.monotonic()
    for _ in range(n):
        conn.request("GET", "/metrics"); r = conn.getresponse(); body = r.read()
        if r.getheader("Connection", "").lower() == "close":
            conn.close(); conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    el = time.monotonic() - t0
    cpu = max(0.0, cpu_s(pid) - c0 - idle_per_s * el)
    conn.close()
    series = sum(1 for line in body.split(b"\n") if line and not line.startswith(b"#"))
    print(f"scrape {name}: {len(body)} bytes, {series} series, {1000 * cpu / n:.2f} ms CPU per "
          f"scrape (idle {1000 * idle_per_s:.1f} ms/s subtracted), {1000 * el / n:.2f} ms latency")


def bench_scrape():
    port = free_port()
    set_scenario("h100_busy.scenario")
    p = start_watch(port)
    try:
        scrape_cost("gpudoctor watch (8 fake GPUs)", p.pid, port)
    finally:
        stop(p)
    ne = "/usr/bin/prometheus-node-exporter"
    if not os.path.exists(ne):
        print("scrape node_exporter: not installed (apt-get install prometheus-node-exporter)")
        return
    nport = free_port()
    q = subprocess.Popen([ne, f"--web.listen-address=127.0.0.1:{nport}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                if get(nport, "/metrics", 2)[0] == 200: break
            except OSError: time.sleep(0.1)
        scrape_cost("node_exporter (defaults)", q.pid, nport)
    finally:
        stop(q)


for what in args.only.split(","):
    {"latency": bench_latency, "load": bench_load, "scrape": bench_scrape}[what]()
