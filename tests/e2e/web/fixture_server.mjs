// A stand-in for `gpudoctor watch`'s HTTP side while it is not on main: serves the dashboard files
// that the build embeds (build/web-dist) and answers /api/v1/status by running the real
// `gpudoctor check --json` on the fake NVML (so a fault written into the scenario shows up like
// it would in watch). /api/v1/history and /api/v1/findings are kept in memory from those samples,
// in the shapes of SeriesToJson and TrackedFindingToJson (src/watch/history_json.cc). With a token, /api/* needs
// "Authorization: Bearer TOKEN" (401 otherwise).
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css" };

export async function startFixtureServer({ src, build, scenario, token }) {
  const dist = path.join(build, "web-dist");
  const samples = []; // {t, status}
  const tracked = new Map(); // key -> {key, state, opened_ms, resolved_ms, last}
  let cached = null;
  let inflight = null;
  const started = Date.now();

  function runCheck() {
    const host = path.join(src, "tests/fixtures/hosts/healthy");
    const args = [
      "check", "--json", "--probes", "nvml,cpu,memory,pressure,nic",
      "--nvml-lib", path.join(build, "tests/fake_nvml/libnvidia-ml.so.1"),
      "--path.procfs", path.join(host, "proc"), "--path.rootfs", path.join(host, "root"),
      "--path.sysfs", path.join(src, "tests/fixtures/net/sysfs_t0"),
    ];
    return new Promise((resolve, reject) => {
      execFile(path.join(build, "gpudoctor"), args, { env: { ...process.env, FAKE_NVML_SCENARIO: scenario }, timeout: 20000 },
        (err, stdout) => {
          try {
            resolve(JSON.parse(stdout));
          } catch (e) {
            reject(err || e);
          }
        });
    });
  }

  function record(status) {
    const now = Date.now();
    samples.push({ t: now, status });
    const seen = new Set();
    for (const f of status.findings || []) {
      const key = `${f.id}|${(f.gpu && f.gpu.serial) || ""}|${f.subject || ""}`;
      seen.add(key);
      const t = tracked.get(key);
      const sec = Math.floor(now / 1000);
      if (!t || t.state === "resolved") {
        tracked.set(key, { key, state: "open", finding: f, first_seen: sec, opened: sec, last_seen: sec, resolved: null, resolution: null, reboots: 0, escalated: false });
      } else Object.assign(t, { finding: f, last_seen: sec });
    }
    for (const t of tracked.values()) {
      if (t.state === "open" && !seen.has(t.key)) Object.assign(t, { state: "resolved", resolved: Math.floor(now / 1000), resolution: "cleared" });
    }
  }

  async function status() {
    if (cached && Date.now() - cached.t < 900) return cached.status;
    if (!inflight) {
      inflight = runCheck().then((s) => {
        cached = { t: Date.now(), status: s };
        record(s);
        return s;
      }).finally(() => (inflight = null));
    }
    return inflight;
  }

  const METRIC = {
    gpudoctor_gpu_temperature_celsius: (g) => g.temp_c,
    gpudoctor_gpu_power_watts: (g) => g.power_mw / 1000,
    gpudoctor_gpu_utilization_ratio: (g) => g.util_gpu_pct / 100,
    gpudoctor_gpu_memory_used_bytes: (g) => g.memory_used_bytes,
  };

  function history(q) {
    const metric = q.get("metric");
    const gpu = q.get("gpu") == null ? null : Number(q.get("gpu"));
    const f = METRIC[metric];
    const points = [];
    for (const s of samples) {
      const g = (s.status.gpus || []).find((x) => x.index === gpu);
      if (f && g && f(g) != null) points.push([Math.floor(s.t / 1000), f(g)]);
    }
    return { metric, gpu, points };
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    const send = (code, type, body) => {
      res.writeHead(code, { "Content-Type": type, "Cache-Control": "no-store" });
      res.end(body);
    };
    try {
      if (url.pathname.startsWith("/api/")) {
        if (token && req.headers.authorization !== `Bearer ${token}`) return send(401, "application/json", '{"error":"token required"}');
        if (url.pathname === "/api/v1/status") return send(200, "application/json", JSON.stringify(await status()));
        if (url.pathname === "/api/v1/findings") return send(200, "application/json", JSON.stringify({ findings: [...tracked.values()], events: [{ time: Math.floor(started / 1000), time_ms: started, kind: "reboot", gpu: null, detail: "boot id 1f2e.. -> 9a8b.." }] }));
        if (url.pathname === "/api/v1/history") return send(200, "application/json", JSON.stringify(history(url.searchParams)));
        return send(404, "application/json", '{"error":"not found"}');
      }
      const rel = url.pathname === "/" ? "index.html" : path.normalize(url.pathname).replace(/^\/+/, "");
      if (rel.includes("..")) return send(404, "text/plain", "not found");
      const body = await readFile(path.join(dist, rel));
      return send(200, TYPES[path.extname(rel)] || "application/octet-stream", body);
    } catch (e) {
      return send(e.code === "ENOENT" ? 404 : 500, "text/plain", String(e.message || e));
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}
