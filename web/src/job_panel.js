// The job panel: each [[job]]'s step time (seconds per step) from the history store,
// GET /api/v1/history?metric=gpudoctor_job_step_seconds&since=RANGE -> one series per job, each
// labelled "job=NAME" ({"metric","gpu":null,"labels","points":[[t,v],...]}, or an array of them),
// drawn in one uPlot on a shared time axis. Lists the jobs it saw so the "why" panel can pick one.
import uPlot from "uplot";
import { getJson } from "./api.js";
import { h } from "./format.js";

export const JOB_METRIC = "gpudoctor_job_step_seconds";
// Okabe-Ito colours after the accent: distinguishable with common colour-vision deficiencies.
const COLOURS = ["#e69f00", "#009e73", "#cc79a7", "#d55e00", "#f0e442", "#000000"];

// The job's name from a series' labels ("job=train" or "job=train,other=x"); null without one.
export function jobOfLabels(labels) {
  for (const part of String(labels || "").split(",")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq) === "job") return part.slice(eq + 1);
  }
  return null;
}

// The history document as [{job, points}], jobs sorted by name; [] for none.
export function jobSeries(doc) {
  const list = doc == null ? [] : Array.isArray(doc) ? doc : [doc];
  return list
    .map((s) => ({ job: jobOfLabels(s.labels), points: (s.points || []).filter((p) => p[1] != null) }))
    .filter((s) => s.job != null)
    .sort((a, b) => a.job.localeCompare(b.job));
}

export class JobPanel {
  constructor(root, note) {
    this.root = root;
    this.note = note;
    this.plot = null;
    this.jobs = [];
  }

  // Loads and draws; resolves with the job names seen (sorted).
  async load(range) {
    const q = new URLSearchParams({ metric: JOB_METRIC, since: range });
    const doc = await getJson(`/api/v1/history?${q}`);
    const series = jobSeries(doc);
    this.jobs = series.map((s) => s.job);
    this.draw(series);
    const points = series.reduce((n, s) => n + s.points.length, 0);
    this.root.dataset.jobs = series.length;
    this.root.dataset.points = points;
    this.note.textContent =
      doc == null
        ? "This daemon keeps no history (--no-db)."
        : !series.length
          ? "No job step times in this range: add a [[job]] table (log, push or metric) to gpudoctor.toml."
          : `${series.length} job(s), ${points} step time(s)`;
    return this.jobs;
  }

  draw(series) {
    if (this.plot) this.plot.destroy();
    this.plot = null;
    this.root.replaceChildren();
    if (!series.length) {
      this.root.append(h("p", { class: "muted" }, "No job to plot."));
      return;
    }
    const data = uPlot.join(series.map((s) => [s.points.map((p) => p[0]), s.points.map((p) => p[1])]));
    const style = getComputedStyle(document.documentElement);
    const axis = style.getPropertyValue("--fg").trim() || "#222";
    const accent = style.getPropertyValue("--accent").trim() || "#0072b2";
    const colours = [accent, ...COLOURS];
    const few = data[0].length < 60;
    this.plot = new uPlot(
      {
        width: Math.max(280, this.root.clientWidth || 600),
        height: 220,
        scales: { x: { time: true } },
        axes: [{ stroke: axis }, { stroke: axis, size: 70, label: "s / step" }],
        series: [
          {},
          ...series.map((s, i) => ({ label: s.job, stroke: colours[i % colours.length], width: 2, spanGaps: true, points: { show: few } })),
        ],
      },
      data,
      this.root,
    );
  }

  resize() {
    if (this.plot) this.plot.setSize({ width: Math.max(280, this.root.clientWidth), height: 220 });
  }
}
