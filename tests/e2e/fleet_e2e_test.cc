// End-to-end: `gpudoctor fleet` on the generated fixture reports (tests/fixtures/fleet, from
// real check --json output plus edits), on a stream from stdin, against a fake Prometheus HTTP
// API on 127.0.0.1 (healthy, down, slow); and `check --npd` on fake NVML fixtures.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "test_util.h"

namespace gpudoctor {
namespace {

using nlohmann::json;
using testing::FixturePath;
using testing::RunGpudoctor;
using testing::RunResult;

json Parse(const RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

TEST(FleetE2eTest, ClusterReportsTableStragglersLemonsAndProblems) {
  RunResult r = RunGpudoctor({"fleet", "--json", "--reports", FixturePath("fleet/cluster")});
  ASSERT_EQ(r.exit_code, 2) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["nodes"][0]["node"], "node02");
  EXPECT_EQ(j["nodes"][0]["worst"], "crit");
  EXPECT_EQ(j["nodes"][0]["worst_id"], "gpu.ecc.dbe");
  EXPECT_EQ(j["nodes"][1]["node"], "node06");
  ASSERT_EQ(j["stragglers"].size(), 2u) << j["stragglers"].dump(2);
  EXPECT_EQ(j["stragglers"][0]["node"], "node03");
  EXPECT_EQ(j["stragglers"][0]["serial"], "SN-node03-2");
  EXPECT_EQ(j["stragglers"][0]["kind"], "hardware");
  EXPECT_EQ(j["stragglers"][0]["throttle_seen"], true);
  EXPECT_EQ(j["stragglers"][1]["node"], "node04");
  EXPECT_EQ(j["stragglers"][1]["kind"], "workload");
  // node05's one-window blip is not a straggler.
  for (const auto& s : j["stragglers"]) EXPECT_NE(s["node"], "node05");
  // node02's ECC finding comes and goes within 20 minutes: three onsets, one incident, so
  // not a lemon (a lemon needs three incidents more than an hour apart).
  EXPECT_EQ(j["nodes"][0]["onsets"], 3);
  EXPECT_TRUE(j["lemons"].empty()) << j["lemons"].dump(2);
  EXPECT_EQ(j["failure_stats"]["failures"], 3);
  EXPECT_EQ(j["failure_stats"]["categories"][1]["category"], "gpu_memory");
  EXPECT_EQ(j["failure_stats"]["categories"][1]["failures"], 3);
  // Every bad input is named: file and, where known, node.
  std::string problems = j["input_problems"].dump();
  for (const char* what : {"zz-truncated.json", "zz-not-a-report.json",
                           "duplicate report of node node01", "clock skew", "node09"}) {
    EXPECT_NE(problems.find(what), std::string::npos) << what << " in " << problems;
  }
}

TEST(FleetE2eTest, TextReportAndStdinStream) {
  RunResult text = RunGpudoctor({"fleet", "--reports", FixturePath("fleet/cluster")});
  EXPECT_EQ(text.exit_code, 2);
  for (const char* part : {"NODES (worst first)", "STRAGGLERS", "LEMONS", "FAILURES by root cause",
                           "x 10000 GPUs =", "INPUT PROBLEMS"}) {
    EXPECT_NE(text.out.find(part), std::string::npos) << part;
  }
  std::string stream;
  for (const char* f : {"node01-w0.json", "node02-w1.json", "zz-truncated.json"}) {
    stream += testing::ReadFileOrDie(FixturePath(std::string("fleet/cluster/") + f));
  }
  RunResult r =
      RunGpudoctor({"fleet", "--json", "--reports", "-"}, std::chrono::seconds(30), {}, stream);
  ASSERT_EQ(r.exit_code, 2) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["nodes_count"], 2);
  EXPECT_EQ(j["input_problems"][0]["source"], "stdin#3");
}

TEST(FleetE2eTest, NoUsableInputIsExit3) {
  RunResult r = RunGpudoctor({"fleet", "--reports", "/nonexistent/dir"});
  EXPECT_EQ(r.exit_code, 3);
  RunResult none = RunGpudoctor({"fleet"});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_NE(none.err.find("--reports"), std::string::npos);
}

TEST(FleetE2eTest, CardAndSlotVerdictsFromTheSwapHistory) {
  auto verdict = [](const std::vector<std::string>& what) {
    std::vector<std::string> args = {"fleet", "--json", "--reports", FixturePath("fleet/swap")};
    args.insert(args.end(), what.begin(), what.end());
    RunResult r = RunGpudoctor(args);
    return Parse(r);
  };
  json a = verdict({"card", "SN-A"});
  EXPECT_EQ(a["verdict"], "card");
  EXPECT_EQ(a["ledger"].size(), 2u);
  EXPECT_EQ(a["evidence"][0]["node"], "nodeA");
  EXPECT_EQ(a["evidence"][1]["node"], "nodeB");
  json slot = verdict({"slot", "nodeC:0000:3a:00.0"});
  EXPECT_EQ(slot["verdict"], "slot");
  EXPECT_EQ(slot["evidence"].size(), 2u);
  json d = verdict({"card", "SN-D"});
  EXPECT_EQ(d["verdict"], "undecided");
  EXPECT_NE(d["next_steps"].dump().find("healthy server"), std::string::npos);
  RunResult text = RunGpudoctor({"fleet", "--reports", FixturePath("fleet/swap"), "card", "SN-A"});
  EXPECT_NE(text.out.find("2026-01-12T00:00:00Z  crit gpu.xid  card SN-A in nodeB:0000:2a:00.0"),
            std::string::npos)
      << text.out;
}

// The one file in `dir` whose name ends with `suffix`, "" when none or several.
std::string OnlyFileEnding(const std::string& dir, const std::string& suffix) {
  std::string found;
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      found = e.path().string();
      ++n;
    }
  }
  return n == 1 ? found : "";
}

