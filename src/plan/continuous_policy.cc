// Continuous (iteration-level) batching with a paged KV cache: see batch_sim.h.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>

#include "plan/batch_sim.h"

namespace gpudoctor::plan {
namespace {

struct Running {
  uint32_t index = 0;      // into the trace
  uint32_t kv_tokens = 0;  // tokens held in the cache
  uint32_t generated = 0;  // output tokens produced so far
  uint32_t blocks = 0;
  uint32_t prefill_left = 0;  // prompt (or recompute) tokens still to prefill; 0: decoding
  uint32_t chunk = 0;         // of those, prefilled in the current iteration
};

struct Progress {
  uint32_t generated = 0;  // kept across preemption (recompute restarts from here)
  bool started = false;
};

uint64_t BlocksFor(uint64_t tokens, uint32_t block) { return (tokens + block - 1) / block; }

// Prompt tokens found in the prefix cache: the hit fraction of the prompt, whole blocks only,
// and never the whole prompt (the last token is always computed to produce the first output).
uint32_t CachedPrefixTokens(uint32_t prompt_tokens, const SimConfig& c) {
  if (!(c.prefix_cache_hit > 0) || prompt_tokens == 0) return 0;
  const uint32_t block = std::max<uint32_t>(c.block_tokens, 1);
  uint64_t blocks = static_cast<uint64_t>(std::floor(c.prefix_cache_hit * prompt_tokens / block));
  uint64_t cached = std::min<uint64_t>(blocks * block, prompt_tokens - 1);
  return static_cast<uint32_t>(cached / block * block);
}

// Seconds of j decode iterations of n sequences holding kv tokens in all at the first one (each
// iteration adds n cached tokens). Iteration i costs overhead + max(C, M0 + d i) with C the
// compute and M0 + d i the memory time: the first m iterations (M0 + d i <= C) are
// compute-bound, the rest an arithmetic series.
double DecodeSeconds(const CostModel& cost, uint64_t j, double n, double kv) {
  const double jd = static_cast<double>(j);
  const double c = cost.ComputeSeconds(n);
  const double m0 = cost.MemorySeconds(n, kv);
  const double d = cost.kv_token_s * n;
  double m = 0;  // compute-bound iterations
  if (m0 <= c) m = d > 0 ? std::min(jd, std::floor((c - m0) / d) + 1) : jd;
  double memory_sum = (jd - m) * m0 + d * (jd * (jd - 1) - m * (m - 1)) / 2;
  return jd * cost.overhead_s + m * c + memory_sum;
}

// New blocks the running sequences need over the next k decode iterations.
uint64_t BlocksNeeded(const std::vector<Running>& running, uint32_t block, uint64_t k) {
  uint64_t need = 0;
  for (const auto& s : running) {
    uint64_t slack = uint64_t{s.blocks} * block - s.kv_tokens;
    if (k > slack) need += (k - slack + block - 1) / block;
  }
  return need;
}

// A quiet stretch (nobody can be admitted, every sequence decoding): runs as many iterations at
// once as can pass with no completion, no preemption and, when `next` is an arrival that would
// be admitted, before that arrival; the result is the same as running them one by one (the
// iterations' times are an arithmetic series). False when fewer than 2.
bool FastForward(const std::vector<Request>& trace, const SimConfig& c, size_t next,
                 std::vector<Running>& running, std::vector<Progress>& progress,
                 uint64_t& free_blocks, double& now, PolicyResult& r) {
  const uint32_t block = std::max<uint32_t>(c.block_tokens, 1);
  uint64_t k = std::numeric_limits<uint64_t>::max();
  double kv = 0;
  for (const auto& s : running) {
    if (s.prefill_left > 0) return false;
    k = std::min<uint64_t>(k, trace[s.index].output_tokens - s.generated - 1);
    kv += s.kv_tokens;
  }
  const double n = static_cast<double>(running.size());
  auto fits = [&](uint64_t j) {
    if (BlocksNeeded(running, block, j) > free_blocks) return false;
    // The next arrival must come after the start of the last iteration (arrivals join at the
    // start of an iteration).
    return next >= trace.size() ||
           now + DecodeSeconds(c.cost, j - 1, n, kv) < trace[next].arrival_s;
  };
  if (k < 2 || !fits(2)) return false;
  uint64_t lo = 2, hi = k;  // fits(lo) holds; find the largest j <= k that fits
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  k = lo;
  double seconds = DecodeSeconds(c.cost, k, n, kv);
  for (auto& s : running) {
    uint64_t slack = uint64_t{s.blocks} * block - s.kv_tokens;
    if (k > slack) {
      uint64_t extra = (k - slack + block - 1) / block;
      s.blocks += static_cast<uint32_t>(extra);
      free_blocks -= extra;
    }
    s.kv_tokens += static_cast<uint32_t>(k);
    s.generated += static_cast<uint32_t>(k);
    progress[s.index].generated = s.generated;
  }
  uint64_t used_blocks = c.kv_capacity_tokens / block - free_blocks;
  r.kv_peak_bytes = std::max<uint64_t>(
      r.kv_peak_bytes, static_cast<uint64_t>(used_blocks * block * c.kv_bytes_per_token));
  now += seconds;
  r.busy_s += seconds;
  r.active_s += seconds;
  return true;
}

}  // namespace

PolicyResult SimulateContinuous(const std::vector<Request>& trace, const SimConfig& c) {
  PolicyResult r;
  r.policy = "continuous";
  r.requests = trace.size();
  r.outcomes.resize(trace.size());
  r.batch_slots = c.max_seqs;
  const uint32_t block = std::max<uint32_t>(c.block_tokens, 1);
  const uint64_t total_blocks = c.kv_capacity_tokens / block;
  const double block_bytes = block * c.kv_bytes_per_token;
  r.kv_capacity_bytes = static_cast<uint64_t>(total_blocks * block_bytes);
  if (trace.empty()) return r;

  const double start = trace.front().arrival_s;
  double end = trace.back().arrival_s;
  const size_t n = trace.size();
  std::vector<Progress> progress(n);
  std::deque<uint32_t> waiting;
  std::vector<Running> running;
  running.reserve(std::min<size_t>(c.max_seqs, n));
  uint64_t free_blocks = total_blocks;
  size_t next = 0;
  double now = start;

  auto arrive_until = [&](double t) {
    while (next < n && trace[next].arrival_s <= t) {
      const Request& q = trace[next];
      bool fits = c.max_seqs > 0 &&
                  BlocksFor(uint64_t{q.prompt_tokens} + q.output_tokens, block) <= total_blocks;
      r.outcomes[next].arrival_s = q.arrival_s;
      if (!fits) {
        ++r.rejected_too_long;
        ++r.rejected;
      } else if (waiting.size() >= c.max_queue) {
        ++r.rejected_queue_full;
        ++r.rejected;
      } else {
        waiting.push_back(static_cast<uint32_t>(next));
        r.max_queue_len = std::max<uint64_t>(r.max_queue_len, waiting.size());
      }
      ++next;
    }
  };
  auto preempt_last = [&] {
    Running v = running.back();
    running.pop_back();
    free_blocks += v.blocks;
    waiting.push_front(v.index);
    ++r.preemptions;
  };

  while (next < n || !waiting.empty() || !running.empty()) {
    arrive_until(now);
    if (running.empty() && waiting.empty()) {
      r.idle_s += std::max(0.0, trace[next].arrival_s - now);
      now = std::max(now, trace[next].arrival_s);
      continue;
    }
    // Nobody can be admitted until a sequence leaves: all slots taken, or the first in line
    // needs more blocks than are free (decoding only allocates). Arrivals then just queue.
    bool blocked = false;
    if (!waiting.empty()) {
      uint32_t i = waiting.front();
      uint64_t context = uint64_t{trace[i].prompt_tokens} + progress[i].generated;
      blocked = running.size() >= c.max_seqs || BlocksFor(context + 1, block) > free_blocks;
    }
    if ((waiting.empty() || blocked) && !running.empty() &&
        FastForward(trace, c, blocked ? trace.size() : next, running, progress, free_blocks, now,
                    r)) {
      end = std::max(end, now);
      continue;
    }
    // Chunked prefill: the iteration's token budget goes to the decodes first, then to the
    // prefills under way (oldest first), then to new admissions; a prompt spans iterations.
    // Otherwise whole prompts are admitted up to max_batched_tokens (one always goes).
    uint64_t prefill_tokens = 0;
    const bool chunked = c.chunked_prefill_tokens > 0;
    uint64_t budget = c.max_batched_tokens;
    if (chunked) {
      uint64_t decoding = 0;
      for (const auto& s : running) decoding += s.prefill_left == 0 ? 1 : 0;
      budget = c.chunked_prefill_tokens > decoding ? c.chunked_prefill_tokens - decoding : 0;
      for (auto& s : running) {
        if (s.prefill_left == 0) continue;
        s.chunk =
            static_cast<uint32_t>(std::min<uint64_t>(s.prefill_left, budget - prefill_tokens));
        prefill_tokens += s.chunk;
      }
    }
    // Admission, first come first served.
    while (!waiting.empty() && running.size() < c.max_seqs) {
      uint32_t i = waiting.front();
      uint32_t context = trace[i].prompt_tokens + progress[i].generated;  // recompute if resumed
      uint64_t need = BlocksFor(uint64_t{context} + 1, block);
      if (need > free_blocks) break;
      // A prefix cache hit skips the cached whole blocks of the prompt (the blocks stay held).
      const uint32_t compute = context - CachedPrefixTokens(trace[i].prompt_tokens, c);
      uint32_t chunk = compute;
      if (chunked) {
        if (prefill_tokens >= budget) break;
        chunk = static_cast<uint32_t>(std::min<uint64_t>(compute, budget - prefill_tokens));
      } else if (prefill_tokens > 0 && prefill_tokens + compute > c.max_batched_tokens) {
        break;
      }
      waiting.pop_front();
      free_blocks -= need;
      prefill_tokens += chunk;
      running.push_back(
          {i, context, progress[i].generated, static_cast<uint32_t>(need), compute, chunk});
      if (!progress[i].started) {
        progress[i].started = true;
        r.outcomes[i].queue_s = now - trace[i].arrival_s;
      }
    }
    // Every running sequence not in prefill decodes one token: it may need a new block.
    uint64_t decode_tokens = 0, kv_read = 0;
    for (size_t k = 0; k < running.size(); ++k) {
      Running& s = running[k];
      if (s.prefill_left > 0) continue;
      bool preempted_self = false;
      while (uint64_t{s.kv_tokens} + 1 > uint64_t{s.blocks} * block && free_blocks == 0) {
        if (running.size() - 1 == k) {
          preempted_self = true;
          break;
        }
        preempt_last();
      }
      if (preempted_self) {
        preempt_last();
        break;
      }
      if (uint64_t{s.kv_tokens} + 1 > uint64_t{s.blocks} * block) {
        --free_blocks;
        ++s.blocks;
      }
      ++decode_tokens;
      kv_read += s.kv_tokens;
    }
    // Everything was preempted, or only prefills without a chunk are left: admit again.
    if (running.empty() || prefill_tokens + decode_tokens == 0) continue;
    uint64_t used_blocks = total_blocks - free_blocks;
    r.kv_peak_bytes =
        std::max<uint64_t>(r.kv_peak_bytes, static_cast<uint64_t>(used_blocks * block_bytes));

    double step = c.cost.StepSeconds(static_cast<double>(prefill_tokens + decode_tokens),
                                     static_cast<double>(kv_read));
    now += step;
    r.busy_s += step;
    r.active_s += step;
    r.prefill_s += step * static_cast<double>(prefill_tokens) /
                   static_cast<double>(prefill_tokens + decode_tokens);

    // Apply the iteration: one more token for every sequence, completions leave.
    size_t keep = 0;
    for (size_t k = 0; k < running.size(); ++k) {
      Running s = running[k];
      const Request& q = trace[s.index];
      if (s.prefill_left > 0) {
        s.prefill_left -= s.chunk;
        s.chunk = 0;
        if (s.prefill_left > 0) {  // more chunks to go: no token yet
          running[keep++] = s;
          continue;
        }
        if (s.generated == 0) r.outcomes[s.index].ttft_s = now - q.arrival_s;
      } else {
        ++s.kv_tokens;
      }
      ++s.generated;
      progress[s.index].generated = s.generated;
      if (s.generated >= q.output_tokens) {
        RequestOutcome& o = r.outcomes[s.index];
        o.served = true;
        o.latency_s = now - q.arrival_s;
        free_blocks += s.blocks;
        ++r.completed;
        r.prompt_tokens += q.prompt_tokens;
        r.output_tokens += q.output_tokens;
        continue;
      }
      running[keep++] = s;
    }
    running.resize(keep);
    end = std::max(end, now);
  }
  r.span_s = end - start;
  Summarise(r);
  return r;
}

}  // namespace gpudoctor::plan
