#!/usr/bin/env python3
"""A stand-in inference server: serves /metrics on 127.0.0.1 the way one engine does.

Metric names, types and labels as each engine documents them:
  vllm     vLLM V1 (docs.vllm.ai/en/stable/usage/metrics, v0.9+): vllm:kv_cache_usage_perc,
           vllm:num_preemptions (counter, exposed as _total), vllm:inter_token_latency_seconds;
           labels model_name, engine.
  vllm-v0  vLLM 0.5.x (docs.vllm.ai/en/v0.5.3/serving/metrics.html): vllm:gpu_cache_usage_perc,
           vllm:num_preemptions_total, vllm:time_per_output_token_seconds; label model_name.
  tgi      TGI (huggingface/text-generation-inference docs/source/reference/metrics.md):
           tgi_queue_size, tgi_batch_current_size, tgi_request_success,
           tgi_request_mean_time_per_token_duration, tgi_request_input_length,
           tgi_request_generated_tokens; no labels (the Rust metrics exporter, no HELP lines).
  sglang   SGLang (docs/references/production_metrics.md): sglang:token_usage,
           sglang:num_queue_reqs, sglang:num_running_reqs, sglang:time_to_first_token_seconds,
           sglang:time_per_output_token_seconds, sglang:prompt_tokens_total,
           sglang:num_requests_total; label model_name.
  triton   Triton (server docs/user_guide/metrics.md, r24.04): nv_inference_request_success,
           nv_inference_queue_duration_us (counters), nv_inference_pending_request_count
           (gauge); labels model, version.
  job      a training job's own exporter: train_steps_total (counter), train_step_seconds
           (histogram); label rank.

The state is a JSON file re-read on every request (the test rewrites it, write-then-rename):
  {"model": "...", "kv": 0.97, "waiting": 5, "running": 2, "preemptions": 12,
   "requests": 100, "queue_us": 1e6, "ttft": [0.1, 3.2, ...], "tpot": [...],
   "prompt_tokens": [512, 2048], "generation_tokens": [128], "steps": 10,
   "step_seconds": [1.0, 1.1]}
Counters are absolute: writing a lower value is the engine's restart (the counter reset).
The port is written to --port-file once the socket is bound (0: the kernel picks one).
"""
import argparse
import http.server
import json
import os
import sys

TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5,
                5.0, 7.5, 10.0]
TPOT_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5]
TOKEN_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
STEP_BUCKETS = [0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0]


def fmt(v):
    if v == float("inf"):
        return "+Inf"
    return repr(float(v))


def labels(pairs):
    if not pairs:
        return ""
    body = ",".join('%s="%s"' % (k, str(v).replace("\\", "\\\\").replace('"', '\\"')
                                 .replace("\n", "\\n")) for k, v in pairs)
    return "{" + body + "}"


class Out:
    def __init__(self, help_lines=True):
        self.lines = []
        self.help_lines = help_lines

    def head(self, name, typ, text):
        if self.help_lines:
            self.lines.append("# HELP %s %s" % (name, text))
        self.lines.append("# TYPE %s %s" % (name, typ))

    def sample(self, name, lab, value):
        self.lines.append("%s%s %s" % (name, labels(lab), fmt(value)))

    def gauge(self, name, text, lab, value):
        self.head(name, "gauge", text)
        self.sample(name, lab, value)

    def counter(self, name, text, lab, value, python_client=False):
        # prometheus_client names the family x_total in the text format (and adds x_created).
        self.head(name, "counter", text)
        self.sample(name, lab, value)

    def histogram(self, name, text, lab, observations, bounds, le_int=False):
        self.head(name, "histogram", text)
        total = 0
        for b in bounds + [float("inf")]:
            n = sum(1 for o in observations if o <= b)
            le = "+Inf" if b == float("inf") else (str(int(b)) if le_int else repr(float(b)))
            self.sample(name + "_bucket", [("le", le)] + lab, n)
        self.sample(name + "_sum", lab, sum(observations))
        self.sample(name + "_count", lab, len(observations))

    def text(self):
        return "\n".join(self.lines) + "\n"


