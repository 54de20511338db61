// Browser test of the dashboard served by the real `gpudoctor watch` (one daemon, --interval 1,
// a history database in a temporary directory) on the fake NVML and fixture procfs/sysfs trees
// copied into a temporary directory so the test can change them while the daemon runs.
// playwright-core drives Debian's chromium (headless; no browser download).
// Checks: a token file readable by group or others is refused (exit 3, clear message); the API
// needs the token ([watch] token_file) and the page asks for it; no console errors once in;
// 8 GPU cards; host and network panels with data (NIC rates from changing sysfs counters); a
// thermal fault written into the scenario mid-run turns GPU 3's card crit within seconds (and no
// other card); a plot draws points from the real history store; the timeline shows the fault and
// a reboot (boot_id changed in the fixture procfs); dark mode and a phone; the same daemon then
// follows the GPU count to 16, 1 and 0 (NvmlSession re-enumeration).
// Screenshots go to BUILD/test-artifacts/. Exit 77 (skipped) without chromium or web/node_modules.
// Usage: node dashboard_test.mjs SOURCE_DIR BUILD_DIR
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { replaceFile, startWebTest } from "./web_test_env.mjs";

const { src, build, chromium, pw, elapsed, artifacts, tmp } = startWebTest("gpudoctor-web-");
const gpudoctor = path.join(build, "gpudoctor");

// Fixture trees the test changes while watch runs. Changes are atomic (replaceFile: write, then
// rename), so the daemon never reads half a file.
const scenario = path.join(tmp, "now.scenario");
const base = `include=${path.join(src, "tests/fixtures/nvml/h100_busy.scenario")}\n`;
writeFileSync(scenario, base);
const host = path.join(src, "tests/fixtures/hosts/healthy");
const procfs = path.join(tmp, "proc");
cpSync(path.join(host, "proc"), procfs, { recursive: true });
mkdirSync(path.join(procfs, "sys/kernel/random"), { recursive: true });
const bootId = path.join(procfs, "sys/kernel/random/boot_id");
writeFileSync(bootId, "1f2e3d4c-0000-4000-8000-000000000001\n");
const sysfs = path.join(tmp, "sys");
cpSync(path.join(src, "tests/fixtures/net/sysfs_t0"), sysfs, { recursive: true });
// A live host: CPU jiffies (/proc/stat, 30 % busy) and eth1's receive counter grow every 250 ms.
const procStat = path.join(procfs, "stat");
const rxBytes = path.join(sysfs, "class/net/eth1/statistics/rx_bytes");
function hostActivity() {
  const stat = readFileSync(procStat, "utf8").split("\n");
  const f = stat[0].split(/\s+/);
  f[1] = String(Number(f[1]) + 60); // user
  f[4] = String(Number(f[4]) + 140); // idle
  stat[0] = f.join(" ");
  replaceFile(procStat, stat.join("\n"));
  replaceFile(rxBytes, `${Number(readFileSync(rxBytes, "utf8")) + 250e6}\n`);
}

const TOKEN = "s3cret-token";
const tokenFile = path.join(tmp, "token");
writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
chmodSync(tokenFile, 0o600);
// A network target for the reachability probe (TCP connect): a listener of this test.
const target = net.createServer((c) => c.destroy());
await new Promise((r) => target.listen(0, "127.0.0.1", r));
const targetName = `127.0.0.1:${target.address().port}`;
function config(tokenPath) {
  const file = path.join(tmp, `gpudoctor-${path.basename(tokenPath)}.toml`);
  // gpu.thermal opens at once (default: after 60 s) so the timeline shows it within the test.
  writeFileSync(file, `[watch]\ntoken_file = "${tokenPath}"\n\n[network]\ntargets = ["${targetName}"]\n\n[finding."gpu.thermal"]\nfor_s = 0\n`);
  return file;
}
const watchArgs = (cfg, extra) => [
  "watch", "--config", cfg, "--listen", "127.0.0.1:0", "--interval", "1",
  "--probes", "nvml,cpu,memory,pressure,nic,reachability",
  "--nvml-lib", path.join(build, "tests/fake_nvml/libnvidia-ml.so.1"),
  "--path.procfs", procfs, "--path.sysfs", sysfs, "--path.rootfs", path.join(host, "root"),
  ...extra,
];
const env = { ...process.env, FAKE_NVML_SCENARIO: scenario };

// 1. A token file that group or others can read is refused: exit 3 and a message saying why.
for (const mode of [0o644, 0o640]) {
  const open = path.join(tmp, `token-${mode.toString(8)}`);
  writeFileSync(open, `${TOKEN}\n`);
  chmodSync(open, mode);
  const r = spawnSync(gpudoctor, watchArgs(config(open), ["--no-db"]), { env, encoding: "utf8", timeout: 20000 });
  assert.equal(r.status, 3, `watch with a ${mode.toString(8)} token file: exit ${r.status}, stderr ${r.stderr}`);
  assert.match(r.stderr, /token file .*readable by group or others; chmod 600/, r.stderr);
}

