// Renders the status document (the `check --json` contract) into the page. Each render replaces
// a section's children; nothing here fetches.
import { LAYERS, SEV_LABEL, bytes, h, num, rank, sevOfRank, throttleNames, worst } from "./format.js";

export function renderHeader(status) {
  document.getElementById("host").textContent = status.host || "";
  const v = document.getElementById("verdict");
  const sev = status.verdict === "crit" || status.verdict === "warn" ? status.verdict : "ok";
  v.dataset.sev = sev;
  v.textContent = SEV_LABEL[sev];
  document.getElementById("updated").textContent = `updated ${status.time || ""}`;
  document.title = `${sev === "ok" ? "" : sev.toUpperCase() + " · "}gpudoctor ${status.host || ""}`;
}

export function renderLayers(status) {
  const findings = status.findings || [];
  const layers = LAYERS.map((name, order) => {
    const fs = findings.filter((f) => f.layer === name);
    return { name, order, sev: worst(fs), count: fs.filter((f) => rank(f.severity) >= 2).length };
  });
  layers.sort((a, b) => rank(b.sev) - rank(a.sev) || a.order - b.order);
  document.getElementById("layers").replaceChildren(
    ...layers.map((l) =>
      h(
        "li",
        { class: `layer sev-${l.sev}`, "data-layer": l.name, "data-sev": l.sev },
        h("span", { class: "layer-name" }, l.name),
        h("span", { class: "badge", "data-sev": l.sev }, SEV_LABEL[l.sev]),
        l.count ? h("span", { class: "muted" }, ` ${l.count} finding${l.count > 1 ? "s" : ""}`) : null,
      ),
    ),
  );
}

// A labelled bar: value against its limit.
function meter(label, value, limit, text, opts = {}) {
  const pct = value != null && limit ? Math.max(0, Math.min(100, (100 * value) / limit)) : null;
  const level = pct == null ? "" : pct >= (opts.crit ?? 101) ? "crit" : pct >= (opts.warn ?? 101) ? "warn" : "";
  return h(
    "div",
    { class: "meter" },
    h("span", { class: "meter-label" }, label),
    h(
      "span",
      {
        class: `bar ${level}`,
        role: "meter",
        "aria-label": label,
        "aria-valuemin": 0,
        "aria-valuemax": 100,
        "aria-valuenow": pct == null ? null : Math.round(pct),
      },
      h("span", { class: "fill", style: `width:${pct ?? 0}%` }),
    ),
    h("span", { class: "meter-text" }, text),
  );
}

function gpuCard(g, findings) {
  const sev = worst(findings);
  const reasons = throttleNames((g.counters_second || {}).clock_event_reasons ?? (g.counters_first || {}).clock_event_reasons);
  const pcieOk = g.pcie_gen === g.pcie_max_gen && g.pcie_width === g.pcie_max_width;
  const remap = g.remap_failed ? "remap FAILED" : g.remap_pending ? "remap pending" : "no remap pending";
  const ecc = g.ecc_enabled === false ? "ECC off" : g.ecc_enabled ? "ECC on" : "ECC –";
  return h(
    "article",
    { class: `card sev-${sev}`, "data-gpu": g.index, "data-sev": sev, "aria-label": `GPU ${g.index}` },
    h(
      "header",
      {},
      h("h3", {}, `GPU ${g.index}`),
      h("span", { class: "badge", "data-sev": sev }, SEV_LABEL[sev]),
      h("span", { class: "muted small" }, `${g.name || ""} · ${g.pci_bus_id || ""}`),
    ),
    meter("Temp", g.temp_c, g.temp_slowdown_c, `${num(g.temp_c)} / ${num(g.temp_slowdown_c)} °C`, { warn: 94, crit: 100 }),
    meter(
      "Power",
      g.power_mw,
      g.power_limit_mw,
      `${num(g.power_mw / 1000)} / ${num(g.power_limit_mw / 1000)} W`,
      { warn: 98 },
    ),
    meter("Util", g.util_gpu_pct, 100, `${num(g.util_gpu_pct)} %`),
    meter("Memory", g.memory_used_bytes, g.memory_total_bytes, `${bytes(g.memory_used_bytes)} / ${bytes(g.memory_total_bytes)}`, { warn: 95 }),
    meter("SM clock", g.sm_clock_mhz, g.max_sm_clock_mhz, `${num(g.sm_clock_mhz)} / ${num(g.max_sm_clock_mhz)} MHz`),
    h(
      "p",
      { class: "facts" },
      h("span", { class: pcieOk ? "" : "flag" }, `PCIe gen ${num(g.pcie_gen)}/${num(g.pcie_max_gen)} x${num(g.pcie_width)}/${num(g.pcie_max_width)}`),
      " · ",
      h("span", { class: g.remap_failed || g.remap_pending ? "flag" : "" }, `${ecc}, ${remap}`),
      " · ",
      h("span", { class: reasons && reasons.length ? "flag" : "" }, reasons && reasons.length ? `throttle: ${reasons.join(", ")}` : "no throttle"),
    ),
    findings.length
      ? h(
          "ul",
          { class: "card-findings" },
          findings.map((f) => h("li", { "data-sev": f.severity }, `${SEV_LABEL[f.severity] || f.severity} ${f.id}: ${f.summary}`)),
        )
      : null,
  );
}

