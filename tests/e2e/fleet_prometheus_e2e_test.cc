// `gpudoctor fleet --prometheus` at fleet scale and behind TLS and authentication:
//  - a stand-in Prometheus on 127.0.0.1 answering query_range for N synthetic GPUs: the number
//    of queries does not grow with N, the bytes grow with GPUs x windows, and every query asks
//    Prometheus for a per-window aggregate (never raw samples);
//  - a real Prometheus (Debian's) scraping two `gpudoctor watch` daemons on the fake NVML: the
//    straggler of one node is found with its serial from gpudoctor_gpu_info;
//  - https with a CA made in the test, bearer token and basic auth: right credentials give the
//    data; wrong ones an error naming the URL and the HTTP status; the wrong CA a TLS error; the
//    secrets appear in no output.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "child_process.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using nlohmann::json;
using testing::FixturePath;
using testing::RunGpudoctor;
using testing::RunProgram;
using testing::RunResult;
using testing::TempDir;

json Parse(const RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

// The answer a Prometheus would give to one of fleet's queries over `nodes` x 8 H100s: labels as
// the query's `by` clause leaves them, one point per step. GPU 3 of node 7 is slow under a HW
// slowdown. Nodes export gpudoctor_gpu_info, so the DCGM queries answer nothing.
std::string FleetAnswer(const std::string& query, int64_t start, int64_t end, int64_t step,
                        int nodes) {
  std::smatch m;
  std::string metric;
  if (std::regex_search(query, m, std::regex("gpudoctor_[a-z_]+|DCGM_FI_[A-Z_]+"))) metric = m[0];
  std::string out = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  bool first_series = true;
  auto series = [&](const std::string& labels, const std::function<std::string(int64_t)>& value) {
    if (!first_series) out += ',';
    first_series = false;
    out += R"({"metric":{)" + labels + R"(},"values":[)";
    for (int64_t t = start; t <= end; t += step) {
      if (t != start) out += ',';
      out += "[" + std::to_string(t) + ",\"" + value(t) + "\"]";
    }
    out += "]}";
  };
  for (int n = 0; n < nodes && metric.rfind("gpudoctor_", 0) == 0; ++n) {
    for (int g = 0; g < 8; ++g) {
      char bus[32];
      std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x18 + g * 0x10);
      std::string id = "\"hostname\":\"node" + std::to_string(n) + "\",\"gpu\":\"" +
                       std::to_string(g) + "\",\"pci_bus_id\":\"" + bus + "\"";
      const bool slow = n == 7 && g == 3;
      if (metric == "gpudoctor_gpu_info") {
        series(id + ",\"uuid\":\"GPU-" + std::to_string(n * 8 + g) +
                   "\",\"model\":\"NVIDIA H100 80GB HBM3\",\"serial\":\"SN" +
                   std::to_string(100000 + n * 8 + g) + "\"",
               [](int64_t) { return "1"; });
      } else if (metric == "gpudoctor_gpu_sm_clock_hertz") {
        series(id, [&](int64_t) { return slow ? "1200000000" : "1980000000"; });
      } else if (metric == "gpudoctor_gpu_utilization_ratio") {
        series(id, [](int64_t) { return "0.97"; });
      } else if (metric == "gpudoctor_gpu_power_watts") {
        series(id, [](int64_t) { return "655.5"; });
      } else if (metric == "gpudoctor_gpu_temperature_celsius") {
        series(id, [](int64_t) { return "61.5"; });
      } else if (metric == "gpudoctor_gpu_throttle_active" && slow) {
        series(id + ",\"reason\":\"hw_slowdown\"", [](int64_t) { return "1"; });
      } else if (metric.find("_total") != std::string::npos) {
        series(id, [](int64_t) { return "0"; });
      } else if (metric == "gpudoctor_gpu_power_limit_watts") {
        series(id, [](int64_t) { return "700"; });
      }
    }
  }
  return out + "]}}";
}

