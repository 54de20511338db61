// End-to-end: how many shared objects the real binary maps (issue 23: `check` maps <= 12).
// Counted from the dynamic loader's own trace (LD_DEBUG=files) over the whole run: every shared
// object it opened for the process, whether needed at start-up or loaded later with dlopen (NVML,
// libcurl, libsystemd, the fleet module), plus the loader itself; not the program, not the vDSO.
// An object loaded and unloaded again still counts. Only the traced process's own lines count
// (the pid that opens the first object), not those of programs it starts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::FixturePath;
using testing::RunGpudoctor;
using testing::RunResult;
using testing::TempDir;

// File names (last path component) of the objects LD_DEBUG=files reports for the first pid seen.
std::set<std::string> LoadedObjects(const std::string& ld_debug) {
  static const std::regex line(
      R"(^\s*(\d+):\s+file=(\S+) \[\d+\];\s+(needed by|dynamically loaded by))");
  std::set<std::string> names;
  std::string pid;
  std::istringstream in(ld_debug);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    if (pid.empty()) pid = m[1];
    if (m[1] != pid) continue;
    names.insert(std::filesystem::path(m[2].str()).filename());
  }
  return names;
}

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& n : s) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::map<std::string, std::string> TraceEnv() {
  return {{"LD_DEBUG", "files"}, {"FAKE_NVML_SCENARIO", FixturePath("nvml/h100_healthy.scenario")}};
}

TEST(SharedObjectsE2eTest, CheckMapsAtMostTwelve) {
  // The default check on this host (the gateway ping left out, as every test must) on the fake
  // NVML, reading /dev/kmsg: where that cannot be opened, the journal fallback would add
  // libsystemd and its six libraries (not counted here, see docs/cost.md).
  RunResult r = RunGpudoctor({"check", "--skip-probes", "reachability", "--kmsg-source", "kmsg",
                              "--nvml-lib", testing::FakeNvmlLib()},
                             std::chrono::seconds(60), TraceEnv());
  ASSERT_GE(r.exit_code, 0) << r.err.substr(0, 4000);
  ASSERT_LE(r.exit_code, 2) << r.out << r.err.substr(0, 4000);
  std::set<std::string> objs = LoadedObjects(r.err);
  objs.insert("ld-linux-x86-64.so.2");  // the loader maps itself; not in its trace
  ASSERT_TRUE(objs.count("libnvidia-ml.so.1")) << "the trace did not see NVML: " << Join(objs);
  EXPECT_LE(objs.size(), 12u) << Join(objs);
  // What only some commands need is not mapped by check.
  for (const char* lib :
       {"libsimdjson.so.14", "gpudoctor_fleet_json.so", "libsqlite3.so.0", "libncursesw.so.6",
        "libtinfo.so.6", "libtomlplusplus.so.3", "libcurl.so.4", "libz.so.1"}) {
    EXPECT_FALSE(objs.count(lib)) << lib << " mapped by check: " << Join(objs);
  }
  std::printf("check mapped %zu shared objects: %s\n", objs.size(), Join(objs).c_str());
}

TEST(SharedObjectsE2eTest, FleetLoadsSimdjsonThroughItsModule) {
  RunResult r = RunGpudoctor({"fleet", "--json", "--reports", FixturePath("fleet/cluster")},
                             std::chrono::seconds(60), TraceEnv());
  ASSERT_EQ(r.exit_code, 2) << r.err.substr(0, 4000);  // the cluster has a crit node
  std::set<std::string> objs = LoadedObjects(r.err);
  EXPECT_TRUE(objs.count("gpudoctor_fleet_json.so")) << Join(objs);
  EXPECT_TRUE(objs.count("libsimdjson.so.14")) << Join(objs);
}

TEST(SharedObjectsE2eTest, FleetWithoutItsModuleSaysWhatIsMissing) {
  // The binary alone in a directory: no module next to it nor in ../lib/gpudoctor.
  TempDir tmp;
  const std::string alone = tmp.path() + "/bin/gpudoctor";
  std::filesystem::create_directories(tmp.path() + "/bin");
  std::filesystem::copy_file(GPUDOCTOR_BIN, alone);
  std::vector<std::string> args = {alone, "fleet", "--json", "--reports",
                                   FixturePath("fleet/cluster")};
  RunResult r = testing::RunProgram(args, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("gpudoctor_fleet_json.so"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GPUDOCTOR_MODULE_DIR"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("$ORIGIN/../lib/gpudoctor/gpudoctor_fleet_json.so"), std::string::npos)
      << "the error should name the paths tried: " << r.err;
  EXPECT_NE(r.err.find("$ORIGIN is " + std::filesystem::canonical(tmp.path()).string() + "/bin"),
            std::string::npos)
      << r.err;
  // Other commands do not need it.
  RunResult v = testing::RunProgram({alone, "--version"}, std::chrono::seconds(30));
  EXPECT_EQ(v.exit_code, 0) << v.err;
  // A shared object of that name that is not the module (another build's would be refused the
  // same way, by its ABI number, struct sizes or revision) is named as such.
  std::filesystem::create_directories(tmp.path() + "/wrong");
  std::filesystem::create_symlink(testing::FakeNvmlLib(),
                                  tmp.path() + "/wrong/gpudoctor_fleet_json.so");
  RunResult wrong = testing::RunProgram(args, std::chrono::seconds(60),
                                        {{"GPUDOCTOR_MODULE_DIR", tmp.path() + "/wrong"}});
  EXPECT_EQ(wrong.exit_code, 3) << wrong.out << wrong.err;
  EXPECT_NE(wrong.err.find("no symbol gpudoctor_fleet_json_module_v2"), std::string::npos)
      << wrong.err;
  // GPUDOCTOR_MODULE_DIR points at one.
  RunResult ok = testing::RunProgram(args, std::chrono::seconds(60),
                                     {{"GPUDOCTOR_MODULE_DIR", GPUDOCTOR_BUILD_DIR}});
  EXPECT_EQ(ok.exit_code, 2) << ok.err;
  EXPECT_NE(ok.out.find("\"stragglers\""), std::string::npos) << ok.out.substr(0, 2000);
}

}  // namespace
}  // namespace gpudoctor
