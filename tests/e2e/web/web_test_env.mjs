// Start-up shared by the browser tests (dashboard_test.mjs, job_why_panels_test.mjs), run as
// `node TEST.mjs SOURCE_DIR BUILD_DIR`: the two directories, exit 77 (skipped) without chromium
// or web/node_modules and 1 when the dashboard was not built, playwright-core from web/, the
// artifacts folder (BUILD/test-artifacts) and a fresh temporary directory.
import { existsSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";

export function startWebTest(tmpPrefix) {
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
  const t0 = Date.now();
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const artifacts = path.join(build, "test-artifacts");
  mkdirSync(artifacts, { recursive: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), tmpPrefix));
  return { src, build, chromium, pw, elapsed, artifacts, tmp };
}

// Write, then rename: the daemon re-reading `file` (a live scenario, a fixture /proc file) never
// sees half of it.
export function replaceFile(file, text) {
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}
