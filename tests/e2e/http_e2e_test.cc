// End-to-end: /metrics, alerting and the JSON API served by tests/e2e/http_harness_main.cc (the
// check probes on the fake NVML, served by WatchHttpServer) against real Debian engines:
// promtool lints the exposition, Prometheus scrapes it (up == 1, a GPU series through its query
// API), Alertmanager receives a gpudoctor alert and sees it resolve, a local webhook receiver
// gets firing and resolved payloads. Engines that are not installed skip their test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "test_util.h"

namespace gpudoctor {
namespace {

using json = nlohmann::json;
using testing::FixturePath;
using testing::RunProgram;

std::string BuildPath(const std::string& rel) { return std::string(GPUDOCTOR_BUILD_DIR) + rel; }

int FreePort() {
  uint16_t port = 0;
  int fd = testing::BindLoopback(0, &port);
  ::close(fd);
  return port;
}

// A child process with stdout and stderr to a file; SIGTERM then SIGKILL on destruction.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
        const std::string& log)
      : log_(log) {
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::string Log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  pid_t pid_ = -1;
  std::string log_;
};

bool WaitFor(const std::function<bool()>& cond, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(int(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return cond();
}

class HttpE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/http_e2e_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    harness_.reset();
    std::filesystem::remove_all(dir_);
  }
  // Starts the harness on the ECC DBE scenario (one crit finding on GPU 1).
  void StartHarness(std::vector<std::string> flags) {
    port_ = FreePort();
    std::vector<std::string> argv = {BuildPath("/tests/http_harness"), "--listen",
                                     "127.0.0.1:" + std::to_string(port_)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    for (const char* a : {"--", "--probes", "nvml,pci_gpu", "--nvml-lib"}) argv.push_back(a);
    argv.push_back(BuildPath("/tests/fake_nvml/libnvidia-ml.so.1"));
    argv.push_back("--path.sysfs");
    argv.push_back(FixturePath("sysfs/hgx_h100"));
    harness_ =
        std::make_unique<Child>(argv,
                                std::map<std::string, std::string>{
                                    {"FAKE_NVML_SCENARIO", FixturePath("nvml/ecc_dbe.scenario")}},
                                dir_ + "/harness.log");
    ASSERT_TRUE(
        WaitFor([&] { return harness_->Log().find("listening on") != std::string::npos; }, 30))
        << harness_->Log();
  }
  std::string Get(const std::string& path, int* status = nullptr) {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10, 0);
    auto r = c.Get(path.c_str());
    if (status) *status = r ? r->status : -1;
    return r ? r->body : "";
  }
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<Child> harness_;
};

TEST_F(HttpE2eTest, MetricsArePromtoolCleanAndStatusIsCheckJson) {
  StartHarness({"--dcgm-compat"});
  int status = 0;
  std::string metrics = Get("/metrics", &status);
  ASSERT_EQ(status, 200);
  EXPECT_NE(metrics.find("gpudoctor_finding_active{id=\"gpu.ecc.dbe\",severity=\"crit\""),
            std::string::npos);
  EXPECT_NE(metrics.find("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID="), std::string::npos);
  if (std::filesystem::exists("/usr/bin/promtool")) {
    // gpudoctor's own families must lint clean; the DCGM twins keep dcgm-exporter's camelCase
    // labels (UUID, modelName, Hostname) and names on purpose, which promtool flags.
    std::string own;
    std::istringstream in(metrics);
    for (std::string line; std::getline(in, line);) {
      if (line.find("DCGM_") == std::string::npos) own += line + "\n";
    }
    auto r =
        RunProgram({"/usr/bin/promtool", "check", "metrics"}, std::chrono::seconds(30), {}, own);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    r = RunProgram({"/usr/bin/promtool", "check", "metrics"}, std::chrono::seconds(30), {},
                   metrics);
    std::istringstream problems(r.out + r.err);
    for (std::string line; std::getline(problems, line);) {
      if (line.empty()) continue;
      bool expected = line.rfind("DCGM_", 0) == 0 &&
                      (line.find("camelCase") != std::string::npos ||
                       line.find("should not include type 'counter'") != std::string::npos);
      EXPECT_TRUE(expected) << line;
    }
  }
  std::string st = Get("/api/v1/status", &status);
  ASSERT_EQ(status, 200);
  json j = json::parse(st);
  EXPECT_EQ(j["verdict"], "crit");
  EXPECT_TRUE(j.contains("probes"));
  json f = json::parse(Get("/api/v1/findings"));
  ASSERT_EQ(f["findings"].size(), 1u);
  EXPECT_EQ(f["findings"][0]["finding"]["id"], "gpu.ecc.dbe");
  EXPECT_EQ(f["findings"][0]["state"], "open");
  Get("/healthz", &status);
  EXPECT_EQ(status, 200);
  Get("/api/v1/history?metric=nope", &status);
  EXPECT_EQ(status, 400);
}

TEST_F(HttpE2eTest, PrometheusScrapesGpuSeries) {
  if (!std::filesystem::exists("/usr/bin/prometheus")) GTEST_SKIP() << "prometheus not installed";
  StartHarness({});
  int prom_port = FreePort();
  std::ofstream(dir_ + "/prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
      << "  - job_name: gpudoctor\n    static_configs:\n      - targets: ['127.0.0.1:" << port_
      << "']\n";
  Child prom({"/usr/bin/prometheus", "--config.file=" + dir_ + "/prometheus.yml",
              "--storage.tsdb.path=" + dir_ + "/tsdb",
              "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
             {}, dir_ + "/prometheus.log");
  httplib::Client c("127.0.0.1", prom_port);
  c.set_read_timeout(5, 0);
  auto query = [&](const std::string& q) -> json {
    auto r = c.Get(("/api/v1/query?query=" + httplib::detail::encode_query_param(q)).c_str());
    if (!r || r->status != 200) return json();
    return json::parse(r->body, nullptr, false);
  };
  bool up = WaitFor(
      [&] {
        json j = query("up{job=\"gpudoctor\"}");
        return j.is_object() && j["data"]["result"].size() == 1 &&
               j["data"]["result"][0]["value"][1] == "1";
      },
      60);
  ASSERT_TRUE(up) << prom.Log();
  json t = query("gpudoctor_gpu_temperature_celsius");
  ASSERT_GE(t["data"]["result"].size(), 1u) << t.dump();
  EXPECT_FALSE(t["data"]["result"][0]["metric"]["uuid"].get<std::string>().empty());
  json f = query("gpudoctor_finding_active{severity=\"crit\"}");
  ASSERT_EQ(f["data"]["result"].size(), 1u) << f.dump();
  EXPECT_EQ(f["data"]["result"][0]["metric"]["id"], "gpu.ecc.dbe");
}

TEST_F(HttpE2eTest, AlertmanagerAlertArrivesAndResolves) {
  const std::string am_bin = "/usr/bin/prometheus-alertmanager";
  if (!std::filesystem::exists(am_bin)) GTEST_SKIP() << "alertmanager not installed";
  int am_port = FreePort();
  std::ofstream(dir_ + "/am.yml") << "route:\n  receiver: 'null'\nreceivers:\n  - name: 'null'\n";
  Child am(
      {am_bin, "--config.file=" + dir_ + "/am.yml", "--storage.path=" + dir_ + "/am",
       "--web.listen-address=127.0.0.1:" + std::to_string(am_port), "--cluster.listen-address="},
      {}, dir_ + "/am.log");
  httplib::Client c("127.0.0.1", am_port);
  c.set_read_timeout(5, 0);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = c.Get("/-/ready");
        return r && r->status == 200;
      },
      30))
      << am.Log();
  StartHarness(
      {"--alertmanager", "http://127.0.0.1:" + std::to_string(am_port), "--resolve-after", "6"});
  auto alerts = [&]() -> json {
    auto r = c.Get("/api/v2/alerts");
    if (!r || r->status != 200) return json::array();
    return json::parse(r->body, nullptr, false);
  };
  bool arrived = WaitFor(
      [&] {
        for (const auto& a : alerts()) {
          if (a["labels"]["id"] == "gpu.ecc.dbe" && a["labels"]["severity"] == "crit" &&
              a["labels"]["gpu"] == "1" && a["labels"]["alertname"] == "GpudoctorFinding") {
            return true;
          }
        }
        return false;
      },
      20);
  ASSERT_TRUE(arrived) << alerts().dump() << harness_->Log();
  bool resolved = WaitFor([&] { return alerts().empty(); }, 30);
  EXPECT_TRUE(resolved) << alerts().dump() << harness_->Log();
  EXPECT_NE(harness_->Log().find("event notify_sent alertmanager"), std::string::npos);
}

