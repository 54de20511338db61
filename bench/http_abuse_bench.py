#!/usr/bin/env python3
"""`gpudoctor watch` HTTP under hostile clients before authentication, while it is scraped.

Usage: bench/http_abuse_bench.py BUILD_DIR [--binary PATH] [--seconds 60] [--slow 100]
                                 [--huge 100] [--no-prometheus]

A `watch --interval 1` on the fake NVML (8 H100s) with a bearer token. After 10 s of warm-up
(scrapes only), HOSTILE connections from loopback for SECONDS:
  slow  SLOW connections that send "GET /metrics HTTP/1.1\\r\\nX-Slow: " and then one byte every
        200 ms, forever (slow-loris); reopened whenever the daemon closes them;
  huge  HUGE connections that send 16 KiB of header lines every 50 ms, never ending the head;
        reopened whenever the daemon closes them.
Meanwhile a scraper with the token GETs /metrics and /healthz once a second on a fresh
connection (5 s timeout), and a real Prometheus (if installed; credentials file, 1 s scrape
interval) scrapes /metrics. Prints: scrapes answered / asked, their latency (p50, p99, max),
Prometheus' up samples (sum/count over the load), hostile reconnects, and the daemon's RSS
before the load, its maximum and after it. --binary runs another build of gpudoctor (for a
before/after comparison). Target: every scrape answered, RSS growth < 5 MiB."""
import argparse, http.client, json, os, selectors, socket, statistics, subprocess, tempfile
import threading, time, urllib.parse, urllib.request

ap = argparse.ArgumentParser()
ap.add_argument("build")
ap.add_argument("--binary")
ap.add_argument("--seconds", type=float, default=60)
ap.add_argument("--slow", type=int, default=100)
ap.add_argument("--huge", type=int, default=100)
ap.add_argument("--no-prometheus", action="store_true")
args = ap.parse_args()
build = os.path.abspath(args.build)
binary = os.path.abspath(args.binary) if args.binary else f"{build}/gpudoctor"
src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fixtures = f"{src}/tests/fixtures"
tmp = tempfile.mkdtemp(prefix="http_abuse_bench_")
TOKEN = "bench-token-0123456789"


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


def rss_kb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"): return int(line.split()[1])
    return 0


def get(port, path, token=None, timeout=5):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
        r = c.getresponse(); r.read(); return r.status
    finally:
        c.close()