// A stand-in Prometheus on 127.0.0.1: answers every query_range with FleetAnswer and counts the
// requests and the bytes it sent. A query that is no per-window aggregate (a raw selector, a
// range other than the step) is refused with 400, as a cost bound the reader must keep.
class StandInPrometheus {
 public:
  explicit StandInPrometheus(int nodes, std::unique_ptr<httplib::Server> server = nullptr,
                             std::function<bool(const httplib::Request&)> authorized = nullptr)
      : server_(server ? std::move(server) : std::make_unique<httplib::Server>()) {
    server_->Get("/api/v1/query_range", [this, nodes, authorized](const httplib::Request& req,
                                                                  httplib::Response& res) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++requests_;
      }
      if (authorized && !authorized(req)) {
        res.status = 401;
        res.set_content(R"({"status":"error","errorType":"unauthorized","error":"no"})",
                        "application/json");
        return;
      }
      std::string q = req.get_param_value("query");
      int64_t start = std::stoll(req.get_param_value("start"));
      int64_t end = std::stoll(req.get_param_value("end"));
      int64_t step = std::stoll(req.get_param_value("step"));
      std::string range = "[" + std::to_string(step) + "s]";
      if (q.find("_over_time(") == std::string::npos || q.find(range) == std::string::npos) {
        res.status = 400;
        res.set_content(R"({"status":"error","errorType":"bad_data","error":"raw samples"})",
                        "application/json");
        std::lock_guard<std::mutex> lock(mu_);
        refused_.push_back(q);
        return;
      }
      std::string body = FleetAnswer(q, start, end, step, nodes);
      std::lock_guard<std::mutex> lock(mu_);
      ++queries_;
      bytes_ += body.size();
      windows_ = (end - start) / step + 1;
      res.set_content(body, "application/json");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
  }
  ~StandInPrometheus() {
    server_->stop();
    thread_.join();
  }
  std::string url(const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_);
  }
  // Answered queries, and every request that reached the handler (refused ones too).
  int queries() {
    std::lock_guard<std::mutex> lock(mu_);
    return queries_;
  }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  size_t bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return bytes_;
  }
  int64_t windows() {
    std::lock_guard<std::mutex> lock(mu_);
    return windows_;
  }
  std::vector<std::string> refused() {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_;
  }

 private:
  std::unique_ptr<httplib::Server> server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  int queries_ = 0, requests_ = 0;
  size_t bytes_ = 0;
  int64_t windows_ = 0;
  std::vector<std::string> refused_;
};

struct Cost {
  int queries;
  size_t bytes;
  int64_t windows;
};

Cost ReadFleet(int nodes, const std::string& since) {
  StandInPrometheus prom(nodes);
  RunResult r = RunGpudoctor(
      {"fleet", "--json", "--prometheus", prom.url(), "--since", since, "--deadline", "100"},
      std::chrono::seconds(120));
  EXPECT_EQ(r.exit_code, 1) << r.err;  // the hardware straggler
  EXPECT_TRUE(prom.refused().empty()) << prom.refused().front();
  json j = Parse(r);
  EXPECT_EQ(j["nodes_count"], nodes);
  EXPECT_TRUE(j["input_problems"].empty()) << j["input_problems"].dump();
  if (j["stragglers"].size() == 1) {
    EXPECT_EQ(j["stragglers"][0]["node"], "node7");
    EXPECT_EQ(j["stragglers"][0]["serial"], "SN100059");
    EXPECT_EQ(j["stragglers"][0]["kind"], "hardware");
  } else {
    ADD_FAILURE() << j["stragglers"].dump(2);
  }
  return {prom.queries(), prom.bytes(), prom.windows()};
}

TEST(FleetPrometheusScaleTest, QueriesDoNotGrowWithGpusAndBytesScaleWithGpusTimesWindows) {
  Cost small = ReadFleet(16, "1h");    // 128 GPUs
  Cost large = ReadFleet(512, "1h");   // 4,096 GPUs
  Cost longer = ReadFleet(512, "4h");  // 4,096 GPUs, 4x the windows
  // One query per metric, whatever the number of GPUs or windows.
  EXPECT_EQ(small.queries, large.queries);
  EXPECT_EQ(large.queries, longer.queries);
  EXPECT_LE(large.queries, 20);
  EXPECT_GE(large.windows, 12);
  EXPECT_GE(longer.windows, 4 * large.windows - 4);
  // 32x the GPUs: 32x the bytes (labels and points are per GPU).
  double gpu_ratio = double(large.bytes) / double(small.bytes);
  EXPECT_GT(gpu_ratio, 30.0);
  EXPECT_LT(gpu_ratio, 34.0);
  // More windows: bytes grow with the windows (the per-GPU labels are paid once per query).
  double window_ratio = double(longer.bytes) / double(large.bytes);
  EXPECT_GT(window_ratio, 2.0);
  EXPECT_LT(window_ratio, double(longer.windows) / double(large.windows) + 0.1);
  // O(GPUs x windows) numbers: a few dozen bytes per GPU, window and metric.
  double per_number = double(longer.bytes) / (4096.0 * double(longer.windows) * 10);
  EXPECT_LT(per_number, 40.0) << longer.bytes;
  std::printf(
      "[ cost ] 128 GPUs: %d queries %zu bytes; 4096 GPUs: %d queries %zu bytes "
      "(%lld windows); %lld windows: %zu bytes\n",
      small.queries, small.bytes, large.queries, large.bytes, static_cast<long long>(large.windows),
      static_cast<long long>(longer.windows), longer.bytes);
}

