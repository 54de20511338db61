// End-to-end: `gpudoctor plan kv|batching` as a user runs it: text, --json, GPU memory from the
// fake NVML library, usage errors (exit 3, one line on stderr), and the planner's numbers in
// `check` when an inference server fills a GPU.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using nlohmann::json;
using testing::FixturePath;
using testing::RunGpudoctor;
using testing::RunResult;
using testing::TempDir;

json Parse(const RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

// Exit 3, stdout empty, exactly one line on stderr containing `needle`.
void ExpectUsageError(const std::vector<std::string>& args, const std::string& needle) {
  RunResult r = RunGpudoctor(args);
  SCOPED_TRACE(r.err);
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_TRUE(r.out.empty()) << r.out;
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line";
  EXPECT_NE(r.err.find(needle), std::string::npos);
}

TEST(PlanE2eTest, KvJsonCarriesTheContractKeys) {
  RunResult r = RunGpudoctor(
      {"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--context", "2048", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["kv_bytes_per_token"], 131072);  // 2 x 32 x 8 x 128 x 2 B
  // vLLM's reserve (PlanKvTest.VllmReserveOnAnUnknownGpu): 27663 blocks; / 128 and / 32.
  EXPECT_EQ(j["max_concurrent_sequences"], 216);
  EXPECT_EQ(j["context_scaling"][0]["context_tokens"], 512);
  EXPECT_EQ(j["context_scaling"][0]["max_concurrent_sequences"], 864);
  EXPECT_EQ(j["gpu_mem_source"], "--gpu-mem");
}

TEST(PlanE2eTest, KvTextExplainsThe512To2048Effect) {
  RunResult r = RunGpudoctor({"--no-color", "plan", "kv", "--model", "llama-3-70b", "--tp", "4",
                              "--kv-dtype", "fp8", "--gpu-mem", "80GiB"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("KV cache plan: llama-3-70b"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("160 KiB (2 x 80 layers x 8 KV heads x 128 head dim x 1 B)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("going from 512 to 2048 tokens"), std::string::npos);
}

TEST(PlanE2eTest, ContextDistFileAndCustomShape) {
  TempDir tmp;
  tmp.Write("dist", "# tokens,weight\n512,1\n2048,1\n");
  RunResult r = RunGpudoctor({"plan", "kv", "--layers", "32", "--kv-heads", "8", "--head-dim",
                              "128", "--params", "8.03B", "--gpu-mem", "80GiB", "--context-dist",
                              tmp.path() + "/dist", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["model"]["name"], "custom");
  // The sampler (256 x 128256 x 40 B) is the activation peak, as for the preset: 27663 blocks.
  EXPECT_EQ(j["max_concurrent_sequences"], 345);  // 27663 blocks / mean 80 blocks
  EXPECT_EQ(j["contiguous_max_sequences"], 216);  // 442608 tokens / 2048
}

TEST(PlanE2eTest, ListModels) {
  RunResult r = RunGpudoctor({"plan", "--list-models"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* m : {"llama-3-8b", "llama-3-70b", "llama-2-7b", "mistral-7b", "qwen2.5-72b"}) {
    EXPECT_NE(r.out.find(m), std::string::npos) << m;
  }
}

TEST(PlanE2eTest, BatchingJsonHasOneObjectPerPolicy) {
  RunResult r = RunGpudoctor({"plan",
                              "batching",
                              "--model",
                              "llama-3-8b",
                              "--gpu-mem",
                              "80GiB",
                              "--rate",
                              "0.6",
                              "--requests",
                              "5000",
                              "--seed",
                              "1",
                              "--batch-size",
                              "16",
                              "--max-wait",
                              "5",
                              "--prompt-tokens",
                              "256:2048",
                              "--output-tokens",
                              "exp:256:2048",
                              "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  for (const char* policy : {"static", "continuous"}) {
    SCOPED_TRACE(policy);
    const json& p = j[policy];
    for (const char* key : {"gpu_busy_fraction", "throughput_tokens_per_s", "p50_latency_s",
                            "p99_latency_s", "kv_peak_bytes"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
    EXPECT_EQ(p["completed"], 5000);
    // Useful work and the four losses share the GPU time: they add up to 1.
    double sum = 0;
    for (const char* key : {"useful_fraction", "fill_wait_fraction", "padding_fraction",
                            "head_of_line_fraction", "idle_fraction"}) {
      ASSERT_TRUE(p["gpu_time"].contains(key)) << key;
      sum += p["gpu_time"][key].get<double>();
    }
    EXPECT_NEAR(sum, 1.0, 1e-9);
  }
  EXPECT_GT(j["static"]["gpu_time"]["fill_wait_fraction"].get<double>(), 0.3);
  EXPECT_EQ(j["continuous"]["gpu_time"]["fill_wait_fraction"].get<double>(), 0);
  EXPECT_LT(j["static"]["gpu_busy_fraction"].get<double>(), 0.35);
  EXPECT_GT(j["continuous"]["gpu_busy_fraction"].get<double>(), 0.65);
  EXPECT_EQ(j["knobs"].size(), 4u);
}

TEST(PlanE2eTest, BatchingFromACsvTraceInText) {
  TempDir tmp;
  tmp.Write("trace.csv",
            "arrival_s,prompt_tokens,output_tokens\n0,512,128\n0.1,1024,64\n0.2,300,300\n");
  RunResult r = RunGpudoctor({"plan", "batching", "--model", "mistral-7b", "--gpu-mem", "48GiB",
                              "--gpu-type", "l40s", "--trace", tmp.path() + "/trace.csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 requests"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cost model of l40s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU busy (useful work)"), std::string::npos);
  for (const char* loss : {"waiting for batch fill", "prompt padding", "finished rows held",
                           "idle (nothing queued)"}) {
    EXPECT_NE(r.out.find(loss), std::string::npos) << loss << "\n" << r.out;
  }
}

TEST(PlanE2eTest, GpuMemoryFromNvml) {
  std::map<std::string, std::string> env = {
      {"FAKE_NVML_SCENARIO", FixturePath("nvml/h100_healthy.scenario")}};
  RunResult r = RunGpudoctor({"plan", "kv", "--model", "llama-3-8b", "--nvml-lib",
                              testing::FakeNvmlLib(), "--gpu", "2", "--json"},
                             std::chrono::seconds(30), env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["gpu_mem_bytes"], 85520809984u);
  EXPECT_EQ(j["gpu_mem_source"], "NVML GPU 2 NVIDIA H100 80GB HBM3");

  r = RunGpudoctor(
      {"plan", "kv", "--model", "llama-3-8b", "--nvml-lib", testing::FakeNvmlLib(), "--gpu", "9"},
      std::chrono::seconds(30), env);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no GPU 9"), std::string::npos) << r.err;
}

TEST(PlanE2eTest, NoGpuMeansGpuMemIsRequired) {
  ExpectUsageError(
      {"plan", "kv", "--model", "llama-3-8b", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"},
      "pass --gpu-mem SIZE");
}

TEST(PlanE2eTest, ImpossibleInputsAreUsageErrors) {
  ExpectUsageError(
      {"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--context", "-512"},
      "flag --context: expected context tokens in [1, 10000000], got '-512'");
  ExpectUsageError({"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "0"}, "flag --gpu-mem");
  ExpectUsageError({"plan", "kv", "--model", "llama-3-70b", "--gpu-mem", "80GiB"}, "does not fit");
  ExpectUsageError({"plan", "kv", "--model", "gpt-9", "--gpu-mem", "80GiB"},
                   "unknown model 'gpt-9'");
  ExpectUsageError({"plan", "kv", "--gpu-mem", "80GiB"}, "--model NAME");
  ExpectUsageError({"plan", "warp", "--model", "llama-3-8b"}, "unknown plan subcommand 'warp'");
  ExpectUsageError({"plan", "kv", "--model", "llama-3-8b", "--bogus"}, "unknown flag '--bogus'");
  ExpectUsageError(
      {"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--output-tokens", "0"},
      "flag --output-tokens");

  TempDir tmp;
  tmp.Write("bad.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n1,abc,10\n");
  ExpectUsageError({"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--trace",
                    tmp.path() + "/bad.csv"},
                   "trace line 3 '1,abc,10'");
  tmp.Write("bad.dist", "512\n2048,-1\n");
  ExpectUsageError({"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--context-dist",
                    tmp.path() + "/bad.dist"},
                   "context-dist line 2");
  ExpectUsageError({"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--trace",
                    tmp.path() + "/missing.csv"},
                   "missing.csv");
}

// `plan kv --compare`: llama-3-8b, 2,048-token sequences in 6,144-token contiguous slots (a third
// used). 6,144 x 128 KiB = 768 MiB per sequence; paged 256 MiB; fp8 KV 128 MiB; half the
// sequence shared 64 MiB; twice the prompt with every lever 128 MiB = 16.7% of 768 MiB.
TEST(PlanE2eTest, KvCompareShowsEachLever) {
  std::vector<std::string> args = {
      "plan",      "kv",   "--model",       "llama-3-8b", "--gpu-mem", "80GiB",
      "--context", "2048", "--max-context", "6144",       "--compare", "--prefix-share",
      "0.5"};
  RunResult t = RunGpudoctor(args);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  for (const char* line : {"contiguous 6144-token slots       768 MiB         100%",
                           "+ paged allocation (16-token blocks)", "+ KV cache fp8",
                           "+ prefix sharing 50% (whole blocks)", "+ weights fp8",
                           "reached with the levers up to \"+ KV cache fp8\""}) {
    EXPECT_NE(t.out.find(line), std::string::npos) << line << "\n" << t.out;
  }
  args.push_back("--json");
  RunResult r = RunGpudoctor(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  const json& steps = j["levers"]["steps"];
  ASSERT_EQ(steps.size(), 5u);
  const double mib = 1 << 20;
  EXPECT_DOUBLE_EQ(steps[0]["kv_bytes_per_sequence"].get<double>(), 768 * mib);
  EXPECT_DOUBLE_EQ(steps[1]["kv_bytes_per_sequence"].get<double>(), 256 * mib);
  EXPECT_DOUBLE_EQ(steps[2]["kv_bytes_per_sequence"].get<double>(), 128 * mib);
  EXPECT_DOUBLE_EQ(steps[3]["kv_bytes_per_sequence"].get<double>(), 64 * mib);
  EXPECT_DOUBLE_EQ(j["levers"]["doubled_context"]["kv_bytes_per_sequence"].get<double>(),
                   128 * mib);
  EXPECT_EQ(j["levers"]["third_of_the_memory_for_twice_the_context_at"], "+ KV cache fp8");

  ExpectUsageError({"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--compare",
                    "--prefix-share", "1"},
                   "flag --prefix-share: expected a fraction in [0, 1)");
  ExpectUsageError(
      {"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--prefix-share", "0.5"},
      "--prefix-share needs --compare");
  ExpectUsageError({"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--compare"},
                   "belong to plan kv");
}

// Prefill scheduling: continuous batching before and after chunked prefill and a prefix cache.
TEST(PlanE2eTest, BatchingPrefillLeversBeforeAndAfter) {
  std::vector<std::string> args = {"plan",       "batching",
                                   "--model",    "llama-3-8b",
                                   "--gpu-mem",  "80GiB",
                                   "--gpu-type", "h100-sxm",
                                   "--rate",     "2",
                                   "--requests", "500",
                                   "--no-knobs", "--chunked-prefill",
                                   "2048",       "--prefix-cache-hit",
                                   "0.4",        "--prompt-tokens",
                                   "1024:8192"};
  RunResult t = RunGpudoctor(args);
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("after: chunked prefill 2048 tokens per iteration, prefix cache hit 40%"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("prefill share of GPU time"), std::string::npos) << t.out;
  args.push_back("--json");
  RunResult r = RunGpudoctor(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  ASSERT_TRUE(j.contains("continuous_prefill"));
  EXPECT_EQ(j["continuous_prefill"]["chunked_prefill_tokens"], 2048);
  EXPECT_LT(j["continuous_prefill"]["prefill_fraction"].get<double>(),
            j["continuous"]["prefill_fraction"].get<double>());

  ExpectUsageError({"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB",
                    "--prefix-cache-hit", "1.2"},
                   "flag --prefix-cache-hit: expected a fraction in [0, 1)");
  ExpectUsageError(
      {"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--chunked-prefill", "0"},
      "flag --chunked-prefill");
  ExpectUsageError(
      {"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--chunked-prefill", "512"},
      "belong to plan batching");
}

// The cost model's GPU comes from NVML's PCI device id; a GPU outside the table is an error that
// asks for --gpu-type, and --gpu-type names the exact row.
TEST(PlanE2eTest, BatchingGpuFromNvmlPciDeviceId) {
  TempDir tmp;
  tmp.Write("l40.scenario", "include=" + FixturePath("nvml/h100_healthy.scenario") +
                                "\ngpu.*.name=NVIDIA L40\ngpu.*.pci_device_id=0x26b510de\n");
  tmp.Write("unknown.scenario", "include=" + FixturePath("nvml/h100_healthy.scenario") +
                                    "\ngpu.*.name=NVIDIA Future GPU\ngpu.*.pci_device_id=0x9999"
                                    "10de\n");
  std::vector<std::string> args = {
      "plan",       "batching", "--model",    "llama-3-8b", "--nvml-lib", testing::FakeNvmlLib(),
      "--requests", "50",       "--no-knobs", "--json"};
  RunResult r = RunGpudoctor(args, std::chrono::seconds(30),
                             {{"FAKE_NVML_SCENARIO", tmp.path() + "/l40.scenario"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["gpu"]["name"], "l40");  // not the L4, as a substring match gave
  EXPECT_EQ(j["gpu"]["matched_by"], "PCI device id 0x26b5 of NVML GPU 0");
  EXPECT_EQ(j["gpu"]["hbm_bytes_per_s"], 0.864e12);

  r = RunGpudoctor(args, std::chrono::seconds(30),
                   {{"FAKE_NVML_SCENARIO", tmp.path() + "/unknown.scenario"}});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("NVML GPU 0 'NVIDIA Future GPU' (PCI device id 0x9999) is not in the cost "
                       "model's GPU table; pass --gpu-type"),
            std::string::npos)
      << r.err;

  args.insert(args.end(), {"--gpu-type", "a100-pcie-40gb"});
  r = RunGpudoctor(args, std::chrono::seconds(30),
                   {{"FAKE_NVML_SCENARIO", tmp.path() + "/unknown.scenario"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Parse(r)["gpu"]["hbm_bytes_per_s"], 1.555e12);
  ExpectUsageError(
      {"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--gpu-type", "L4O"},
      "flag --gpu-type: unknown GPU 'L4O'");
}

// Arrivals beyond what the server completes: no latency percentile, the factor instead.
TEST(PlanE2eTest, OverloadSaysUnstableInsteadOfAP99) {
  std::vector<std::string> args = {
      "plan",       "batching",  "--model",         "llama-3-70b", "--tp",
      "2",          "--gpu-mem", "80GiB",           "--rate",      "3",
      "--requests", "1500",      "--prompt-tokens", "2048:8192",   "--no-knobs"};
  RunResult r = RunGpudoctor(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("continuous is unstable: arrivals exceed capacity by"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("latency grows without bound"), std::string::npos);
  args.push_back("--json");
  json j = Parse(RunGpudoctor(args));
  for (const char* policy : {"static", "continuous"}) {
    SCOPED_TRACE(policy);
    EXPECT_EQ(j[policy]["stable"], false);
    EXPECT_TRUE(j[policy]["p99_latency_s"].is_null());
    EXPECT_GT(j[policy]["overload_factor"].get<double>(), 1.05);
  }
}

// Little's law on the JSON: mean number in system = completion rate x mean latency.
TEST(PlanE2eTest, BatchingJsonSatisfiesLittlesLaw) {
  RunResult r = RunGpudoctor({"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "80GiB",
                              "--rate", "1", "--requests", "2000", "--no-knobs", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  for (const char* policy : {"static", "continuous"}) {
    SCOPED_TRACE(policy);
    const json& p = j[policy];
    ASSERT_EQ(p["stable"], true);
    double l = p["mean_in_system"], lambda = p["completion_rate_per_s"], w = p["mean_latency_s"];
    EXPECT_GT(l, 0);
    EXPECT_NEAR(l, lambda * w, 1e-6 * l);
    EXPECT_NEAR(lambda, 2000 / p["span_s"].get<double>(), 1e-9);
  }
}

// Nothing served: the reason, exit 1, and never a latency of 0.
TEST(PlanE2eTest, EveryRequestRejectedExitsOne) {
  TempDir tmp;
  tmp.Write("long.csv", "0,6000,100\n1,6000,100\n");
  // 20.3 GiB x 0.9 - 14.96 GiB weights - 1.22 GiB activation - 1.79 GiB non-torch = 0.3 GiB of
  // KV: about 2,400 tokens, fewer than one request's 6,100.
  RunResult r = RunGpudoctor({"plan", "batching", "--model", "llama-3-8b", "--gpu-mem", "20.3GiB",
                              "--trace", tmp.path() + "/long.csv", "--no-knobs"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("continuous: all 2 requests rejected: 2 requests need more KV than the "
                       "whole cache"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("0.000"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("all 2 requests rejected"), std::string::npos) << r.err;
}

// An inference server fills GPU 0: the memory finding quotes the planner and the command.
TEST(PlanE2eTest, CheckQuotesThePlannerWhenAnInferenceServerFillsTheGpu) {
  TempDir proc;
  proc.Write("4101/comm", "VLLM::EngineCor\n");
  std::map<std::string, std::string> env = {
      {"FAKE_NVML_SCENARIO", FixturePath("nvml/memory_full.scenario")}};
  RunResult r = RunGpudoctor({"check", "--json", "--probes", "nvml", "--nvml-lib",
                              testing::FakeNvmlLib(), "--path.procfs", proc.path()},
                             std::chrono::seconds(30), env);
  ASSERT_GE(r.exit_code, 1) << r.err;
  json j = Parse(r);
  const json* full = nullptr;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "gpu.memory.full") full = &f;
  }
  ASSERT_NE(full, nullptr) << r.out;
  std::string steps = (*full)["next_steps"].dump();
  EXPECT_NE(steps.find("VLLM::EngineCor (vLLM)"), std::string::npos) << steps;
  EXPECT_NE(steps.find("gpudoctor plan kv --model llama-3-8b --gpu 0 --context 2048"),
            std::string::npos)
      << steps;
}

// `plan kv` shows where the memory goes: the memory fraction, the weights, the activation peak
// of the profile run and the non-torch memory, each a JSON key; a flat --reserve replaces them.
TEST(PlanE2eTest, KvPrintsTheReserveParts) {
  std::vector<std::string> args = {"--no-color", "plan",      "kv",       "--model",
                                   "llama-3-8b", "--gpu-mem", "79.22GiB", "--gpu-type",
                                   "h100-sxm",   "--tp",      "2"};
  RunResult r = RunGpudoctor(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* part :
       {"memory fraction     0.9 -> 71.3 GiB",
        "activation peak     1.2 GiB (profile run: forward of 8192 tokens",
        "non-torch           3.6 GiB (CUDA context, cuBLAS, NCCL: NVLink data-centre GPU, tp 2; "
        "h100-sxm (--gpu-type))"}) {
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
  }
  args.insert(args.end(), {"--json", "--memory-fraction", "0.95", "--max-batched-tokens", "65536"});
  r = RunGpudoctor(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["reserve_model"], "vllm");
  EXPECT_EQ(j["memory_fraction"], 0.95);
  EXPECT_EQ(j["max_batched_tokens"], 65536);
  // 65536 x 2 B x (3 x 4096 + 3 x 14336 / 2) = 4429185024 B: now the forward pass is the peak.
  EXPECT_EQ(j["activation_peak_bytes"], 4429185024.0);
  EXPECT_EQ(j["non_torch_bytes"], 2 * 1.79 * 1073741824.0);

  r = RunGpudoctor(
      {"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--reserve", "10%", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = Parse(r);
  EXPECT_EQ(j["reserve_model"], "flat");
  EXPECT_EQ(j["kv_capacity_tokens"], 467280);  // PlanKvTest.Llama3_8bOn80GiB
  ExpectUsageError({"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB", "--reserve",
                    "8GiB", "--memory-fraction", "0.95"},
                   "--reserve is a flat reserve that replaces vLLM's accounting");
  ExpectUsageError({"plan", "kv", "--model", "llama-3-8b", "--gpu-mem", "80GiB",
                    "--gpu-memory-utilization", "0"},
                   "memory fraction must be above 0");
}

// An L40S node (the fan fixture): memory and the GPU from NVML, the GPU by its PCI device id
// 0x26b9, and the PCIe card's non-torch profile.
TEST(PlanE2eTest, KvReserveFollowsTheNvmlGpu) {
  RunResult r = RunGpudoctor(
      {"plan", "kv", "--model", "llama-3-8b", "--nvml-lib", testing::FakeNvmlLib()},
      std::chrono::seconds(30), {{"FAKE_NVML_SCENARIO", FixturePath("nvml/l40s_fan.scenario")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU memory          45 GiB (NVML GPU 0 NVIDIA L40S)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("PCIe card, tp 1; l40s (PCI device id 0x26b9 of NVML GPU 0)"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace gpudoctor
