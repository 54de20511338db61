// The "why" panel: when did the job become slow, and what changed then.
// GET /api/v1/why?job=NAME&since=RANGE (`gpudoctor why --json`): {"subject","source","points",
// "onset": {"time","factor","before","after",...} | null, "no_change", "causes": [{"time","lead_s",
// "kind","id","gpu"?,"what","evidence":[...],"next_step"?,"score"}]} -> the ranked list with its
// evidence and next steps. Without a job the daemon answers from GPU utilisation (source
// "gpu_utilization") and the panel says so. A 404 (the job is not stored) shows the daemon's words.
import { NotFound, getJson } from "./api.js";
import { h, num } from "./format.js";

// Seconds as "3 min", "45 s", "2.0 h" (lead times before the onset).
export function leadText(s) {
  const a = Math.abs(s);
  const t = a < 120 ? `${Math.round(a)} s` : a < 7200 ? `${Math.round(a / 60)} min` : `${(a / 3600).toFixed(1)} h`;
  return s >= 0 ? `${t} before` : `${t} after`;
}

export function whyPath(job, range) {
  const q = new URLSearchParams({ since: range });
  if (job) q.set("job", job);
  return `/api/v1/why?${q}`;
}

export class WhyPanel {
  constructor(root) {
    this.root = root;
  }

  // No job chosen: says how to ask (nothing fetched).
  idle() {
    this.root.dataset.state = "idle";
    this.root.replaceChildren(h("p", { class: "muted" }, "No job step times stored: press Explain to look for a slowdown in the GPU utilisation alone."));
  }

  // Asks the daemon about `job` (null: no job, from GPU utilisation) over `range`; renders.
  async load(job, range = "24h") {
    let doc;
    try {
      doc = await getJson(whyPath(job, range), { notFound: "throw" });
    } catch (e) {
      if (!(e instanceof NotFound)) throw e;
      this.root.dataset.state = "not-found";
      this.root.replaceChildren(h("p", { class: "muted" }, `Nothing to explain yet: ${e.message.replace(/^[^:]*: HTTP 404: /, "")}`));
      return null;
    }
    this.render(doc, job);
    return doc;
  }

  render(doc, job) {
    if (doc == null) {
      this.root.dataset.state = "no-history";
      this.root.replaceChildren(h("p", { class: "muted" }, "This daemon keeps no history (--no-db)."));
      return;
    }
    const parts = [];
    const subject = doc.subject || (job ? `job ${job}` : "GPU utilisation");
    if (doc.source !== "job") {
      parts.push(h("p", { class: "muted small" }, "No job step times: judged from the GPU utilisation series alone (a drop in useful work per GPU)."));
    }
    if (!doc.onset) {
      this.root.dataset.state = "no-change";
      parts.push(h("p", { class: "why-onset" }, `${subject}: no slowdown found`, doc.no_change ? ` — ${doc.no_change}` : ""));
      this.root.replaceChildren(...parts);
      return;
    }
    const o = doc.onset;
    this.root.dataset.state = "onset";
    parts.push(
      h(
        "p",
        { class: "why-onset" },
        h("strong", {}, `${o.time}: ${subject} ${o.given ? "(time given)" : "slowdown"} ×${num(o.factor, 1)}`),
        ` — ${num(o.before, 3)} → ${num(o.after, 3)} (${doc.points} points)`,
      ),
    );
    const causes = doc.causes || [];
    if (!causes.length) {
      parts.push(h("p", { class: "muted" }, "Nothing in the history changed near the onset."));
    } else {
      parts.push(
        h(
          "ol",
          { class: "why-causes" },
          causes.map((c) =>
            h(
              "li",
              { class: "finding", "data-id": c.id, "data-kind": c.kind },
              h(
                "div",
                {},
                h("span", { class: "badge", "data-sev": "info" }, c.kind),
                " ",
                h("strong", {}, c.id),
                c.gpu != null ? ` GPU ${c.gpu}` : "",
                h("span", { class: "muted" }, ` · ${c.time} (${leadText(c.lead_s || 0)} the onset)`),
              ),
              h("div", {}, c.what),
              (c.evidence || []).length ? h("ul", { class: "why-evidence small" }, c.evidence.map((e) => h("li", {}, e))) : null,
              c.next_step ? h("p", { class: "why-next small" }, h("strong", {}, "Next: "), c.next_step) : null,
            ),
          ),
        ),
      );
    }
    this.root.replaceChildren(...parts);
  }
}
