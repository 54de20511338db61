// History plot: GET /api/v1/history?metric=NAME&gpu=N&since=RANGE -> {"metric","gpu","points":[[t,v],...]}
// drawn with uPlot. The daemon downsamples long ranges (rollups beyond 24 h).
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { getJson } from "./api.js";
import { h } from "./format.js";

export const RANGES = ["15m", "1h", "6h", "24h", "7d"];

// The metrics the history can plot come from the daemon (GET /api/v1/series, generated from the
// metric table), never from a list typed here: [{metric, help, unit, per_gpu}].
export async function loadSeriesChoices() {
  const list = await getJson("/api/v1/series");
  return (list || []).map((m) => ({ name: m.metric, label: m.unit ? `${m.help} (${m.unit})` : m.help, perGpu: m.per_gpu }));
}

export class HistoryPlot {
  constructor(root, note) {
    this.root = root;
    this.note = note;
    this.plot = null;
    this.series = [];
  }

  async load(metric, gpu, range) {
    const q = new URLSearchParams({ metric, since: range });
    if (gpu != null && gpu !== "") q.set("gpu", gpu);
    const doc = await getJson(`/api/v1/history?${q}`);
    const one = Array.isArray(doc) ? doc[0] : doc;
    const points = (one && one.points) || [];
    this.draw(metric, points);
    this.note.textContent = doc == null ? "This daemon keeps no history (--no-db)." : points.length ? `${points.length} points` : "No data in this range yet.";
  }

  draw(label, points) {
    const xs = points.map((p) => p[0]);
    const ys = points.map((p) => p[1]);
    const width = Math.max(280, this.root.clientWidth || 600);
    const style = getComputedStyle(document.documentElement);
    const stroke = style.getPropertyValue("--accent").trim() || "#3b6fd6";
    const axis = style.getPropertyValue("--fg").trim() || "#222";
    if (this.plot) this.plot.destroy();
    this.root.replaceChildren();
    this.plot = new uPlot(
      {
        width,
        height: 240,
        scales: { x: { time: true } },
        axes: [{ stroke: axis }, { stroke: axis, size: 70 }],
        series: [{}, { label, stroke, width: 2, points: { show: points.length < 60 } }],
      },
      [xs, ys],
      this.root,
    );
    this.root.dataset.points = points.length;
  }

  resize() {
    if (this.plot) this.plot.setSize({ width: Math.max(280, this.root.clientWidth), height: 240 });
  }
}

export function rangeButtons(container, onPick, initial) {
  const buttons = RANGES.map((r) =>
    h("button", { type: "button", "data-range": r, "aria-pressed": r === initial ? "true" : "false", onclick: () => pick(r) }, r),
  );
  function pick(r) {
    for (const b of buttons) b.setAttribute("aria-pressed", b.dataset.range === r ? "true" : "false");
    onPick(r);
  }
  container.replaceChildren(...buttons);
}
