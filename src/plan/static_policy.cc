// Static batching: see batch_sim.h.
#include <algorithm>
#include <deque>
#include <limits>

#include "plan/batch_sim.h"

namespace gpudoctor::plan {

PolicyResult SimulateStatic(const std::vector<Request>& trace, const SimConfig& c) {
  PolicyResult r;
  r.policy = "static";
  r.requests = trace.size();
  r.outcomes.resize(trace.size());
  uint64_t slots_by_memory = c.max_context == 0 ? 0 : c.kv_capacity_tokens / c.max_context;
  uint32_t batch = static_cast<uint32_t>(std::min<uint64_t>(c.batch_size, slots_by_memory));
  r.batch_slots = batch;
  r.kv_capacity_bytes =
      static_cast<uint64_t>(static_cast<double>(c.kv_capacity_tokens) * c.kv_bytes_per_token);
  if (trace.empty()) return r;

  const double start = trace.front().arrival_s;
  double end = trace.back().arrival_s;
  std::deque<uint32_t> queue;
  size_t next = 0;
  const size_t n = trace.size();
  // Moves arrivals up to time t into the queue; rejects those that cannot be served at all.
  auto arrive_until = [&](double t) {
    while (next < n && trace[next].arrival_s <= t) {
      const Request& q = trace[next];
      bool fits = batch > 0 && uint64_t{q.prompt_tokens} + q.output_tokens <= c.max_context;
      r.outcomes[next].arrival_s = q.arrival_s;
      if (!fits) {
        ++r.rejected_too_long;
        ++r.rejected;
      } else if (queue.size() >= c.max_queue) {
        ++r.rejected_queue_full;
        ++r.rejected;
      } else {
        queue.push_back(static_cast<uint32_t>(next));
        r.max_queue_len = std::max<uint64_t>(r.max_queue_len, queue.size());
      }
      ++next;
    }
  };

  double gpu_free = start;
  std::vector<uint32_t> members;
  std::vector<uint32_t> outputs;
  while (next < n || !queue.empty()) {
    double now = gpu_free;
    arrive_until(now);
    if (queue.empty()) {  // idle until the next arrival
      now = std::max(now, trace[next].arrival_s);
      r.idle_s += now - gpu_free;
      gpu_free = now;
      arrive_until(now);
      if (queue.empty()) continue;
    }
    // Wait for a full batch or for the oldest request's max wait, whichever comes first.
    double begin = now;
    while (queue.size() < batch) {
      double deadline = trace[queue.front()].arrival_s + c.max_wait_s;
      double full = std::numeric_limits<double>::infinity();
      // The arrival that would fill the batch, if the queue keeps everything that comes.
      size_t need = batch - queue.size();
      if (next + need - 1 < n) full = trace[next + need - 1].arrival_s;
      begin = std::max(now, std::min(deadline, full));
      arrive_until(begin);
      if (begin >= deadline || next >= n) break;
    }
    if (queue.empty()) continue;
    r.fill_wait_s += begin - now;
    members.clear();
    while (!queue.empty() && members.size() < batch) {
      members.push_back(queue.front());
      queue.pop_front();
    }
    const double b = static_cast<double>(members.size());
    uint32_t max_prompt = 0, max_output = 0;
    uint64_t sum_prompt = 0;
    outputs.clear();
    for (uint32_t i : members) {
      max_prompt = std::max(max_prompt, trace[i].prompt_tokens);
      max_output = std::max(max_output, trace[i].output_tokens);
      sum_prompt += trace[i].prompt_tokens;
      outputs.push_back(trace[i].output_tokens);
    }
    std::sort(outputs.begin(), outputs.end());
    r.kv_peak_bytes = std::max<uint64_t>(
        r.kv_peak_bytes, static_cast<uint64_t>(b * c.max_context * c.kv_bytes_per_token));

    // Prefill, padded to the longest prompt; it yields the first token of every row.
    double prefill = c.cost.StepSeconds(b * max_prompt, 0);
    r.active_s += prefill;
    r.prefill_s += prefill;
    const double prefill_useful = prefill * static_cast<double>(sum_prompt) / (b * max_prompt);
    r.busy_s += prefill_useful;
    r.padding_s += prefill - prefill_useful;
    // Decode steps 1 .. max_output-1: every row computes, only rows still generating count.
    double decode = 0;
    size_t finished = 0;  // rows whose output is complete before step k
    for (uint32_t k = 1; k < max_output; ++k) {
      while (finished < outputs.size() && outputs[finished] <= k) ++finished;
      double step = c.cost.StepSeconds(b, b * (max_prompt + k - 1));
      decode += step;
      r.busy_s += step * static_cast<double>(outputs.size() - finished) / b;
      r.head_of_line_s += step * static_cast<double>(finished) / b;
    }
    r.active_s += decode;
    double first_token = begin + prefill;
    double done = first_token + decode;
    for (uint32_t i : members) {
      RequestOutcome& o = r.outcomes[i];
      o.served = true;
      o.queue_s = begin - trace[i].arrival_s;
      o.ttft_s = first_token - trace[i].arrival_s;
      o.latency_s = done - trace[i].arrival_s;
      ++r.completed;
      r.prompt_tokens += trace[i].prompt_tokens;
      r.output_tokens += trace[i].output_tokens;
    }
    gpu_free = done;
    end = std::max(end, done);
  }
  r.span_s = end - start;
  Summarise(r);
  return r;
}

}  // namespace gpudoctor::plan
