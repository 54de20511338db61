// Golden end-to-end tests (DESIGN.md convention 8): the built binary's whole JSON output on
// fixture inputs is compared with tests/e2e/golden/<case>.json. Fields that differ from run to
// run (time, durations, host name, absolute paths, the owner of the checkout's files) are
// normalised first. Every input comes from fixtures: the check cases get their own /proc
// (tests/fixtures/procfs/golden_gpu_jobs), never the test machine's.
// Regenerate after an intended change: GPUDOCTOR_UPDATE_GOLDEN=1 build/tests/e2e_tests
//   --gtest_filter='Golden*', then review the diff like code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace gpudoctor {
namespace {

using nlohmann::ordered_json;
using testing::FixturePath;
using testing::RunGpudoctor;

struct GoldenCase {
  std::string name;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
};

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
}

// Removes what legitimately changes between runs and machines.
void Normalise(ordered_json& j) {
  if (j.is_object()) {
    for (const char* volatile_key :
         {"time", "duration_ms", "host", "ms", "waited_ms", "window_s", "user"}) {
      if (j.contains(volatile_key)) j[volatile_key] = "<varies>";
    }
    for (auto& [k, v] : j.items()) Normalise(v);
  } else if (j.is_array()) {
    for (auto& v : j) Normalise(v);
  } else if (j.is_string()) {
    std::string s = j.get<std::string>();
    ReplaceAll(s, GPUDOCTOR_BUILD_DIR, "<build>");
    ReplaceAll(s, GPUDOCTOR_SOURCE_DIR, "<src>");
    j = s;
  }
}

std::vector<GoldenCase> Cases() {
  std::string fake = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  std::vector<GoldenCase> cases;
  for (const char* log : {"dmesg_r535_h100", "dmesg_T_r470_v100", "journal_short_iso_r560_gh200",
                          "kmsg_raw_r570_b200"}) {
    cases.push_back({std::string("logs_") + log,
                     {"logs", "--json", FixturePath(std::string("kmsg/") + log + ".log")},
                     {{"TZ", "UTC"}}});
  }
  for (const char* scenario :
       {"h100_healthy", "ecc_dbe", "remap_failed", "gpu_missing", "persistence_off", "thermal"}) {
    std::string sysfs = "sysfs/hgx_h100";
    cases.push_back(
        {std::string("check_gpu_") + scenario,
         {"check", "--json", "--probes", "nvml,pci_gpu", "--nvml-lib", fake, "--path.sysfs",
          FixturePath(sysfs), "--path.procfs", FixturePath("procfs/golden_gpu_jobs")},
         {{"FAKE_NVML_SCENARIO", FixturePath(std::string("nvml/") + scenario + ".scenario")}}});
  }
  return cases;
}

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, OutputMatchesGoldenFile) {
  const GoldenCase& c = GetParam();
  auto r = RunGpudoctor(c.args, std::chrono::seconds(30), c.env);
  ASSERT_GE(r.exit_code, 0) << r.err;
  ASSERT_LE(r.exit_code, 2) << r.err;
  ordered_json got = ordered_json::parse(r.out);
  got["exit_code"] = r.exit_code;
  Normalise(got);
  std::string path = std::string(GPUDOCTOR_SOURCE_DIR) + "/tests/e2e/golden/" + c.name + ".json";
  const char* update = std::getenv("GPUDOCTOR_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path) << got.dump(2) << "\n";
    GTEST_SKIP() << "golden file rewritten: " << path;
  }
  ordered_json want = ordered_json::parse(testing::ReadFileOrDie(path));
  EXPECT_EQ(got, want) << "output of `gpudoctor " << c.args[0] << "` for " << c.name
                       << " changed; if intended, regenerate with GPUDOCTOR_UPDATE_GOLDEN=1\n"
                       << "got:\n"
                       << got.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Outputs, GoldenTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace gpudoctor
