// Browser test of the dashboard's job and "why" panels, served by the real `gpudoctor watch` on the
// fake NVML (one daemon, --interval 0.3, a history database in a temporary directory). The daemon
// tails a job's training log (tqdm "s/it" lines, the [[job]] preset "tqdm"); GPU 3 overheats (HW
// thermal slowdown) while the job's step time grows x12, as in tests/e2e/job_why_e2e_test.cc.
// Checks the API calls the panels make (GET /api/v1/history?metric=gpudoctor_job_step_seconds: one
// series labelled job=train; GET /api/v1/why?job=train: gpu.thermal on GPU 3 ranked first; an
// unknown job: 404 naming the stored ones), then the page: the job panel draws the step times on a
// canvas, the why panel shows the onset, the ranked list with evidence and the next step, and
// switches to "no job" on request; no console errors. Screenshot in BUILD/test-artifacts/.
// Exit 77 (skipped) without chromium or web/node_modules.
// Usage: node job_why_panels_test.mjs SOURCE_DIR BUILD_DIR
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { replaceFile, startWebTest } from "./web_test_env.mjs";

const { src, build, chromium, pw, elapsed, artifacts, tmp } = startWebTest("gpudoctor-web-job-");
const fixture = (f) => path.join(src, "tests/fixtures/nvml", f);
const scenario = path.join(tmp, "live.scenario");
const writeScenario = (text) => replaceFile(scenario, text); // atomic: never half a file
writeScenario(`include=${fixture("h100_busy.scenario")}\n`);
const trainLog = path.join(tmp, "train.log");
writeFileSync(trainLog, "");
const config = path.join(tmp, "gpudoctor.toml");
writeFileSync(
  config,
  `[finding."gpu.thermal"]\nfor_s = 0\n[finding."gpu.hw_slowdown"]\nfor_s = 0\n\n` +
    `[[job]]\nname = "train"\nlog = "${trainLog}"\npreset = "tqdm"\nbaseline_steps = 5\n`,
);

const proc = spawn(
  path.join(build, "gpudoctor"),
  ["watch", "--config", config, "--listen", "127.0.0.1:0", "--interval", "0.3", "--probes", "nvml,job",
   "--nvml-lib", path.join(build, "tests/fake_nvml/libnvidia-ml.so.1"), "--db", path.join(tmp, "history.db")],
  { env: { ...process.env, FAKE_NVML_SCENARIO: scenario }, stdio: ["ignore", "ignore", "pipe"] },
);
let log = "";
proc.stderr.setEncoding("utf8");
proc.stderr.on("data", (d) => (log += d));
async function until(what, cond, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await sleep(100);
  }
  throw new Error(`${what}: not within ${ms / 1000} s`);
}