// ---- A real Prometheus scraping two watch daemons -------------------------------------------

using testing::FreePort;
using Child = testing::ChildProcess;

TEST(FleetPrometheusRealTest, TwoWatchNodesScrapedByPrometheus) {
  const std::string prom_bin = "/usr/bin/prometheus";
  ASSERT_TRUE(std::filesystem::exists(prom_bin))
      << "Debian's prometheus is needed (scripts/install-deps.sh installs it)";
  TempDir dir;
  // nodeA: 8 busy H100s; nodeB: the same with GPU 4 slow under a HW slowdown, its own serials.
  dir.Write("a.scenario", "include=" + FixturePath("nvml/h100_busy.scenario") + "\n");
  std::string b = "include=" + FixturePath("nvml/hw_slowdown.scenario") + "\n";
  for (int g = 0; g < 8; ++g) {
    b += "gpu." + std::to_string(g) + ".serial=27000000000" + std::to_string(g) + "\n";
    b += "gpu." + std::to_string(g) + ".uuid=GPU-b0000000-0000-4000-8000-00000000000" +
         std::to_string(g) + "\n";
  }
  dir.Write("b.scenario", b);
  const std::string lib = std::string(GPUDOCTOR_BUILD_DIR) + "/tests/fake_nvml/libnvidia-ml.so.1";
  int port_a = FreePort(), port_b = FreePort(), prom_port = FreePort();
  auto watch = [&](const std::string& name, int port) {
    return std::make_unique<Child>(
        std::vector<std::string>{GPUDOCTOR_BIN, "watch", "--interval", "1", "--no-db", "--probes",
                                 "nvml,pci_gpu", "--nvml-lib", lib, "--path.sysfs",
                                 FixturePath("sysfs/hgx_h100"), "--listen",
                                 "127.0.0.1:" + std::to_string(port)},
        std::map<std::string, std::string>{
            {"FAKE_NVML_SCENARIO", dir.path() + "/" + name + ".scenario"}},
        dir.path() + "/" + name + ".log");
  };
  auto a = watch("a", port_a);
  auto bw = watch("b", port_b);
  // Both daemons run on this host: the scrape sets `hostname` from the target's `node` label.
  std::ofstream(dir.path() + "/prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
      << "  - job_name: gpudoctor\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << port_a << "']\n        labels: {node: nodeA}\n"
      << "      - targets: ['127.0.0.1:" << port_b << "']\n        labels: {node: nodeB}\n"
      << "    metric_relabel_configs:\n"
      << "      - source_labels: [node]\n        target_label: hostname\n"
      << "      - regex: node\n        action: labeldrop\n";
  Child prom({prom_bin, "--config.file=" + dir.path() + "/prometheus.yml",
              "--storage.tsdb.path=" + dir.path() + "/tsdb",
              "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
             {}, dir.path() + "/prometheus.log");
  httplib::Client c("127.0.0.1", prom_port);
  c.set_read_timeout(5, 0);
  auto count = [&](const std::string& q) -> size_t {
    auto r = c.Get(("/api/v1/query?query=" + httplib::detail::encode_query_param(q)).c_str());
    if (!r || r->status != 200) return 0;
    json j = json::parse(r->body, nullptr, false);
    return j.is_object() ? j["data"]["result"].size() : 0;
  };
  // Both nodes' GPUs scraped for 12 s (six 2 s windows).
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        return count("count_over_time(gpudoctor_gpu_info{hostname=~\"nodeA|nodeB\"}[12s]) >= 10") ==
               16;
      },
      std::chrono::seconds(90), std::chrono::milliseconds(500)))
      << prom.Log() << a->Log() << bw->Log();
  const std::string url = "http://127.0.0.1:" + std::to_string(prom_port);
  RunResult r =
      RunGpudoctor({"fleet", "--json", "--prometheus", url, "--since", "12s", "--window", "2"},
                   std::chrono::seconds(60));
  ASSERT_GE(r.exit_code, 1) << r.err;
  ASSERT_LE(r.exit_code, 2) << r.err;
  json j = Parse(r);
  EXPECT_EQ(j["nodes_count"], 2) << j.dump(2);
  ASSERT_EQ(j["stragglers"].size(), 1u) << j["stragglers"].dump(2);
  EXPECT_EQ(j["stragglers"][0]["node"], "nodeB");
  EXPECT_EQ(j["stragglers"][0]["serial"], "270000000004");
  EXPECT_EQ(j["stragglers"][0]["kind"], "hardware");
  for (const auto& p : j["input_problems"]) {
    EXPECT_EQ(p["message"].get<std::string>().find("two slots"), std::string::npos) << p.dump();
  }
  // Card and slot queries see the serials joined from gpudoctor_gpu_info.
  RunResult card = RunGpudoctor({"fleet", "--json", "--prometheus", url, "--since", "12s",
                                 "--window", "2", "card", "270000000004"},
                                std::chrono::seconds(60));
  json v = Parse(card);
  EXPECT_NE(v["verdict"], "unknown") << v.dump(2);
  ASSERT_GE(v["ledger"].size(), 1u) << v.dump(2);
  EXPECT_EQ(v["ledger"][0]["node"], "nodeB");
}