// What is open: the lifecycle's open episodes (status.open_findings, from watch) with this
// tick's findings that have no episode yet; a plain `check --json` document has only findings.
// An Xid that needs a reset stays open after the log went quiet, so it stays on its card.
export function openFindings(status) {
  const episodes = status.open_findings || [];
  const out = episodes.map((e) => ({ ...e.finding, episode: e }));
  const key = (f) => `${f.id}|${(f.gpu && (f.gpu.serial || f.gpu.pci_bus_id)) || ""}|${f.subject || ""}`;
  const seen = new Set(out.map(key));
  for (const f of status.findings || []) if (!seen.has(key(f))) out.push(f);
  return out;
}

function age(s) {
  if (s == null) return "";
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

export function renderGpus(status) {
  const gpus = status.gpus || [];
  const byGpu = new Map();
  for (const f of openFindings(status)) {
    const i = f.gpu && f.gpu.index;
    if (i == null) continue;
    if (!byGpu.has(i)) byGpu.set(i, []);
    byGpu.get(i).push(f);
  }
  document.getElementById("gpu-count").textContent = `(${gpus.length})`;
  const grid = document.getElementById("gpus");
  grid.dataset.count = gpus.length;
  if (!gpus.length) {
    const state = (status.nvml && status.nvml.state) || "no NVML data";
    grid.replaceChildren(h("p", { class: "muted" }, `No GPU seen (${state}).`));
    return;
  }
  grid.replaceChildren(...gpus.map((g) => gpuCard(g, byGpu.get(g.index) || [])));
}

function evidenceList(ev) {
  const entries = Object.entries(ev || {});
  if (!entries.length) return null;
  return h("dl", { class: "evidence" }, entries.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))]));
}

export function renderFindings(status) {
  const fs = openFindings(status).sort((a, b) => rank(b.severity) - rank(a.severity));
  document.getElementById("finding-count").textContent = `(${fs.length})`;
  const box = document.getElementById("findings");
  if (!fs.length) {
    box.replaceChildren(h("p", { class: "ok-text" }, `${SEV_LABEL.ok} nothing open: every layer looks healthy`));
    return;
  }
  box.replaceChildren(
    ...fs.map((f) =>
      h(
        "details",
        { class: `finding sev-${f.severity}`, "data-id": f.id, open: rank(f.severity) >= 3 },
        h(
          "summary",
          {},
          h("span", { class: "badge", "data-sev": f.severity }, SEV_LABEL[f.severity] || f.severity),
          ` ${f.summary} `,
          h("code", {}, f.id),
          h("span", { class: "muted" }, ` ${f.layer}`),
          f.action && f.action !== "none" ? h("span", { class: "action", "data-action": f.action }, ` → ${f.action}`) : null,
          f.episode
            ? h(
                "span",
                { class: "muted episode" },
                ` · open ${age(f.episode.open_s)}${f.episode.acked ? " · acknowledged" : ""}${f.episode.escalated ? " · escalated" : ""}`,
              )
            : h("span", { class: "muted episode" }, " · this tick"),
        ),
        evidenceList(f.evidence),
        f.next_steps && f.next_steps.length ? h("ol", { class: "steps" }, f.next_steps.map((s) => h("li", {}, s))) : null,
      ),
    ),
  );
}