let browser = null;
try {
  await until("watch listening", () => /http: listening on 127\.0\.0\.1:\d+/.test(log), 20000);
  const url = `http://127.0.0.1:${/http: listening on 127\.0\.0\.1:(\d+)/.exec(log)[1]}`;
  const get = async (p) => {
    const r = await fetch(url + p);
    return { status: r.status, body: await r.json() };
  };
  console.log(`watch at ${url} (${elapsed()})`);

  // The job: a step a second for 30 lines, GPU 3 overheats, then 12 s a step (tqdm redraws with \r).
  let step = 0;
  const bar = (s) => ` ${String(Math.floor(step / 10)).padStart(2)}%|#         | ${step}/1000 [00:10<20:00, ${s.toFixed(2)}s/it]\r`;
  const steps = async (s, n) => {
    for (let i = 0; i < n; ++i) {
      ++step;
      appendFileSync(trainLog, bar(s));
      await sleep(300);
    }
  };
  await steps(1.0, 30);
  writeScenario(`include=${fixture("thermal.scenario")}\ngpu.3.clock_sm=1275\ngpu.3.clock_gfx=1275\n`);
  await until("gpu.thermal opened", () => log.includes("opened gpu.thermal"), 30000);
  await steps(12.0, 30);
  console.log(`job log written (${elapsed()})`);

  // 1. The API calls the panels make.
  const historyPath = "/api/v1/history?metric=gpudoctor_job_step_seconds&since=1h";
  await until("30 stored step times", async () => {
    const h = await get(historyPath);
    return h.status === 200 && !Array.isArray(h.body) && h.body.points?.length >= 30;
  }, 30000);
  const hist = (await get(historyPath)).body;
  assert.equal(hist.labels, "job=train", JSON.stringify(hist).slice(0, 300));
  assert.equal(hist.gpu, null);
  assert.ok(hist.points.some(([, v]) => v >= 10) && hist.points.some(([, v]) => v <= 1.5), JSON.stringify(hist.points));
  const why = await get("/api/v1/why?job=train&since=1h");
  assert.equal(why.status, 200, JSON.stringify(why.body));
  assert.equal(why.body.source, "job");
  assert.ok(why.body.onset && why.body.onset.factor >= 5, JSON.stringify(why.body.onset));
  assert.equal(why.body.causes[0].id, "gpu.thermal", JSON.stringify(why.body.causes, null, 1));
  assert.equal(why.body.causes[0].gpu, 3);
  const unknown = await get("/api/v1/why?job=nope");
  assert.equal(unknown.status, 404);
  assert.match(unknown.body.error, /stored: train/);
  assert.equal((await get("/api/v1/why?job=..%2Fx")).status, 400);
  console.log(`API: history and why (${elapsed()})`);

  // 2. The page: job panel and why panel.
  browser = await pw.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox"] });
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 1000 } })).newPage();
  const errors = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(url + "/");
  assert.equal(await page.locator("#jobs-h").innerText(), "Jobs: step time");
  assert.equal(await page.locator("#why-h").innerText(), "Why is it slow?");
  await page.waitForFunction(() => Number(document.querySelector("#job-plot")?.dataset.points) >= 30, null, { timeout: 15000 });
  assert.equal(await page.locator("#job-plot").getAttribute("data-jobs"), "1");
  assert.ok((await page.locator("#job-plot canvas").count()) >= 1, "uPlot draws the step times on a canvas");
  assert.match(await page.locator("#job-plot .u-legend").innerText(), /train/);
  assert.match(await page.locator("#job-note").innerText(), /1 job\(s\), \d+ step time\(s\)/);
  assert.deepEqual(await page.locator("#why-job option").allInnerTexts(), ["train", "(no job: GPU utilisation)"]);
  await page.waitForSelector('#why[data-state="onset"]', { timeout: 15000 });
  const whyText = await page.locator("#why").innerText();
  assert.match(whyText, /job train slowdown ×\d+(\.\d)?/, whyText);
  const first = page.locator("#why .why-causes > li").first();
  assert.equal(await first.getAttribute("data-id"), "gpu.thermal");
  const firstText = await first.innerText();
  assert.match(firstText, /gpu\.thermal GPU 3/, firstText);
  assert.match(firstText, /before the onset|after the onset/, firstText);
  assert.ok((await first.locator(".why-evidence li").count()) >= 1, `evidence listed: ${firstText}`);
  assert.match(firstText, /Next: \S/, firstText);
  await page.screenshot({ path: path.join(artifacts, "dashboard-job-why.png"), fullPage: true });
  assert.deepEqual(errors, [], "no console errors");

  // 3. No job: the panel waits for Explain, then asks without ?job= (from GPU utilisation).
  await page.selectOption("#why-job", "");
  await page.waitForSelector('#why[data-state="idle"]', { timeout: 5000 });
  const asked = page.waitForRequest((r) => r.url().includes("/api/v1/why") && !r.url().includes("job="), { timeout: 5000 });
  await page.click("#why-run");
  await asked;
  await page.waitForFunction(() => ["onset", "no-change", "not-found"].includes(document.querySelector("#why").dataset.state), null, { timeout: 10000 });
  console.log(`PASS: job and why panels (${elapsed()})`);
} catch (e) {
  console.log(`watch log:\n${log.split("\n").slice(-30).join("\n")}`);
  throw e;
} finally {
  if (browser) await browser.close();
  proc.kill("SIGTERM");
  await new Promise((r) => (proc.exitCode !== null ? r() : (proc.on("exit", r), setTimeout(r, 5000))));
  rmSync(tmp, { recursive: true, force: true });
}