// Starts the real daemon and resolves with its port once it listens.
function startWatch() {
  const proc = spawn(gpudoctor, watchArgs(config(tokenFile), ["--db", path.join(tmp, "history.db")]), { env, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`watch did not listen within 20 s:\n${log}`)), 20000);
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (d) => {
      log += d;
      const m = /http: listening on 127\.0\.0\.1:(\d+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve({ proc, url: `http://127.0.0.1:${m[1]}`, log: () => log });
      }
    });
    proc.on("exit", (code) => reject(new Error(`watch exited ${code}:\n${log}`)));
  });
}

const activity = setInterval(hostActivity, 250);
const watch = await startWatch().catch((e) => {
  console.log(`FAIL: ${e.message}`);
  process.exit(1);
});
console.log(`watch listening at ${watch.url} (${elapsed()})`);
const browser = await pw.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox"] });
const deadline = (ms) => ({ timeout: ms });

try {
  // 2. The API needs the token; /healthz does not.
  const get = (p, token) => fetch(watch.url + p, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  assert.equal((await get("/api/v1/status")).status, 401);
  assert.equal((await get("/api/v1/status", "wrong")).status, 401);
  assert.equal((await get("/")).status, 200, "the page itself loads without the token");

  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: "light" });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  page.on("pageerror", (e) => errors.push(String(e)));

  // The page asks for the token: no data and a token form without it.
  await page.goto(watch.url + "/");
  await page.locator("#token-form").waitFor({ state: "visible", ...deadline(5000) });
  assert.equal(await page.locator("article.card").count(), 0, "no GPU card without the token");
  assert.match(await page.locator("#error").innerText(), /token_file/);
  assert.ok(errors.every((e) => /401/.test(e)), `only the expected 401s before the token: ${errors}`);
  errors.length = 0;
  await page.fill("#token", TOKEN);
  await page.click("#token-form button");

  // 3. Eight GPU cards, host and network panels with data, no console errors.
  await page.waitForFunction(() => document.querySelectorAll("article.card").length === 8, null, deadline(10000));
  assert.equal(await page.locator("#token-form").isVisible(), false);
  assert.equal(await page.locator('article.card[data-gpu="3"]').getAttribute("data-sev"), "ok");
  assert.match(await page.locator('article.card[data-gpu="3"]').innerText(), /62 \/ 87 °C/);
  // eth2 has no link in the fixture: network is crit once the first tick with the NIC's finding
  // is served (the cards can come a tick earlier).
  await page
    .waitForFunction(() => document.querySelector("#layers li")?.dataset.sev === "crit", null, deadline(10000))
    .catch(() => {});
  const layers = await page.locator("#layers li").evaluateAll((ls) => ls.map((l) => `${l.dataset.layer}:${l.dataset.sev}`));
  assert.equal(layers[0], "network:crit", `worst layer first: ${layers}`);
  // Rates need two ticks: CPU busy from /proc/stat, eth1's receive rate from its counter.
  await page.waitForFunction(() => /CPU busy\s+[1-9]\d*(\.\d+)? %/.test(document.querySelector("#host-panel").innerText), null, deadline(10000));
  const hostPanel = await page.locator("#host-panel").innerText();
  assert.match(hostPanel, /Memory\s+[\d.]+ \w+ used of [\d.]+ \w+/, hostPanel);
  const nics = await page.locator("#nics tr[data-sev]").evaluateAll((rs) => rs.map((r) => r.innerText));
  assert.ok(nics.some((n) => /eth1.*up.*Gb\/s/s.test(n)), `eth1 listed: ${nics}`);
  assert.ok(nics.some((n) => /eth2/.test(n)), `eth2 listed: ${nics}`);
  const targets = await page.locator("#targets tr[data-sev]").evaluateAll((rs) => rs.map((r) => r.innerText));
  assert.ok(targets.some((t) => t.includes(targetName) && /[\d.]+ ms.*0 %/s.test(t)), `target with RTT, no loss: ${targets}`);
  // A reboot: the kernel's boot id changes (watch records a "reboot" event in its history).
  replaceFile(bootId, "1f2e3d4c-0000-4000-8000-000000000002\n");
  await page.waitForFunction(() => [...document.querySelectorAll("#nics tr")].some((r) => /eth1/.test(r.innerText) && /^[1-9][\d.]* [KMG]i?B\/s$/.test(r.cells[3].innerText)), null, deadline(10000));
  await page.screenshot({ path: path.join(artifacts, "dashboard-8gpu-light.png"), fullPage: true });
  console.log(`8 GPUs, panels with data (${elapsed()})`);

  // 4. A fault injected mid-run shows on GPU 3's card within a few seconds.
  const injected = Date.now();
  replaceFile(scenario, `${base}gpu.3.temp=88\ngpu.3.reasons=0x40\n`);
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

  // 5. A plot draws with data points (GPU 3 temperature, last 15 minutes, from the history store)
  // and the 88 °C reading is among them.
  await page.selectOption("#plot-gpu", "3");
  await page.click('#ranges button[data-range="15m"]');
  await page.waitForFunction(() => Number(document.querySelector("#plot")?.dataset.points) >= 2, null, deadline(10000));
  assert.ok(await page.locator("#plot canvas").count() >= 1, "uPlot draws on a canvas");
  const hist = await (await get("/api/v1/history?metric=gpudoctor_gpu_temperature_celsius&gpu=3&since=15m", TOKEN)).json();
  assert.ok(hist.points.some(([, v]) => v === 88) && hist.points.some(([, v]) => v === 62), JSON.stringify(hist));
  // The bandwidth panel (GET /api/v1/report/bandwidth): the advice per NIC, or why there is none.
  await page.waitForFunction(() => /Advice:|NIC traffic|no history/i.test(document.querySelector("#bandwidth")?.innerText || ""), null, deadline(10000));
  // The timeline (GET /api/v1/findings, refreshed every 10 s): the opened finding and the reboot.
  await page.waitForFunction(() => {
    const t = document.querySelector("#timeline").innerText;
    return /opened.*gpu\.thermal \(GPU 3\)/s.test(t) && /reboot\s.*boot id 1f2e3d4c-0000-4000-8000-000000000001 -> 1f2e3d4c-0000-4000-8000-000000000002/.test(t);
  }, null, deadline(15000));
  await page.screenshot({ path: path.join(artifacts, "dashboard-fault-light.png"), fullPage: true });
  assert.deepEqual(errors, [], "no console errors with the token");
  console.log(`plot and timeline (${elapsed()})`);

  // 6. Dark mode and a phone.
  await page.emulateMedia({ colorScheme: "dark" });
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = bg.match(/\d+/g).map(Number);
  assert.ok(r + g + b < 200, `dark background in dark mode: ${bg}`);
  await page.screenshot({ path: path.join(artifacts, "dashboard-fault-dark.png"), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `no horizontal scrolling on a phone (overflow ${overflow}px)`);
  await page.screenshot({ path: path.join(artifacts, "dashboard-phone-dark.png"), fullPage: true });
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1440, height: 900 });

  // 7. 16, 1 and 0 GPUs: the same daemon re-enumerates when the device count changes.
  for (const [count, file] of [[16, "dashboard-16gpu.png"], [1, "dashboard-1gpu.png"], [0, "dashboard-0gpu.png"]]) {
    const changed = Date.now();
    // GPUs 8-15 get their own identities (the 8-GPU fixture names 0-7).
    let extra = "";
    for (let i = 8; i < count; ++i) extra += `gpu.${i}.uuid=GPU-5e1f0000-0000-4000-8000-0000000000${i}\ngpu.${i}.pci_bus_id=00000001:${(0x18 + i).toString(16)}:00.0\n`;
    replaceFile(scenario, `${base}device_count=${count}\n${extra}`);
    await page.waitForFunction((n) => document.querySelectorAll("article.card").length === n && document.querySelector("#gpus").dataset.count === String(n), count, deadline(15000));
    console.log(`${count} GPU(s) on the page after ${Date.now() - changed} ms`);
    if (count === 0) {
      assert.match(await page.locator("#gpus").innerText(), /No GPU seen/);
      assert.match(await page.locator("#plot-gpu").innerText(), /GPU 0 \(not seen now\)/);
    }
    if (count === 16) assert.match(await page.locator('article.card[data-gpu="15"]').innerText(), /0001:27:00\.0/);
    if (count === 1) assert.equal(await page.locator('article.card[data-gpu="0"]').getAttribute("data-sev"), "ok");
    await page.screenshot({ path: path.join(artifacts, file), fullPage: true });
  }
  // The history recorded the GPUs coming and going (the timeline's events).
  const events = (await (await get("/api/v1/findings", TOKEN)).json()).events.map((e) => `${e.kind} ${e.detail}`);
  assert.ok(events.some((e) => /^gpu_appeared GPU 15 /.test(e)), events.join("\n"));
  assert.ok(events.some((e) => /^gpu_disappeared GPU GPU-5e1f0000-0000-4000-8000-000000000015 /.test(e)), events.join("\n"));
  assert.ok(events.some((e) => /^gpu_disappeared GPU 1654922000010 /.test(e)), events.join("\n")); // GPU 0's serial
  assert.deepEqual(errors, [], "no console errors");
  assert.equal(watch.proc.exitCode, null, "watch still running");
  console.log(`PASS: dashboard on gpudoctor watch in ${elapsed()} (screenshots in ${artifacts})`);
} catch (e) {
  console.log(`watch log:\n${watch.log().split("\n").slice(-40).join("\n")}`);
  throw e;
} finally {
  await browser.close();
  watch.proc.kill("SIGTERM");
  clearInterval(activity);
  target.close();
  await new Promise((r) => (watch.proc.exitCode !== null ? r() : (watch.proc.on("exit", r), setTimeout(r, 5000))));
  rmSync(tmp, { recursive: true, force: true });
}