// ---- https, bearer token, basic auth --------------------------------------------------------

// A CA and a server certificate for 127.0.0.1 signed by it (openssl CLI), in `dir`.
void MakeCa(const TempDir& dir, const std::string& name) {
  const std::string d = dir.path() + "/";
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "/usr/bin/openssl");
    RunResult r = RunProgram(args, std::chrono::seconds(30));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  };
  run({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
       d + name + "-ca.key", "-out", d + name + "-ca.pem", "-days", "2", "-subj",
       "/CN=" + name + " test CA"});
  run({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
       d + name + "-server.key", "-out", d + name + "-server.csr", "-subj", "/CN=127.0.0.1"});
  dir.Write(name + "-ext.cnf", "subjectAltName=IP:127.0.0.1\n");
  run({"x509", "-req", "-in", d + name + "-server.csr", "-CA", d + name + "-ca.pem", "-CAkey",
       d + name + "-ca.key", "-CAcreateserial", "-out", d + name + "-server.pem", "-days", "2",
       "-extfile", d + name + "-ext.cnf"});
}

std::string Base64(const std::string& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) n |= uint32_t(uint8_t(in[i + 1])) << 8;
    if (i + 2 < in.size()) n |= uint8_t(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

constexpr const char* kToken = "tok-3f9a7c1e5b";
constexpr const char* kPassword = "pw 8d2b6e0a";  // a space: passwords may have one

class FleetPrometheusTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists("/usr/bin/openssl")) << "the openssl CLI is needed";
    MakeCa(dir_, "good");
    MakeCa(dir_, "other");
    dir_.Write("token", std::string(kToken) + "\n");
    dir_.Write("wrong-token", "tok-wrong\n");
    dir_.Write("password", std::string(kPassword) + "\n");
    dir_.Write("wrong-password", "nope\n");
    for (const char* f : {"token", "wrong-token", "password", "wrong-password"}) {
      ::chmod((dir_.path() + "/" + f).c_str(), 0600);
    }
    const std::string d = dir_.path() + "/";
    auto server = std::make_unique<httplib::SSLServer>((d + "good-server.pem").c_str(),
                                                       (d + "good-server.key").c_str());
    ASSERT_TRUE(server->is_valid());
    std::string basic = "Basic " + Base64(std::string("fleet:") + kPassword);
    prom_ = std::make_unique<StandInPrometheus>(
        8, std::move(server), [basic](const httplib::Request& req) {
          std::string auth = req.get_header_value("Authorization");
          return auth == std::string("Bearer ") + kToken || auth == basic;
        });
  }
  RunResult Fleet(std::vector<std::string> extra) {
    std::vector<std::string> args = {"fleet",   "--json", "--prometheus", prom_->url("https"),
                                     "--since", "30m"};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = RunGpudoctor(args, std::chrono::seconds(60));
    for (const std::string& secret : {std::string(kToken), std::string(kPassword)}) {
      EXPECT_EQ(r.out.find(secret), std::string::npos) << "secret in stdout";
      EXPECT_EQ(r.err.find(secret), std::string::npos) << "secret in stderr: " << r.err;
    }
    return r;
  }
  std::string F(const char* name) { return dir_.path() + "/" + name; }
  TempDir dir_;
  std::unique_ptr<StandInPrometheus> prom_;
};