ino_t InodeOf(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST(FleetE2eTest, PlainRunWritesTheQueryIndexForTheFirstQuery) {
  testing::TempDir cache;
  const std::map<std::string, std::string> env = {{"XDG_CACHE_HOME", cache.path()}};
  const std::string reports = FixturePath("fleet/swap");
  RunResult run =
      RunGpudoctor({"fleet", "--json", "--reports", reports}, std::chrono::seconds(30), env);
  ASSERT_NE(run.exit_code, 3) << run.err;
  const std::string qindex = OnlyFileEnding(cache.path() + "/gpudoctor", ".idx.q");
  ASSERT_FALSE(qindex.empty()) << "a plain run wrote no query index";
  const ino_t written = InodeOf(qindex);
  ASSERT_NE(written, 0u);
  // The first query is answered from it: the file is not rewritten (a query that reads the
  // reports writes a new file, by rename), and the verdict is the full read's.
  RunResult card = RunGpudoctor({"fleet", "--json", "--reports", reports, "card", "SN-A"},
                                std::chrono::seconds(30), env);
  EXPECT_EQ(InodeOf(qindex), written);
  RunResult full = RunGpudoctor({"fleet", "--json", "--reports", reports, "card", "SN-A"},
                                std::chrono::seconds(30), {{"GPUDOCTOR_FLEET_INDEX", "off"}});
  EXPECT_EQ(card.exit_code, full.exit_code);
  EXPECT_EQ(card.out, full.out);
  EXPECT_EQ(Parse(card)["verdict"], "card");
  // Another plain run on the same reports leaves the fresh index alone.
  RunGpudoctor({"fleet", "--reports", reports}, std::chrono::seconds(30), env);
  EXPECT_EQ(InodeOf(qindex), written);
}

TEST(FleetE2eTest, TrustDirMtimeAnswersOnDirectoryStampsAndDefaultStillSeesInPlaceRewrites) {
  testing::TempDir cache, dir;
  const std::map<std::string, std::string> env = {{"XDG_CACHE_HOME", cache.path()}};
  const std::string reports = dir.path() + "/swap";
  std::filesystem::copy(FixturePath("fleet/swap"), reports);
  auto card = [&](bool trust) {
    std::vector<std::string> args = {"fleet", "--json", "--reports", reports, "card", "SN-A"};
    if (trust) args.push_back("--trust-dir-mtime");
    return RunGpudoctor(args, std::chrono::seconds(30), env);
  };
  RunResult run = RunGpudoctor({"fleet", "--reports", reports}, std::chrono::seconds(30), env);
  ASSERT_NE(run.exit_code, 3) << run.err;
  const std::string qindex = OnlyFileEnding(cache.path() + "/gpudoctor", ".idx.q");
  ASSERT_FALSE(qindex.empty());
  const ino_t written = InodeOf(qindex);
  RunResult full = RunGpudoctor({"fleet", "--json", "--reports", reports, "card", "SN-A"},
                                std::chrono::seconds(30), {{"GPUDOCTOR_FLEET_INDEX", "off"}});
  RunResult trusted = card(true);
  EXPECT_EQ(trusted.exit_code, full.exit_code) << trusted.err;
  EXPECT_EQ(trusted.out, full.out);
  EXPECT_EQ(InodeOf(qindex), written);  // answered from the index
  // A report rewritten in place (the same bytes, a later mtime; the directory untouched).
  const std::string victim = reports + "/nodeA-day1.json";
  struct stat st;
  ASSERT_EQ(::stat(victim.c_str(), &st), 0);
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;
  ASSERT_EQ(::utimensat(AT_FDCWD, victim.c_str(), times, 0), 0);
  // With the flag: not seen (no stat of the report), the index answers as it is.
  EXPECT_EQ(card(true).out, full.out);
  EXPECT_EQ(InodeOf(qindex), written);
  // By default: seen, the reports are read and the query index saved anew (by rename).
  EXPECT_EQ(card(false).out, full.out);
  const ino_t reread = InodeOf(qindex);
  EXPECT_NE(reread, written);
  // A report added: the directory's mtime moves, so the flag's query sees it too.
  std::filesystem::copy_file(reports + "/nodeA-day0.json", reports + "/zz-copy.json");
  card(true);
  EXPECT_NE(InodeOf(qindex), reread);
}

// "HOST: " before every line, as pdsh prints it.
std::string PdshLines(const std::string& host, const std::string& text) {
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out += host + ": " + text.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  return out;
}

TEST(FleetE2eTest, EveryInputPathSeesTheSameSwapHistory) {
  const std::string swap = FixturePath("fleet/swap");
  // Any bus-id spelling names the slot.
  for (const char* slot : {"nodeC:00000000:3A:00.0", "nodeC:0000:3A:00.0", "nodeC:3a:00.0"}) {
    RunResult r = RunGpudoctor({"fleet", "--json", "--reports", swap, "slot", slot});
    EXPECT_EQ(r.exit_code, 1) << slot << r.err;
    json j = Parse(r);
    EXPECT_EQ(j["verdict"], "slot") << slot;
    EXPECT_EQ(j["evidence"].size(), 2u) << slot;
  }
  // A mistyped serial is an error with the nearest serials, not "undecided".
  RunResult typo = RunGpudoctor({"fleet", "--reports", swap, "card", "SN-AX"});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_NE(typo.err.find("no such serial SN-AX"), std::string::npos) << typo.err;
  EXPECT_NE(typo.out.find("verdict unknown"), std::string::npos) << typo.out;
  EXPECT_NE(typo.out.find("nearest: SN-A"), std::string::npos) << typo.out;
  // The documented pdsh pipeline: every line prefixed, the hosts' lines interleaved, one
  // host's output cut off; the verdict is the one from the directory.
  std::vector<std::vector<std::string>> hosts;
  for (const auto& name : {"nodeA", "nodeB", "nodeC", "nodeD"}) {
    std::string text;
    for (const char* day : {"-day0.json", "-day1.json", "-day2.json"}) {
      text += testing::ReadFileOrDie(swap + "/" + name + day) + "\n";
    }
    std::vector<std::string> lines;
    std::string prefixed = PdshLines(name, text);
    for (size_t pos = 0; pos < prefixed.size();) {
      size_t end = prefixed.find('\n', pos) + 1;
      lines.push_back(prefixed.substr(pos, end - pos));
      pos = end;
    }
    hosts.push_back(lines);
  }
  std::string cut = testing::ReadFileOrDie(swap + "/nodeA-day0.json");
  hosts.push_back({});
  {
    std::string prefixed = PdshLines("nodeE", cut.substr(0, cut.size() / 2));
    for (size_t pos = 0; pos < prefixed.size();) {
      size_t end = prefixed.find('\n', pos) + 1;
      hosts.back().push_back(prefixed.substr(pos, end - pos));
      pos = end;
    }
  }
  std::string stream;
  for (size_t i = 0;; ++i) {
    bool any = false;
    for (const auto& h : hosts) {
      if (i < h.size()) stream += h[i], any = true;
    }
    if (!any) break;
  }
  RunResult dir = RunGpudoctor({"fleet", "--json", "--reports", swap, "card", "SN-A"});
  RunResult piped = RunGpudoctor({"fleet", "--json", "--reports", "-", "card", "SN-A"},
                                 std::chrono::seconds(30), {}, stream);
  EXPECT_EQ(piped.exit_code, 1) << piped.err;
  EXPECT_EQ(Parse(piped)["verdict"], "card");
  EXPECT_EQ(Parse(piped)["evidence"], Parse(dir)["evidence"]);
  RunResult all =
      RunGpudoctor({"fleet", "--json", "--reports", "-"}, std::chrono::seconds(30), {}, stream);
  json j = Parse(all);
  EXPECT_EQ(j["nodes_count"], 4);
  ASSERT_EQ(j["input_problems"].size(), 1u) << j["input_problems"].dump();
  EXPECT_EQ(j["input_problems"][0]["source"], "stdin:nodeE#1");
  // Reports in subdirectories (one per node) are read.
  testing::TempDir tree;
  for (const auto& entry : std::filesystem::directory_iterator(swap)) {
    std::string name = entry.path().filename().string();
    tree.Write(name.substr(0, 5) + "/" + name, testing::ReadFileOrDie(entry.path().string()));
  }
  RunResult nested = RunGpudoctor({"fleet", "--json", "--reports", tree.path(), "card", "SN-A"});
  EXPECT_EQ(nested.exit_code, 1) << nested.err;
  EXPECT_EQ(Parse(nested)["verdict"], "card");
  EXPECT_EQ(Parse(nested)["evidence"], Parse(dir)["evidence"]);
}

// A fake Prometheus: query_range answers for a few gpudoctor series of 4 nodes x 2 GPUs. As the
// exporter writes them, only gpudoctor_gpu_info carries the serial. With `swap`, card PS0 moves
// from p0 to p1 half-way (PS2 leaves p1, PSN comes into p0) and has a double-bit ECC error in
// each slot.
class FakePrometheus {
 public:
  explicit FakePrometheus(int delay_ms = 0, bool swap = false) {
    server_.Get("/api/v1/query_range", [delay_ms, swap](const httplib::Request& req,
                                                        httplib::Response& res) {
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      // The metric the PromQL reads (the first name in it, e.g. avg_over_time(NAME[300s])).
      std::string q = req.get_param_value("query");
      std::smatch name;
      if (std::regex_search(q, name, std::regex("gpudoctor_[a-z_]+|DCGM_FI_[A-Z_]+"))) q = name[0];
      int64_t start = std::stoll(req.get_param_value("start"));
      int64_t step = std::stoll(req.get_param_value("step"));
      json result = json::array();
      if (q == "gpudoctor_gpu_sm_clock_hertz" || q == "gpudoctor_gpu_utilization_ratio") {
        for (int n = 0; n < 4; ++n) {
          for (int g = 0; g < 2; ++g) {
            json values = json::array();
            for (int w = 0; w < 6; ++w) {
              double v = q == "gpudoctor_gpu_utilization_ratio" ? 0.97
                         : (n == 3 && g == 1)                   ? 1.2e9
                                                                : 1.98e9 - g * 1e6;
              values.push_back({start + w * step, std::to_string(v)});
            }
            result.push_back({{"metric",
                               {{"hostname", "p" + std::to_string(n)},
                                {"gpu", std::to_string(g)},
                                {"uuid", "U" + std::to_string(n * 2 + g)},
                                {"pci_bus_id", "0000:1" + std::to_string(g) + ":00.0"},
                                {"model", "NVIDIA H100 80GB HBM3"}}},
                              {"values", values}});
          }
        }
      }
      auto series = [&](json labels, int from, int to) {
        json values = json::array();
        for (int w = from; w < to; ++w) values.push_back({start + w * step, "1"});
        result.push_back({{"metric", labels}, {"values", values}});
      };
      if (q == "gpudoctor_gpu_info") {
        for (int n = 0; n < 4; ++n) {
          for (int g = 0; g < 2; ++g) {
            std::string serial = "PS" + std::to_string(n * 2 + g);
            json labels = {{"hostname", "p" + std::to_string(n)},
                           {"gpu", std::to_string(g)},
                           {"uuid", "U" + std::to_string(n * 2 + g)},
                           {"pci_bus_id", "0000:1" + std::to_string(g) + ":00.0"},
                           {"serial", serial},
                           {"vbios", "96.00"}};
            if (!swap || g != 0 || n > 1) {
              series(labels, 0, 6);
              continue;
            }
            series(labels, 0, 3);
            labels["serial"] = n == 0 ? "PSN" : "PS0";
            series(labels, 3, 6);
          }
        }
      }
      if (q == "gpudoctor_finding_active" && swap) {
        for (int n = 0; n < 2; ++n) {
          series({{"hostname", "p" + std::to_string(n)},
                  {"id", "gpu.ecc.dbe"},
                  {"severity", "crit"},
                  {"layer", "hardware"},
                  {"action", "drain_reset"},
                  {"gpu", "0"},
                  {"pci_bus_id", "0000:10:00.0"}},
                 n == 0 ? 1 : 4, n == 0 ? 2 : 5);
        }
      }
      json body = {{"status", "success"}, {"data", {{"resultType", "matrix"}, {"result", result}}}};
      res.set_content(body.dump(), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // Bound and listening already: requests queue until the thread accepts them.
  }
  ~FakePrometheus() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(FleetE2eTest, PrometheusSeriesFindTheStraggler) {
  FakePrometheus prom;
  RunResult r = RunGpudoctor({"fleet", "--json", "--prometheus", prom.url(), "--since", "30m"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["nodes_count"], 4);
  ASSERT_EQ(j["stragglers"].size(), 1u) << j["stragglers"].dump(2);
  EXPECT_EQ(j["stragglers"][0]["node"], "p3");
  EXPECT_EQ(j["stragglers"][0]["serial"], "PS7");
  EXPECT_EQ(j["stragglers"][0]["kind"], "hardware");
}

TEST(FleetE2eTest, PrometheusCardAndSlotVerdictsJoinGpuInfo) {
  FakePrometheus prom(0, /*swap=*/true);
  auto verdict = [&](const std::vector<std::string>& what) {
    std::vector<std::string> args = {"fleet",    "--json",  "--prometheus",
                                     prom.url(), "--since", "30m"};
    args.insert(args.end(), what.begin(), what.end());
    RunResult r = RunGpudoctor(args);
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    return Parse(r);
  };
  json card = verdict({"card", "PS0"});
  EXPECT_EQ(card["verdict"], "card") << card.dump(2);
  EXPECT_EQ(card["ledger"].size(), 2u);
  ASSERT_EQ(card["evidence"].size(), 2u);
  EXPECT_EQ(card["evidence"][0]["serial"], "PS0");
  EXPECT_EQ(card["evidence"][1]["node"], "p1");
  json slot = verdict({"slot", "p1:00000000:10:00.0"});
  EXPECT_EQ(slot["verdict"], "card") << slot.dump(2);
  json typo = verdict({"card", "PS00"});
  EXPECT_EQ(typo["verdict"], "unknown");
  EXPECT_EQ(typo["nearest"][0], "PS0");
}

TEST(FleetE2eTest, PrometheusDownOrSlowIsNamedAndBounded) {
  uint16_t port = 0;
  int fd = testing::BindLoopback(0, &port);  // bound, nothing listening: connection refused
  RunResult down =
      RunGpudoctor({"fleet", "--prometheus", "http://127.0.0.1:" + std::to_string(port)});
  close(fd);
  EXPECT_EQ(down.exit_code, 3);
  EXPECT_NE(down.err.find("did not answer"), std::string::npos) << down.err;

  FakePrometheus slow(3000);
  RunResult r = RunGpudoctor({"fleet", "--prometheus", slow.url(), "--deadline", "1"},
                             std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(slow.url()), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5.0);
}

// node-problem-detector plugin contract on fake NVML fixtures.
RunResult Npd(const std::string& scenario, const std::string& layer) {
  std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  return RunGpudoctor({"check", "--npd", "--npd-layer", layer, "--probes", "nvml,pci_gpu",
                       "--nvml-lib", lib, "--path.sysfs", FixturePath("sysfs/hgx_h100")},
                      std::chrono::seconds(30),
                      {{"FAKE_NVML_SCENARIO", FixturePath("nvml/" + scenario)}});
}

TEST(NpdE2eTest, PluginContractOnFixtures) {
  RunResult sick = Npd("ecc_dbe.scenario", "hardware");
  EXPECT_EQ(sick.exit_code, 1);
  EXPECT_EQ(sick.out.rfind("gpu.ecc.dbe GPU1 [drain_reset]: ", 0), 0u) << sick.out;
  EXPECT_EQ(std::count(sick.out.begin(), sick.out.end(), '\n'), 1);
  EXPECT_LE(sick.out.size(), 201u);
  RunResult other_layer = Npd("ecc_dbe.scenario", "network");
  EXPECT_EQ(other_layer.exit_code, 0);
  EXPECT_EQ(other_layer.out, "ok\n");
  RunResult healthy = Npd("h100_healthy.scenario", "hardware");
  EXPECT_EQ(healthy.exit_code, 0);
  EXPECT_EQ(healthy.out, "ok\n");
  RunResult unknown = RunGpudoctor(
      {"check", "--npd", "--probes", "nvml", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.out.rfind("unknown: ", 0), 0u) << unknown.out;
}

}  // namespace
}  // namespace gpudoctor