TEST_F(HttpE2eTest, WebhookSeesFiringAndResolved) {
  httplib::Server rx;
  std::mutex mu;
  std::vector<json> got;
  rx.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    got.push_back(json::parse(req.body, nullptr, false));
    res.set_content("ok", "text/plain");
  });
  int rx_port = rx.bind_to_any_port("127.0.0.1");
  std::thread t([&] { rx.listen_after_bind(); });
  StartHarness({"--webhook", "http://127.0.0.1:" + std::to_string(rx_port) + "/hook",
                "--resolve-after", "2"});
  bool both = WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return got.size() >= 2;
      },
      20);
  rx.stop();
  t.join();
  ASSERT_TRUE(both) << harness_->Log();
  EXPECT_EQ(got[0]["version"], "4");
  EXPECT_EQ(got[0]["status"], "firing");
  EXPECT_EQ(got[0]["alerts"][0]["labels"]["id"], "gpu.ecc.dbe");
  EXPECT_FALSE(got[0]["alerts"][0]["annotations"]["next_steps"].get<std::string>().empty());
  EXPECT_EQ(got[1]["status"], "resolved");
  EXPECT_NE(got[1]["alerts"][0]["endsAt"], "0001-01-01T00:00:00Z");
}

TEST_F(HttpE2eTest, TokenFromFile) {
  std::string tf = dir_ + "/token";
  std::ofstream(tf) << "e2e-token\n";
  std::filesystem::permissions(
      tf, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  StartHarness({"--token-file", tf});
  int status = 0;
  Get("/metrics", &status);
  EXPECT_EQ(status, 401);
  Get("/healthz", &status);
  EXPECT_EQ(status, 200);
  httplib::Client c("127.0.0.1", port_);
  c.set_bearer_token_auth("e2e-token");
  auto r = c.Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.find("e2e-token"), std::string::npos);
}

