// Live advice: KV numbers in the gpu.memory.full finding when an inference server holds the GPU,
// and the static-batching saw-tooth detector that `watch` will call on its history.
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

TEST(PlanAdviceTest, QuotesThePlannersNumbersForThisGpu) {
  auto lines = KvAdviceForGpu(FullGpu("vllm"));
  ASSERT_EQ(lines.size(), 3u);
  // llama-3-8b on 80 GiB (see PlanKvTest.Llama3_8bOn80GiB): 912 sequences of 512 tokens, 228 of
  // 2048; fp8 KV halves the 128 KiB per token: floor(61249411328 / 65536) = 934590 tokens,
  // 58411 blocks, / 128 = 456 sequences of 2048.
  EXPECT_NE(lines[0].find("vllm (vLLM)"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("128 KiB per token"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("912 sequences of 512 tokens fit, only 228 of 2048"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("raises that to 456"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("`gpudoctor plan kv --model llama-3-8b --gpu 3 --context 2048`"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("gpudoctor plan batching"), std::string::npos);
}

TEST(PlanAdviceTest, NothingWithoutAnInferenceServerOrMemorySize) {
  EXPECT_TRUE(KvAdviceForGpu(FullGpu("python3")).empty());
  GpuFacts no_procs = FullGpu("vllm");
  no_procs.processes.reset();
  EXPECT_TRUE(KvAdviceForGpu(no_procs).empty());
  GpuFacts no_total = FullGpu("vllm");
  no_total.memory_total_bytes.reset();
  EXPECT_TRUE(KvAdviceForGpu(no_total).empty());
}

TEST(PlanAdviceTest, MemoryFullFindingCarriesTheAdvice) {
  Snapshot snap;
  snap.gpu.nvml.state = NvmlState::kOk;
  snap.gpu.gpus = {FullGpu("tritonserver")};
  std::vector<Finding> out;
  GpuRules(snap, Thresholds(), out);
  auto it = std::find_if(out.begin(), out.end(),
                         [](const Finding& f) { return f.id == "gpu.memory.full"; });
  ASSERT_NE(it, out.end());
  ASSERT_GE(it->next_steps.size(), 3u);
  EXPECT_NE(it->next_steps.back().find("gpudoctor plan batching"), std::string::npos);
  bool quoted = std::any_of(it->next_steps.begin(), it->next_steps.end(), [](const auto& s) {
    return s.find("tritonserver (Triton Inference Server)") != std::string::npos;
  });
  EXPECT_TRUE(quoted);

  // Without a server, the finding keeps only the catalogue's steps.
  snap.gpu.gpus = {FullGpu("python3")};
  out.clear();
  GpuRules(snap, Thresholds(), out);
  it = std::find_if(out.begin(), out.end(),
                    [](const Finding& f) { return f.id == "gpu.memory.full"; });
  ASSERT_NE(it, out.end());
  for (const auto& s : it->next_steps) EXPECT_EQ(s.find("gpudoctor plan"), std::string::npos);
}

std::vector<double> Square(int cycles, int high_len, int low_len, double high, double low) {
  std::vector<double> v;
  for (int c = 0; c < cycles; ++c) {
    v.insert(v.end(), high_len, high);
    v.insert(v.end(), low_len, low);
  }
  return v;
}

TEST(PlanAdviceTest, SawToothOfStaticBatchingIsDetected) {
  SawTooth s = DetectStaticBatchingSawTooth(Square(6, 5, 5, 97, 3));
  EXPECT_TRUE(s.detected);
  EXPECT_EQ(s.cycles, 5);  // six high phases: five complete high -> low -> high alternations
  EXPECT_DOUBLE_EQ(s.high_fraction, 0.5);
  EXPECT_DOUBLE_EQ(s.mean_util_pct, 50);
  // A few samples on the edges between phases do not hide it.
  auto v = Square(5, 6, 4, 90, 10);
  v[5] = 50;
  v[15] = 45;
  EXPECT_TRUE(DetectStaticBatchingSawTooth(v).detected);
}

TEST(PlanAdviceTest, SteadyOrNoisyUtilisationIsNotASawTooth) {
  EXPECT_FALSE(DetectStaticBatchingSawTooth(std::vector<double>(60, 95)).detected);
  EXPECT_FALSE(DetectStaticBatchingSawTooth(std::vector<double>(60, 2)).detected);
  EXPECT_FALSE(DetectStaticBatchingSawTooth({}).detected);
  // A job that started once: low, then high.
  std::vector<double> step(30, 0);
  step.insert(step.end(), 30, 100);
  EXPECT_FALSE(DetectStaticBatchingSawTooth(step).detected);
  // Utilisation spread over the whole range (a deterministic ramp 0..99, repeated).
  std::vector<double> ramp;
  for (int i = 0; i < 300; ++i) ramp.push_back((i * 37) % 100);
  EXPECT_FALSE(DetectStaticBatchingSawTooth(ramp).detected);
  // Too short to call.
  EXPECT_FALSE(DetectStaticBatchingSawTooth(Square(2, 2, 2, 99, 1)).detected);
  // Shallow: 60% <-> 30% is load following traffic, not idle/busy.
  EXPECT_FALSE(DetectStaticBatchingSawTooth(Square(6, 5, 5, 60, 30)).detected);
}

}  // namespace
}  // namespace gpudoctor::plan