TEST_F(FleetPrometheusTlsTest, RightCredentialsGiveTheData) {
  RunResult bearer =
      Fleet({"--prometheus-ca", F("good-ca.pem"), "--prometheus-token-file", F("token")});
  EXPECT_EQ(bearer.exit_code, 1) << bearer.err;  // node7's hardware straggler
  EXPECT_EQ(Parse(bearer)["nodes_count"], 8);
  RunResult basic = Fleet({"--prometheus-ca", F("good-ca.pem"), "--prometheus-user", "fleet",
                           "--prometheus-password-file", F("password")});
  EXPECT_EQ(basic.exit_code, 1) << basic.err;
  json j = Parse(basic);
  EXPECT_EQ(j["nodes_count"], 8);
  ASSERT_EQ(j["stragglers"].size(), 1u);
  EXPECT_EQ(j["stragglers"][0]["serial"], "SN100059");
}

TEST_F(FleetPrometheusTlsTest, WrongOrMissingCredentialsNameTheUrlAndStatus) {
  const std::string url = prom_->url("https");
  RunResult wrong =
      Fleet({"--prometheus-ca", F("good-ca.pem"), "--prometheus-token-file", F("wrong-token")});
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_NE(wrong.err.find("Prometheus at " + url + " answered HTTP 401"), std::string::npos)
      << wrong.err;
  EXPECT_NE(wrong.err.find("the credentials given were refused"), std::string::npos) << wrong.err;
  EXPECT_EQ(wrong.err.find("tok-wrong"), std::string::npos) << wrong.err;
  RunResult bad_password = Fleet({"--prometheus-ca", F("good-ca.pem"), "--prometheus-user", "fleet",
                                  "--prometheus-password-file", F("wrong-password")});
  EXPECT_EQ(bad_password.exit_code, 3);
  EXPECT_NE(bad_password.err.find("answered HTTP 401"), std::string::npos) << bad_password.err;
  RunResult none = Fleet({"--prometheus-ca", F("good-ca.pem")});
  EXPECT_EQ(none.exit_code, 3);
  EXPECT_NE(none.err.find("answered HTTP 401 (unauthorized): it wants credentials"),
            std::string::npos)
      << none.err;
  // A token file others can read is refused before anything is sent.
  ::chmod(F("token").c_str(), 0644);
  int before = prom_->requests();
  RunResult open =
      Fleet({"--prometheus-ca", F("good-ca.pem"), "--prometheus-token-file", F("token")});
  EXPECT_EQ(open.exit_code, 3);
  EXPECT_NE(open.err.find("readable by group or others"), std::string::npos) << open.err;
  EXPECT_EQ(prom_->requests(), before);
  EXPECT_EQ(prom_->queries(), 0);
}

TEST_F(FleetPrometheusTlsTest, WrongCaIsATlsError) {
  const std::string url = prom_->url("https");
  RunResult other =
      Fleet({"--prometheus-ca", F("other-ca.pem"), "--prometheus-token-file", F("token")});
  EXPECT_EQ(other.exit_code, 3);
  EXPECT_NE(other.err.find("Prometheus at " + url + " did not answer"), std::string::npos)
      << other.err;
  EXPECT_NE(other.err.find("TLS: "), std::string::npos) << other.err;
  // Without a CA file the system store does not know the test CA: the hint names the flag.
  RunResult system = Fleet({"--prometheus-token-file", F("token")});
  EXPECT_EQ(system.exit_code, 3);
  EXPECT_NE(system.err.find("TLS: "), std::string::npos) << system.err;
  EXPECT_NE(system.err.find("--prometheus-ca"), std::string::npos) << system.err;
  EXPECT_EQ(prom_->requests(), 0);  // no request got past the handshake
}

}  // namespace
}  // namespace gpudoctor
