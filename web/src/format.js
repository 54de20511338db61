// Small pure helpers: severities, units, DOM building.

export const LAYERS = ["network", "hardware", "software", "resources"];
const RANK = { crit: 3, warn: 2, info: 1 };
// Never colour alone: every severity also has a symbol and a word.
export const SEV_LABEL = { crit: "✖ CRIT", warn: "▲ WARN", info: "ℹ info", ok: "✔ ok" };

export const rank = (sev) => RANK[sev] || 0;
export const sevOfRank = (r) => (r >= 3 ? "crit" : r === 2 ? "warn" : r === 1 ? "info" : "ok");

export function worst(findings) {
  return sevOfRank(Math.max(0, ...findings.map((f) => rank(f.severity))));
}

export function bytes(v) {
  if (v == null) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v < 10 && u > 0 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

export const num = (v, digits = 0) => (v == null ? "–" : Number(v).toFixed(digits));

const REASONS = [
  [0x2, "app clocks"],
  [0x4, "SW power cap"],
  [0x8, "HW slowdown"],
  [0x10, "sync boost"],
  [0x20, "SW thermal"],
  [0x40, "HW thermal"],
  [0x80, "power brake"],
  [0x100, "display"],
];
export function throttleNames(mask) {
  if (mask == null) return null;
  const m = typeof mask === "string" ? parseInt(mask, 16) : mask;
  return REASONS.filter(([bit]) => m & bit).map(([, n]) => n);
}

// h("div", {class: "x"}, child, "text", ...): a small element builder (text is never parsed as HTML).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function timeText(ms) {
  if (!ms) return "–";
  return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
}
