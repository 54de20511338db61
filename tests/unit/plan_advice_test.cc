// Live advice: KV numbers in the gpu.memory.full finding when an inference server holds the GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include "plan/live_advice.h"
#include "rules/engine.h"

namespace gpudoctor::plan {
namespace {

GpuFacts FullGpu(const std::string& comm) {
  GpuFacts g;
  g.index = 3;
  g.uuid = "GPU-3";
  g.memory_total_bytes = 80ull << 30;
  g.memory_used_bytes = (80ull << 30) - (100ull << 20);  // 99.9% used
  g.processes = std::vector<GpuProcess>{{4101, 70ull << 30, "bash", "root"},
                                        {4102, 10ull << 30, comm, "svc"}};
  return g;
}

TEST(PlanAdviceTest, InferenceServerNames) {
  EXPECT_EQ(InferenceServerName("VLLM::EngineCor"), "vLLM");  // comm is cut at 15 characters
  EXPECT_EQ(InferenceServerName("text-generation"), "TGI (text-generation-inference)");
  EXPECT_EQ(InferenceServerName("tritonserver"), "Triton Inference Server");
  EXPECT_EQ(InferenceServerName("llama-server"), "llama.cpp");
  EXPECT_EQ(InferenceServerName("sglang::schedul"), "SGLang");
  EXPECT_EQ(InferenceServerName("ollama_llama_se"), "Ollama");
  EXPECT_EQ(InferenceServerName("python3"), "");
  EXPECT_EQ(InferenceServerName(""), "");
}

TEST(PlanAdviceTest, ThePlannersNumbersForThisGpuAreFacts) {
  auto kv = LiveKvFactsFor(FullGpu("vllm"));
  ASSERT_TRUE(kv);
  ASSERT_TRUE(kv->sized);
  // llama-3-8b on 80 GiB with vLLM's reserve (see PlanKvTest.VllmReserveOnAnUnknownGpu): 27663
  // blocks: 864 sequences of 512 tokens, 216 of 2048; fp8 KV halves the 128 KiB per token:
  // floor(58014072023 / (16 x 65536)) = 55326 blocks, / 128 = 432 sequences of 2048.
  EXPECT_EQ(kv->server, "vLLM");
  EXPECT_EQ(kv->comm, "vllm");
  EXPECT_EQ(kv->model, "llama-3-8b");
  EXPECT_EQ(kv->kv_bytes_per_token, 128u << 10);
  EXPECT_EQ(kv->seqs_512, 864);
  EXPECT_EQ(kv->seqs_2048, 216);
  EXPECT_EQ(kv->seqs_2048_fp8, 432);
}

TEST(PlanAdviceTest, NothingWithoutAnInferenceServerOrMemorySize) {
  EXPECT_FALSE(LiveKvFactsFor(FullGpu("python3")));
  GpuFacts no_procs = FullGpu("vllm");
  no_procs.processes.reset();
  EXPECT_FALSE(LiveKvFactsFor(no_procs));
  GpuFacts no_total = FullGpu("vllm");
  no_total.memory_total_bytes.reset();
  EXPECT_FALSE(LiveKvFactsFor(no_total));
}

TEST(PlanAdviceTest, MemoryFullFindingCarriesTheAdvice) {
  Snapshot snap;
  snap.gpu.nvml.state = NvmlState::kOk;
  snap.gpu.gpus = {FullGpu("tritonserver")};
  snap.gpu.gpus[0].live_kv = LiveKvFactsFor(snap.gpu.gpus[0]);  // as the nvml probe does
  std::vector<Finding> out;
  GpuRules(snap, Thresholds(), out);
  auto it = std::find_if(out.begin(), out.end(),
                         [](const Finding& f) { return f.id == "gpu.memory.full"; });
  ASSERT_NE(it, out.end());
  ASSERT_GE(it->next_steps.size(), 3u);
  EXPECT_NE(it->next_steps.back().find("gpudoctor plan batching"), std::string::npos);
  auto has = [&](const std::string& text) {
    return std::any_of(it->next_steps.begin(), it->next_steps.end(),
                       [&](const auto& s) { return s.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("128 KiB per token"));
  EXPECT_TRUE(has("864 sequences of 512 tokens fit, only 216 of 2048"));
  EXPECT_TRUE(has("raises that to 432"));
  EXPECT_TRUE(has("on 80 GiB needs"));
  EXPECT_TRUE(has("`gpudoctor plan kv --model llama-3-8b --gpu 3 --context 2048`"));
  bool quoted = std::any_of(it->next_steps.begin(), it->next_steps.end(), [](const auto& s) {
    return s.find("tritonserver (Triton Inference Server)") != std::string::npos;
  });
  EXPECT_TRUE(quoted);

  // Without a server, the finding keeps only the catalogue's steps.
  snap.gpu.gpus = {FullGpu("python3")};
  snap.gpu.gpus[0].live_kv = LiveKvFactsFor(snap.gpu.gpus[0]);
  out.clear();
  GpuRules(snap, Thresholds(), out);
  it = std::find_if(out.begin(), out.end(),
                    [](const Finding& f) { return f.id == "gpu.memory.full"; });
  ASSERT_NE(it, out.end());
  for (const auto& s : it->next_steps) EXPECT_EQ(s.find("gpudoctor plan"), std::string::npos);
}

}  // namespace
}  // namespace gpudoctor::plan