def render(engine, st):
    model = st.get("model", "meta-llama/Llama-3.1-8B-Instruct")
    o = Out(help_lines=engine != "tgi")
    if engine in ("vllm", "vllm-v0"):
        lab = [("model_name", model)] + ([("engine", "0")] if engine == "vllm" else [])
        o.gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
                lab, st.get("running", 0))
        o.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", lab,
                st.get("waiting", 0))
        kv = "vllm:kv_cache_usage_perc" if engine == "vllm" else "vllm:gpu_cache_usage_perc"
        o.gauge(kv, "KV-cache usage. 1 means 100 percent usage.", lab, st.get("kv", 0))
        o.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
                  lab, st.get("preemptions", 0))
        o.gauge("vllm:num_preemptions_created", "Cumulative number of preemption from the engine.",
                lab, 1733380000.0)
        o.counter("vllm:request_success_total", "Count of successfully processed requests.",
                  [("finished_reason", "stop")] + lab, st.get("requests", 0))
        o.histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                    lab, st.get("ttft", []), TTFT_BUCKETS)
        tpot = ("vllm:inter_token_latency_seconds" if engine == "vllm"
                else "vllm:time_per_output_token_seconds")
        o.histogram(tpot, "Histogram of inter-token latency in seconds.", lab, st.get("tpot", []),
                    TPOT_BUCKETS)
        o.histogram("vllm:request_prompt_tokens", "Number of prefill tokens processed.", lab,
                    st.get("prompt_tokens", []), TOKEN_BUCKETS)
        o.histogram("vllm:request_generation_tokens", "Number of generation tokens processed.",
                    lab, st.get("generation_tokens", []), TOKEN_BUCKETS)
    elif engine == "tgi":
        o.gauge("tgi_queue_size", "", [], st.get("waiting", 0))
        o.gauge("tgi_batch_current_size", "", [], st.get("running", 0))
        o.counter("tgi_request_success", "", [], st.get("requests", 0))
        o.histogram("tgi_request_mean_time_per_token_duration", "", [], st.get("tpot", []),
                    TPOT_BUCKETS)
        o.histogram("tgi_request_input_length", "", [], st.get("prompt_tokens", []),
                    TOKEN_BUCKETS)
        o.histogram("tgi_request_generated_tokens", "", [], st.get("generation_tokens", []),
                    TOKEN_BUCKETS)
    elif engine == "sglang":
        lab = [("model_name", model)]
        o.counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.", lab,
                  sum(st.get("prompt_tokens", [])))
        o.counter("sglang:num_requests_total", "The number of processed requests.", lab,
                  st.get("requests", 0))
        o.gauge("sglang:token_usage", "The token usage", lab, st.get("kv", 0))
        o.histogram("sglang:time_to_first_token_seconds",
                    "Histogram of time to first token in seconds.", lab, st.get("ttft", []),
                    TTFT_BUCKETS)
        o.histogram("sglang:time_per_output_token_seconds",
                    "Histogram of time per output token in seconds.", lab, st.get("tpot", []),
                    TPOT_BUCKETS)
        o.gauge("sglang:num_running_reqs", "The number of running requests", lab,
                st.get("running", 0))
        o.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue", lab,
                st.get("waiting", 0))
    elif engine == "triton":
        lab = [("model", model), ("version", "1")]
        o.counter("nv_inference_request_success",
                  "Number of successful inference requests, all batch sizes", lab,
                  st.get("requests", 0))
        o.counter("nv_inference_queue_duration_us",
                  "Cumulative inference queuing duration in microseconds (includes cached requests)",
                  lab, st.get("queue_us", 0))
        o.gauge("nv_inference_pending_request_count",
                "Instantaneous number of pending requests awaiting execution per-model.", lab,
                st.get("waiting", 0))
    elif engine == "job":
        lab = [("rank", "0")]
        o.counter("train_steps_total", "Optimizer steps taken.", lab, st.get("steps", 0))
        o.counter("train_steps_total", "Optimizer steps taken.", [("rank", "1")],
                  st.get("steps", 0))
        o.histogram("train_step_seconds", "Step time.", lab, st.get("step_seconds", []),
                    STEP_BUCKETS)
    return o.text()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", required=True,
                    choices=["vllm", "vllm-v0", "tgi", "sglang", "triton", "job"])
    ap.add_argument("--state", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            try:
                with open(args.state) as f:
                    st = json.load(f)
            except (OSError, ValueError):
                st = {}
            body = render(args.engine, st).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