def start_watch(port):
    with open(f"{tmp}/token", "w") as f: f.write(TOKEN + "\n")
    os.chmod(f"{tmp}/token", 0o600)
    with open(f"{tmp}/gpudoctor.toml", "w") as f:
        f.write(f'[watch]\nlisten = "127.0.0.1:{port}"\ntoken_file = "{tmp}/token"\n')
    env = dict(os.environ, FAKE_NVML_SCENARIO=f"{fixtures}/nvml/h100_busy.scenario")
    p = subprocess.Popen([binary, "watch", "--interval", "1", "--no-db",
                          "--config", f"{tmp}/gpudoctor.toml",
                          "--nvml-lib", f"{build}/tests/fake_nvml/libnvidia-ml.so.1",
                          "--skip-probes", "reachability",
                          "--path.sysfs", f"{fixtures}/sysfs/hgx_h100"],
                         env=env, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/watch.log", "w"))
    for _ in range(300):
        try:
            if get(port, "/healthz", timeout=1) == 200: return p
        except OSError: pass
        time.sleep(0.1)
    raise SystemExit("watch did not come up: " + open(f"{tmp}/watch.log").read())


def start_prometheus(port):
    prom = "/usr/bin/prometheus"
    if args.no_prometheus or not os.path.exists(prom): return None, 0
    pport = free_port()
    with open(f"{tmp}/prometheus.yml", "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
                "  - job_name: gpudoctor\n    authorization:\n"
                f"      credentials_file: {tmp}/token\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
    p = subprocess.Popen([prom, f"--config.file={tmp}/prometheus.yml",
                          f"--storage.tsdb.path={tmp}/tsdb",
                          f"--web.listen-address=127.0.0.1:{pport}"],
                         stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/prometheus.log", "w"))
    return p, pport


def prom_query(pport, q):
    url = f"http://127.0.0.1:{pport}/api/v1/query?" + urllib.parse.urlencode({"query": q})
    try:
        j = json.load(urllib.request.urlopen(url, timeout=5))
        return float(j["data"]["result"][0]["value"][1]) if j["data"]["result"] else 0.0
    except Exception:
        return float("nan")


class Hostiles(threading.Thread):
    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.stop, self.reconnects = port, False, 0
        self.huge = b"".join(b"X-Huge-%d: %s\r\n" % (i, b"h" * 1000) for i in range(16))

    def open(self):
        s = socket.socket(); s.setblocking(False)
        try: s.connect(("127.0.0.1", self.port))
        except BlockingIOError: pass
        self.reconnects += 1
        return [s, False]

    def run(self):
        conns = [self.open() for _ in range(args.slow + args.huge)]
        last_slow = 0
        while not self.stop:
            now = time.monotonic()
            slow_due = now - last_slow >= 0.2
            if slow_due: last_slow = now
            for i, c in enumerate(conns):
                s, started = c
                slow = i < args.slow
                try:
                    if not started:
                        s.send(b"GET /metrics HTTP/1.1\r\nX-Slow: "); c[1] = True
                    elif slow and slow_due: s.send(b"a")
                    elif not slow: s.send(self.huge)
                    try:
                        if s.recv(65536) == b"": raise ConnectionError()
                    except BlockingIOError: pass
                except BlockingIOError: pass
                except OSError:
                    s.close(); conns[i] = self.open()
            time.sleep(0.05)
        for s, _ in conns: s.close()


def pct(xs, q):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


port = free_port()
watch = start_watch(port)
prom, pport = start_prometheus(port)
try:
    lat, asked, answered = [], 0, 0

    def scrape():
        global asked, answered
        for path, tok in (("/metrics", TOKEN), ("/healthz", None)):
            asked += 1; t0 = time.monotonic()
            try:
                if get(port, path, tok) == 200: answered += 1
            except OSError: pass
            lat.append(time.monotonic() - t0)

    for _ in range(10): scrape(); time.sleep(1)  # warm-up: buffers and Prometheus
    rss_before = rss_kb(watch.pid)
    lat.clear(); asked = answered = 0
    h = Hostiles(port); h.start()
    t_start = time.time(); rss_max = rss_before
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        t0 = time.monotonic(); scrape(); rss_max = max(rss_max, rss_kb(watch.pid))
        time.sleep(max(0, 1 - (time.monotonic() - t0)))
    h.stop = True; h.join()
    time.sleep(2)
    rss_after = rss_kb(watch.pid)
    print(f"binary {binary}")
    print(f"hostile: {args.slow} slow-loris + {args.huge} huge-header connections for "
          f"{args.seconds:.0f} s, {h.reconnects} connections opened in all")
    print(f"scrapes answered {answered}/{asked}; latency p50 {pct(lat, .5)*1000:.1f} ms, "
          f"p99 {pct(lat, .99)*1000:.1f} ms, max {max(lat)*1000:.1f} ms")
    if prom:
        rng = f"{int(time.time() - t_start)}s"
        up_sum = prom_query(pport, f'sum_over_time(up{{job="gpudoctor"}}[{rng}])')
        up_cnt = prom_query(pport, f'count_over_time(up{{job="gpudoctor"}}[{rng}])')
        dur = prom_query(pport, f'max_over_time(scrape_duration_seconds{{job="gpudoctor"}}[{rng}])')
        print(f"prometheus: up {up_sum:.0f}/{up_cnt:.0f} scrapes, max scrape duration "
              f"{dur*1000:.1f} ms")
    print(f"RSS before {rss_before/1024:.1f} MiB, max {rss_max/1024:.1f} MiB, "
          f"after {rss_after/1024:.1f} MiB (growth {(rss_after-rss_before)/1024:+.1f} MiB)")
finally:
    for p in (prom, watch):
        if p: p.terminate(); p.wait(10)