export function renderHost(status) {
  const r = status.resources || {};
  const cpu = r.cpu || {};
  const mem = r.memory || {};
  const psi = r.pressure || {};
  const used = mem.total_bytes != null && mem.available_bytes != null ? mem.total_bytes - mem.available_bytes : null;
  const rows = [
    ["CPU busy", cpu.busy_pct != null ? `${num(cpu.busy_pct)} % (iowait ${num(cpu.iowait_pct)} %)` : "–"],
    ["Load", cpu.load1 != null ? `${cpu.load1} ${cpu.load5} ${cpu.load15} on ${cpu.logical_cores} cores` : "–"],
    ["Memory", `${bytes(used)} used of ${bytes(mem.total_bytes)}`],
    ["Swap", mem.swap_total_bytes != null ? `${bytes(mem.swap_total_bytes - mem.swap_free_bytes)} of ${bytes(mem.swap_total_bytes)}` : "–"],
    ["OOM kills", num(mem.oom_kill_count)],
  ];
  for (const k of ["cpu", "memory", "io"]) {
    const some = psi[k] && psi[k].some;
    if (some) rows.push([`Pressure ${k}`, `${num(some.avg10_pct, 1)} % (avg10, some)`]);
  }
  document.getElementById("host-panel").replaceChildren(...rows.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));

  const nics = ((status.network || {}).nics || []).filter((n) => n.physical);
  document.getElementById("nics").replaceChildren(
    h("caption", {}, "NICs"),
    h("tr", {}, ["NIC", "State", "Speed", "RX", "TX"].map((t) => h("th", { scope: "col" }, t))),
    ...nics.map((n) =>
      h(
        "tr",
        { "data-sev": n.operstate === "up" ? "ok" : "warn" },
        h("td", {}, n.name),
        h("td", {}, n.operstate === "up" ? "✔ up" : `▲ ${n.operstate || "?"}`),
        h("td", {}, n.speed_mbps ? `${n.speed_mbps / 1000} Gb/s` : "–"),
        h("td", {}, `${bytes(n.rx_bytes_per_s)}/s`),
        h("td", {}, `${bytes(n.tx_bytes_per_s)}/s`),
      ),
    ),
  );
  const targets = (status.network || {}).reachability || [];
  document.getElementById("targets").replaceChildren(
    h("caption", {}, "Targets"),
    h("tr", {}, ["Target", "Group", "RTT median", "p95", "Loss"].map((t) => h("th", { scope: "col" }, t))),
    ...targets.map((t) =>
      h(
        "tr",
        { "data-sev": t.loss_pct > 0 ? "warn" : "ok" },
        h("td", {}, t.name),
        h("td", {}, t.group || ""),
        h("td", {}, t.rtt_median_ms != null ? `${num(t.rtt_median_ms, 2)} ms` : "–"),
        h("td", {}, t.rtt_p95_ms != null ? `${num(t.rtt_p95_ms, 2)} ms` : "–"),
        h("td", {}, t.loss_pct != null ? `${num(t.loss_pct)} %` : t.error || "–"),
      ),
    ),
  );
}

// The timeline from GET /api/v1/findings: {"findings":[TrackedFindingToJson...]} with "finding",
// "opened"/"resolved" (unix seconds or null), "resolution", "reboots"; optional "events"
// (HistoryEventToJson: "time_ms", "kind", "detail"), e.g. reboots and Xids.
export function renderTimeline(doc) {
  const list = document.getElementById("timeline");
  const items = [];
  const secs = (v) => (v ? v * 1000 : 0);
  for (const t of (doc && doc.findings) || []) {
    const f = t.finding || {};
    const gpu = f.gpu && f.gpu.index != null ? ` (GPU ${f.gpu.index})` : "";
    const text = `${f.id}${gpu}: ${f.summary}`;
    const opened = secs(t.opened) || secs(t.first_seen);
    if (opened) items.push({ ms: opened, kind: t.opened ? "opened" : "pending", sev: f.severity, text });
    if (t.resolved) {
      const how = t.resolution === "cleared_by_reboot" ? "cleared by reboot" : "resolved";
      items.push({ ms: secs(t.resolved), kind: how, sev: "ok", text });
    }
    if (t.reboots > 0 || t.escalated) {
      const note = t.escalated ? "came back after reboots: inspect the hardware" : `${t.reboots} reboot(s) while open`;
      items.push({ ms: secs(t.last_seen) || opened, kind: t.escalated ? "escalated" : "reboots", sev: t.escalated ? "crit" : "info", text: `${text} — ${note}` });
    }
  }
  for (const e of (doc && doc.events) || []) {
    items.push({ ms: e.time_ms || secs(e.time), kind: e.kind, sev: "info", text: `${e.gpu != null ? `GPU ${e.gpu}: ` : ""}${e.detail || ""}` });
  }
  items.sort((a, b) => b.ms - a.ms);
  if (!doc) {
    list.replaceChildren(h("li", { class: "muted" }, "No history on this daemon (started with --no-db?)."));
    return;
  }
  if (!items.length) {
    list.replaceChildren(h("li", { class: "muted" }, "Nothing has happened yet."));
    return;
  }
  list.replaceChildren(
    ...items.slice(0, 200).map((i) =>
      h(
        "li",
        { "data-sev": i.sev },
        h("time", { datetime: new Date(i.ms).toISOString() }, new Date(i.ms).toLocaleString()),
        h("span", { class: "badge", "data-sev": i.sev }, i.kind),
        ` ${i.text}`,
      ),
    ),
  );
}

export { sevOfRank };
