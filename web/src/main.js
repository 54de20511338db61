// The dashboard: polls the daemon and re-renders. Status every 2 s, findings timeline and the
// plot every 10 s; a 401 shows the token form.
import "./style.css";
import { AuthRequired, getJson, setToken } from "./api.js";
import { h } from "./format.js";
import { JobPanel } from "./job_panel.js";
import { BandwidthPanel } from "./bandwidth.js";
import { HistoryPlot, loadSeriesChoices, rangeButtons } from "./plot.js";
import { renderFindings, renderGpus, renderHeader, renderHost, renderLayers, renderTimeline } from "./view.js";
import { WhyPanel } from "./why_panel.js";

const STATUS_MS = 2000;
const SLOW_MS = 10000;

const $ = (id) => document.getElementById(id);
// The first metric shown; any other the daemon lists can be chosen.
const DEFAULT_METRIC = "gpudoctor_gpu_temperature_celsius";
const state = { metric: DEFAULT_METRIC, gpu: "0", range: "1h", gpuCount: -1, series: [] };
const plot = new HistoryPlot($("plot"), $("plot-note"));
const jobs = new JobPanel($("job-plot"), $("job-note"));
const why = new WhyPanel($("why"));
// The job the why panel explains: the first job seen unless one was chosen; "" = none (GPU
// utilisation).
const whyState = { job: null, jobs: [] };
const bandwidth = new BandwidthPanel($("bandwidth"));
let bandwidthLoadedAt = 0;
const BANDWIDTH_MS = 300000;  // 5-minute averages: reloading more often shows nothing new

function showError(e) {
  const box = $("error");
  if (e instanceof AuthRequired) {
    $("token-form").hidden = false;
    box.hidden = false;
    box.textContent = "Access denied: enter the API token (the first line of the file named by [watch] token_file).";
    return;
  }
  box.hidden = !e;
  box.textContent = e ? `Cannot reach gpudoctor: ${e.message}` : "";
}

async function pollStatus() {
  try {
    const status = await getJson("/api/v1/status");
    if (!status) throw new Error("/api/v1/status is not served here");
    renderHeader(status);
    renderLayers(status);
    renderGpus(status);
    renderFindings(status);
    renderHost(status);
    updateGpuChoices((status.gpus || []).map((g) => g.index));
    $("token-form").hidden = true;
    showError(null);
  } catch (e) {
    showError(e);
    $("verdict").dataset.sev = "none";
    $("verdict").textContent = "no data";
  }
}

async function pollSlow() {
  try {
    renderTimeline(await getJson("/api/v1/findings"));
    await loadPlot();
    await loadJobs();
    if (Date.now() - bandwidthLoadedAt > BANDWIDTH_MS) {
      bandwidthLoadedAt = Date.now();
      await bandwidth.load();
    }
  } catch (e) {
    showError(e);
  }
}

async function loadPlot() {
  if (!state.series.length) await loadChoices();
  const gpuMetric = state.series.find((m) => m.name === state.metric)?.perGpu ?? true;
  $("plot-gpu").disabled = !gpuMetric;
  await plot.load(state.metric, gpuMetric ? state.gpu : null, state.range);
}

// The job panel (same range as the history plot), then the why panel for the chosen job.
async function loadJobs() {
  const names = await jobs.load(state.range);
  if (names.join("\n") !== whyState.jobs.join("\n")) {
    whyState.jobs = names;
    if (whyState.job == null || (whyState.job && !names.includes(whyState.job))) whyState.job = names[0] ?? "";
    const options = names.map((n) => h("option", { value: n, selected: n === whyState.job }, n));
    options.push(h("option", { value: "", selected: whyState.job === "" }, "(no job: GPU utilisation)"));
    $("why-job").replaceChildren(...options);
  }
  // Without a job the panel waits for "Explain" (judging GPU utilisation alone is a choice).
  if (whyState.job) await why.load(whyState.job);
  else if (!why.root.dataset.state) why.idle();
}

function updateGpuChoices(indexes) {
  if (indexes.length === state.gpuCount) return;
  state.gpuCount = indexes.length;
  const sel = $("plot-gpu");
  if (!indexes.map(String).includes(state.gpu) && indexes.length) state.gpu = String(indexes[0]);
  const options = indexes.map((i) => h("option", { value: i, selected: String(i) === state.gpu }, `GPU ${i}`));
  // No GPU seen now: the plot keeps the last one's history, and the choice says so.
  if (!indexes.length) options.push(h("option", { value: state.gpu, selected: true }, `GPU ${state.gpu} (not seen now)`));
  sel.replaceChildren(...options);
}

async function loadChoices() {
  state.series = await loadSeriesChoices();
  if (!state.series.some((m) => m.name === state.metric) && state.series.length) state.metric = state.series[0].name;
  $("metric").replaceChildren(...state.series.map((m) => h("option", { value: m.name, selected: m.name === state.metric }, m.label)));
}

function setupControls() {
  $("metric").addEventListener("change", (e) => {
    state.metric = e.target.value;
    loadPlot().catch(showError);
  });
  $("plot-gpu").addEventListener("change", (e) => {
    state.gpu = e.target.value;
    loadPlot().catch(showError);
  });
  rangeButtons($("ranges"), (r) => {
    state.range = r;
    loadPlot().catch(showError);
    jobs.load(state.range).catch(showError);
  }, state.range);
  $("why-job").addEventListener("change", (e) => {
    whyState.job = e.target.value;
    if (whyState.job) why.load(whyState.job).catch(showError);
    else why.idle();
  });
  $("why-run").addEventListener("click", () => why.load(whyState.job || null).catch(showError));
  $("token-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    setToken($("token").value.trim());
    await pollStatus();
    await pollSlow();
  });
  // Theme: the system's choice unless the user picked one here.
  const saved = localStorage.getItem("gpudoctor.theme");
  if (saved) document.documentElement.dataset.theme = saved;
  $("theme").addEventListener("click", () => {
    const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === "dark"
      : matchMedia("(prefers-color-scheme: dark)").matches;
    document.documentElement.dataset.theme = dark ? "light" : "dark";
    localStorage.setItem("gpudoctor.theme", document.documentElement.dataset.theme);
    loadPlot().catch(showError);
    jobs.load(state.range).catch(showError);
  });
  window.addEventListener("resize", () => {
    plot.resize();
    jobs.resize();
    bandwidth.resize();
  });
  // The plot's axis colours come from the theme: redraw when the system switches dark/light.
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => loadPlot().catch(showError));
}

setupControls();
pollStatus().then(pollSlow);
setInterval(pollStatus, STATUS_MS);
setInterval(pollSlow, SLOW_MS);
