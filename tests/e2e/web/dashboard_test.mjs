// Browser test of the dashboard: playwright-core drives Debian's chromium (headless; no browser
// download) against the page the build embeds, fed by the real `gpudoctor check` on the fake NVML.
// Checks: the token is required when set; no console errors once in; 8 GPU cards; a thermal fault
// written into the scenario mid-run turns GPU 3's card crit within seconds (and no other card);
// a plot draws with data points; layouts with 0, 1 and 16 GPUs, a phone and dark mode.
// Screenshots go to BUILD/test-artifacts/. Exit 77 (skipped) without chromium or web/node_modules.
// Usage: node dashboard_test.mjs SOURCE_DIR BUILD_DIR
import assert from "node:assert/strict";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { startFixtureServer } from "./fixture_server.mjs";

const [src, build] = process.argv.slice(2).map((p) => path.resolve(p));
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
if (!existsSync(chromium)) {
  console.log(`SKIP: ${chromium} is missing (apt-get install chromium; scripts/install-deps.sh)`);
  process.exit(77);
}
if (!existsSync(path.join(src, "web/node_modules/playwright-core"))) {
  console.log("SKIP: web/node_modules is missing (the build runs npm ci in web/)");
  process.exit(77);
}
if (!existsSync(path.join(build, "web-dist/index.html"))) {
  console.log("FAIL: build/web-dist/index.html is missing: the dashboard was not built");
  process.exit(1);
}
const { chromium: pw } = createRequire(path.join(src, "web/package.json"))("playwright-core");

const artifacts = path.join(build, "test-artifacts");
mkdirSync(artifacts, { recursive: true });
const tmp = mkdtempSync(path.join(os.tmpdir(), "gpudoctor-web-"));
const scenario = path.join(tmp, "now.scenario");
const base = `include=${path.join(src, "tests/fixtures/nvml/h100_busy.scenario")}\n`;
writeFileSync(scenario, base);
const TOKEN = "s3cret-token";
const server = await startFixtureServer({ src, build, scenario, token: TOKEN });
const browser = await pw.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox"] });
const deadline = (ms) => ({ timeout: ms });

try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: "light" });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));

  // 1. The token is required: no data and a token form without it.
  await page.goto(server.url + "/");
  await page.locator("#token-form").waitFor({ state: "visible", ...deadline(5000) });
  assert.equal(await page.locator("article.card").count(), 0, "no GPU card without the token");
  assert.match(await page.locator("#error").innerText(), /token/i);
  assert.ok(errors.every((e) => /401/.test(e)), `only the expected 401s before the token: ${errors}`);
  errors.length = 0;
  await page.fill("#token", TOKEN);
  await page.click("#token-form button");

  // 2. Eight GPU cards, no console errors.
  await page.waitForFunction(() => document.querySelectorAll("article.card").length === 8, null, deadline(10000));
  assert.equal(await page.locator("#token-form").isVisible(), false);
  assert.equal(await page.locator('article.card[data-gpu="3"]').getAttribute("data-sev"), "ok");
  const layers = await page.locator("#layers li").evaluateAll((ls) => ls.map((l) => `${l.dataset.layer}:${l.dataset.sev}`));
  assert.equal(layers[0], "network:crit", `worst layer first: ${layers}`); // eth2 has no link in the fixture
  await page.screenshot({ path: path.join(artifacts, "dashboard-8gpu-light.png"), fullPage: true });

  // 3. A fault injected mid-run shows on GPU 3's card within a few seconds.
  const injected = Date.now();
  appendFileSync(scenario, "gpu.3.temp=88\ngpu.3.reasons=0x40\n");
  await page.waitForSelector('article.card[data-gpu="3"][data-sev="crit"]', deadline(8000));
  console.log(`fault visible after ${Date.now() - injected} ms`);
  const card3 = await page.locator('article.card[data-gpu="3"]').innerText();
  assert.match(card3, /gpu\.thermal/);
  assert.match(card3, /88 \/ 87 °C/);
  assert.match(card3, /HW thermal/);
  const sevs = await page.locator("article.card").evaluateAll((cs) => cs.map((c) => c.dataset.sev));
  assert.deepEqual(sevs.map((s, i) => (i === 3 ? "x" : s)), ["ok", "ok", "ok", "x", "ok", "ok", "ok", "ok"]);
  assert.equal(await page.locator('#layers li[data-layer="hardware"]').getAttribute("data-sev"), "crit");
  assert.match(await page.locator('#findings details[data-id="gpu.thermal"]').innerText(), /Check cooling/);

  // 4. A plot draws with data points (GPU 3 temperature, last 15 minutes).
  await page.selectOption("#plot-gpu", "3");
  await page.click('#ranges button[data-range="15m"]');
  await page.waitForFunction(() => Number(document.querySelector("#plot")?.dataset.points) >= 2, null, deadline(10000));
  assert.ok(await page.locator("#plot canvas").count() >= 1, "uPlot draws on a canvas");
  // The timeline (GET /api/v1/findings, refreshed every 10 s) lists the opened finding.
  await page.waitForFunction(() => /opened.*gpu\.thermal \(GPU 3\)/s.test(document.querySelector("#timeline").innerText) && /reboot/.test(document.querySelector("#timeline").innerText), null, deadline(15000));
  await page.screenshot({ path: path.join(artifacts, "dashboard-fault-light.png"), fullPage: true });
  assert.deepEqual(errors, [], "no console errors with the token");

  // 5. Dark mode and a phone.
  await page.emulateMedia({ colorScheme: "dark" });
  await page.screenshot({ path: path.join(artifacts, "dashboard-fault-dark.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no horizontal scrolling on a phone (overflow ${overflow}px)`);
  await page.screenshot({ path: path.join(artifacts, "dashboard-phone-dark.png"), fullPage: true });
  await page.setViewportSize({ width: 1440, height: 900 });

  // 6. 16, 1 and 0 GPUs.
  for (const [count, file] of [[16, "dashboard-16gpu.png"], [1, "dashboard-1gpu.png"], [0, "dashboard-0gpu.png"]]) {
    writeFileSync(scenario, `${base}device_count=${count}\n`);
    await page.waitForFunction((n) => document.querySelectorAll("article.card").length === n && document.querySelector("#gpus").dataset.count === String(n), count, deadline(10000));
    if (count === 0) assert.match(await page.locator("#gpus").innerText(), /No GPU seen/);
    await page.screenshot({ path: path.join(artifacts, file), fullPage: true });
  }
  assert.deepEqual(errors, [], "no console errors");
  console.log(`PASS: dashboard (screenshots in ${artifacts})`);
} finally {
  await browser.close();
  server.close();
  rmSync(tmp, { recursive: true, force: true });
}
