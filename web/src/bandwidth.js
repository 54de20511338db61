// Bandwidth panel: GET /api/v1/report/bandwidth?since=RANGE -> `gpudoctor report bandwidth
// --json` with each NIC's 5-minute averages ("points": [[t, tx_mbps, rx_mbps], ...]). Draws the
// chosen NIC's sent and received Mb/s with the plan and the 95th percentile (billing) as lines,
// and the advice underneath. The figures come from the daemon; nothing is computed here.
import uPlot from "uplot";
import { AuthRequired, getJson } from "./api.js";
import { h, num } from "./format.js";

export const BANDWIDTH_RANGES = ["24h", "7d", "30d"];

export class BandwidthPanel {
  constructor(root) {
    this.root = root;
    this.range = "7d";
    this.nic = "";
    this.plot = null;
    this.doc = null;
  }

  // A failure stays in this panel (the rest of the page keeps working); a 401 goes up to the
  // page's token form.
  async load() {
    try {
      this.doc = await getJson(`/api/v1/report/bandwidth?${new URLSearchParams({ since: this.range })}`);
      this.render();
    } catch (e) {
      if (e instanceof AuthRequired) throw e;
      if (this.plot) this.plot.destroy();
      this.plot = null;
      this.root.replaceChildren(h("p", { class: "muted" }, `Bandwidth report unavailable: ${e.message}`));
    }
  }

  render() {
    const doc = this.doc;
    const nics = (doc && doc.nics) || [];
    const controls = h(
      "div",
      { class: "controls" },
      h(
        "label",
        null,
        "NIC ",
        h(
          "select",
          { onchange: (e) => { this.nic = e.target.value; this.render(); } },
          ...nics.map((n) => h("option", { value: n.nic, selected: n.nic === this.nic }, n.nic)),
        ),
      ),
      h(
        "span",
        { role: "group", "aria-label": "Bandwidth range" },
        ...BANDWIDTH_RANGES.map((r) =>
          h("button", { type: "button", "aria-pressed": r === this.range ? "true" : "false", onclick: () => { this.range = r; this.load().catch(() => {}); } }, r),
        ),
      ),
    );
    if (this.plot) this.plot.destroy();
    this.plot = null;
    if (!nics.length) {
      const why = doc == null ? "This daemon keeps no history (--no-db)." : doc.note || "No NIC traffic stored yet.";
      this.root.replaceChildren(controls, h("p", { class: "muted" }, why));
      return;
    }
    const n = nics.find((x) => x.nic === this.nic) || nics[0];
    this.nic = n.nic;
    const chart = h("div", { class: "plot", "data-points": (n.points || []).length });
    const dir = (d, name) =>
      `${name}: 95th percentile ${num(d.p95_mbps, 1)} Mb/s, peak ${num(d.peak_mbps, 1)} Mb/s` +
      (d.above_80_pct != null ? `, above 80% of the plan ${num(d.above_80_pct, 1)}% of the time` : "") +
      (d.top && d.top.length ? `; while full: ${d.top.map((s) => `${s.process} ${num(s.share_pct, 0)}%`).join(", ")}` : "");
    this.root.replaceChildren(
      controls,
      chart,
      h("p", { class: "muted" }, n.plan_mbps ? `Plan ${num(n.plan_mbps, 0)} Mb/s (${n.plan_source}); 5-minute averages, 95th percentile billing.` : "No plan known: give [network] plan_mbps."),
      h("p", null, dir(n.tx, "Sent")),
      h("p", null, dir(n.rx, "Received")),
      h("p", { "data-advice": n.advice.kind }, `Advice: ${n.advice.text}`),
    );
    this.draw(chart, n);
  }

  draw(chart, n) {
    const pts = n.points || [];
    const xs = pts.map((p) => p[0]);
    const flat = (v) => xs.map(() => v);
    const style = getComputedStyle(document.documentElement);
    const axis = style.getPropertyValue("--fg").trim() || "#222";
    const accent = style.getPropertyValue("--accent").trim() || "#3b6fd6";
    const p95 = Math.max(n.tx.p95_mbps || 0, n.rx.p95_mbps || 0);
    this.plot = new uPlot(
      {
        width: Math.max(280, this.root.clientWidth || 600),
        height: 240,
        // The whole asked-for range, also when only a few periods are stored.
        scales: { x: { time: true, range: () => [Date.parse(this.doc.since) / 1000, Date.parse(this.doc.until) / 1000] } },
        axes: [{ stroke: axis }, { stroke: axis, size: 70, label: "Mb/s" }],
        series: [
          {},
          { label: "sent", stroke: accent, width: 2 },
          { label: "received", stroke: "#2a9d8f", width: 1 },
          { label: "plan", stroke: "#d62828", dash: [6, 4] },
          { label: "95th pct", stroke: "#e9a23b", dash: [2, 3] },
        ],
      },
      [xs, pts.map((p) => p[1]), pts.map((p) => p[2]), flat(n.plan_mbps || null), flat(p95)],
      chart,
    );
  }

  resize() {
    if (this.plot) this.plot.setSize({ width: Math.max(280, this.root.clientWidth), height: 240 });
  }
}