// The real daemon: `gpudoctor watch` with [watch] listen, dcgm_compat and a [[notify.webhook]]
// from the config file serves /metrics and the history, and the webhook sees the finding open.
TEST_F(HttpE2eTest, RealWatchServesMetricsHistoryAndNotifies) {
  httplib::Server rx;
  std::mutex mu;
  std::vector<json> got;
  rx.Post("/hook", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(mu);
    got.push_back(json::parse(req.body, nullptr, false));
    res.set_content("ok", "text/plain");
  });
  int rx_port = rx.bind_to_any_port("127.0.0.1");
  std::thread t([&] { rx.listen_after_bind(); });
  port_ = FreePort();
  std::ofstream(dir_ + "/gpudoctor.toml")
      << "[watch]\nlisten = \"127.0.0.1:" << port_ << "\"\ndcgm_compat = true\n\n"
      << "[[notify.webhook]]\nurl = \"http://127.0.0.1:" << rx_port
      << "/hook\"\nmin_severity = \"crit\"\n";
  harness_ = std::make_unique<Child>(
      std::vector<std::string>{GPUDOCTOR_BIN, "watch", "--config", dir_ + "/gpudoctor.toml", "--db",
                               dir_ + "/h.db", "--probes", "nvml,pci_gpu", "--nvml-lib",
                               BuildPath("/tests/fake_nvml/libnvidia-ml.so.1"), "--path.sysfs",
                               FixturePath("sysfs/hgx_h100")},
      std::map<std::string, std::string>{
          {"FAKE_NVML_SCENARIO", FixturePath("nvml/ecc_dbe.scenario")}},
      dir_ + "/watch.log");
  ASSERT_TRUE(
      WaitFor([&] { return harness_->Log().find("http: listening") != std::string::npos; }, 30))
      << harness_->Log();
  bool notified = WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return !got.empty();
      },
      20);
  ASSERT_TRUE(notified) << harness_->Log();
  EXPECT_EQ(got[0]["status"], "firing");
  EXPECT_EQ(got[0]["alerts"][0]["labels"]["id"], "gpu.ecc.dbe");
  int status = 0;
  std::string metrics = Get("/metrics", &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(metrics.find("gpudoctor_finding_active{id=\"gpu.ecc.dbe\""), std::string::npos);
  EXPECT_NE(metrics.find("DCGM_FI_DEV_GPU_TEMP{"), std::string::npos);
  Get("/healthz", &status);
  EXPECT_EQ(status, 200);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  json h = json::parse(
      Get("/api/v1/history?metric=gpudoctor_gpu_temperature_celsius&gpu=0&since=1h", &status),
      nullptr, false);
  EXPECT_EQ(status, 200);
  EXPECT_GE(h["points"].size(), 1u) << h.dump();
  EXPECT_TRUE(
      WaitFor([&] { return harness_->Log().find("notify_sent webhook") != std::string::npos; }, 10))
      << harness_->Log();
  rx.stop();
  t.join();
}

}  // namespace
}  // namespace gpudoctor
