#include "serve/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "metrics/metric_table.h"
#include "serve/status_json.h"
#include "watch_tick_util.h"

namespace gpudoctor {
namespace {

using testing::MakeTick;

TEST(ParseListenAddressTest, AcceptsAndRejects) {
  auto a = ParseListenAddress("127.0.0.1:9835");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 9835);
  a = ParseListenAddress("[::1]:80");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "::1");
  a = ParseListenAddress(":9100");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "0.0.0.0");
  EXPECT_TRUE(ParseListenAddress("localhost:0").ok());
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "1:-1", "::1:80",
                          "[::1]80", "[]:80", "a b:80", "h:12x", "h:123456"}) {
    EXPECT_FALSE(ParseListenAddress(bad).ok()) << bad;
  }
}

TEST(ParseHistoryQueryTest, ValidatesParameters) {
  std::multimap<std::string, std::string> p = {
      {"metric", "gpudoctor_gpu_temperature_celsius"}, {"gpu", "1"}, {"since", "6h"}};
  auto q = ParseHistoryQuery(p, 100000);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->metric, "gpudoctor_gpu_temperature_celsius");
  EXPECT_EQ(*q->gpu, 1);
  EXPECT_EQ(q->since_unix_s, 100000 - 21600);
  EXPECT_FALSE(ParseHistoryQuery({}, 0).ok());
  EXPECT_FALSE(ParseHistoryQuery({{"metric", "nope"}}, 0).ok());
  EXPECT_FALSE(ParseHistoryQuery({{"metric", "gpudoctor_gpu_power_watts"}, {"gpu", "x"}}, 0).ok());
  EXPECT_FALSE(
      ParseHistoryQuery({{"metric", "gpudoctor_gpu_power_watts"}, {"bogus", "1"}}, 0).ok());
  EXPECT_FALSE(
      ParseHistoryQuery(
          {{"metric", "gpudoctor_gpu_power_watts"}, {"metric", "gpudoctor_gpu_power_watts"}}, 0)
          .ok());
}

TEST(TokenFileTest, Content) {
  EXPECT_EQ(*ParseTokenFileContent("  s3cret \nignored"), "s3cret");
  EXPECT_EQ(*ParseTokenFileContent("abc\r\n"), "abc");
  EXPECT_FALSE(ParseTokenFileContent("").ok());
  EXPECT_FALSE(ParseTokenFileContent("\nabc").ok());
  EXPECT_FALSE(ParseTokenFileContent("a b").ok());
  EXPECT_FALSE(ParseTokenFileContent(std::string(5000, 'a')).ok());
}

TEST(TokenFileTest, RefusesWorldReadable) {
  std::string path = ::testing::TempDir() + "/token_" + std::to_string(::getpid());
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs("tok\n", f);
  std::fclose(f);
  ::chmod(path.c_str(), 0644);
  EXPECT_EQ(ReadTokenFile(path).status().code(), StatusCode::kPermissionDenied);
  ::chmod(path.c_str(), 0600);
  EXPECT_EQ(*ReadTokenFile(path), "tok");
  ::unlink(path.c_str());
}

class StubReader : public HistoryReader {
 public:
  Result<std::vector<Series>> QuerySeries(const SeriesQuery& q) override {
    Series s;
    s.metric = q.metric;
    s.gpu = q.gpu;
    s.points = {{q.since_unix_s, 1.5}, {q.since_unix_s + 10, 2}};
    return std::vector<Series>{s};
  }
  Result<std::vector<std::string>> ListMetrics() override { return std::vector<std::string>{}; }
  Result<std::string> Hostname() override { return std::string("node-1"); }
  Result<std::vector<StoredGpu>> QueryGpus(size_t) override { return std::vector<StoredGpu>{}; }
  Result<std::vector<TrackedFinding>> QueryFindings(const FindingsQuery&) override {
    return std::vector<TrackedFinding>{};
  }
  Result<std::vector<HistoryEvent>> QueryEvents(int64_t, size_t) override {
    HistoryEvent e;
    e.unix_ms = 1700000000123;
    e.kind = "reboot";
    e.detail = "boot id a -> b";
    return std::vector<HistoryEvent>{e};
  }
};

class HttpServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpOptions o) {
    o.listen = "127.0.0.1:0";
    auto s = WatchHttpServer::Start(
        o, [this] { return std::atomic_load(&tick_); },
        []() -> Result<std::unique_ptr<HistoryReader>> {
          return std::unique_ptr<HistoryReader>(new StubReader);
        });
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(5, 0);
  }
  std::shared_ptr<const TickResult> tick_ = MakeTick();
  std::unique_ptr<WatchHttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

// A finding naming a mount whose name is not UTF-8 (any user can make such a FUSE mount): the
// findings list, /healthz and the scrape still answer, with U+FFFD in its place (the strict
// JSON dump answered 500 for as long as the finding stayed open).
TEST_F(HttpServerTest, FindingsWithBytesThatAreNotUtf8AreStillServed) {
  auto t = std::make_shared<TickResult>(*MakeTick());
  t->findings.push_back(testing::MakeTracked("host.disk.full", Severity::kCrit, -1));
  t->findings.back().last.subject = "/mnt/u\xff";
  t->findings.back().last.summary = "/mnt/u\xff is 99% full";
  MountFacts m;
  m.mount_point = "/mnt/u\xff";
  m.fs_type = "fuse.sshfs";
  m.total_bytes = 100;
  m.available_bytes = 1;
  t->report.snapshot.host.mounts = std::vector<MountFacts>{m};
  t->points = FlattenSnapshot(t->report.snapshot);
  tick_ = t;
  StartServer({});
  auto r = client_->Get("/api/v1/findings");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_NE(r->body.find("/mnt/u\xef\xbf\xbd is 99% full"), std::string::npos) << r->body;
  r = client_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body.find("\xff"), std::string::npos);
  EXPECT_NE(r->body.find("mount=\"/mnt/u\xef\xbf\xbd\""), std::string::npos);
}

TEST_F(HttpServerTest, Endpoints) {
  StartServer({});
  auto r = client_->Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
  EXPECT_NE(r->body.find("gpudoctor_gpu_temperature_celsius{"), std::string::npos);
  r = client_->Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = client_->Get("/api/v1/status");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  // The tick's report exactly as `check --json`, plus the lifecycle's open episodes.
  EXPECT_EQ(r->body, RenderStatusJson(*tick_));
  auto status = nlohmann::json::parse(r->body);
  auto check = nlohmann::json::parse(RenderJson(tick_->report));
  for (const auto& [key, value] : check.items()) EXPECT_EQ(status[key], value) << key;
  ASSERT_TRUE(status["open_findings"].is_array());
  ASSERT_EQ(status["open_findings"].size(), 2u);  // pending and resolved left out
  EXPECT_EQ(status["open_findings"][0]["finding"]["id"], "gpu.ecc.dbe");  // worst first
  EXPECT_GT(status["open_findings"][0]["open_s"].get<double>(), 0);
  r = client_->Get("/api/v1/findings");
  ASSERT_TRUE(r);
  auto j = nlohmann::json::parse(r->body);
  ASSERT_EQ(j["findings"].size(), 3u);  // pending left out
  EXPECT_EQ(j["findings"][0]["finding"]["id"], "gpu.ecc.dbe");
  EXPECT_EQ(j["findings"][0]["state"], "open");
  EXPECT_EQ(j["findings"][2]["state"], "resolved");
  EXPECT_FALSE(j["findings"][2]["resolved"].is_null());
  EXPECT_EQ(j["findings"][0]["acked"], false);
  ASSERT_EQ(j["events"].size(), 1u);  // from the history store, for the dashboard's timeline
  EXPECT_EQ(j["events"][0]["kind"], "reboot");
  EXPECT_EQ(j["events"][0]["time_ms"], 1700000000123);
  r = client_->Get("/api/v1/history?metric=gpudoctor_gpu_temperature_celsius&gpu=0&since=6h");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["metric"], "gpudoctor_gpu_temperature_celsius");
  EXPECT_EQ(j["gpu"], 0);
  EXPECT_EQ(j["points"].size(), 2u);
  r = client_->Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

// The dashboard's metric choice: every plottable series from the metric table, served before the
// first tick and behind the token like the other data paths.
TEST_F(HttpServerTest, SeriesListComesFromTheMetricTable) {
  HttpOptions o;
  o.token = "s3cret";
  tick_ = nullptr;  // no tick yet: the list does not depend on one
  StartServer(o);
  EXPECT_EQ(client_->Get("/api/v1/series")->status, 401);
  client_->set_bearer_token_auth("s3cret");
  auto r = client_->Get("/api/v1/series");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto list = nlohmann::json::parse(r->body);
  ASSERT_TRUE(list.is_array());
  EXPECT_EQ(list.size(), PlottableMetrics().size());
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& m : list) {
    std::string name = m["metric"];
    ASSERT_NE(FindMetric(name), nullptr) << name << " is not a metric the exporter writes";
    EXPECT_FALSE(m["help"].get<std::string>().empty()) << name;
    by_name[name] = m;
  }
  ASSERT_TRUE(by_name.count("gpudoctor_gpu_temperature_celsius"));
  EXPECT_EQ(by_name["gpudoctor_gpu_temperature_celsius"]["per_gpu"], true);
  EXPECT_EQ(by_name["gpudoctor_gpu_temperature_celsius"]["unit"], "°C");
  ASSERT_TRUE(by_name.count("gpudoctor_host_cpu_busy_ratio"));
  EXPECT_EQ(by_name["gpudoctor_host_cpu_busy_ratio"]["per_gpu"], false);
  EXPECT_EQ(by_name["gpudoctor_host_cpu_busy_ratio"]["unit"], "0-1");
  // Series with labels beyond the GPU (per NIC, per mount) cannot be plotted by name alone; the
  // job step times can (one series per job, the first when none is chosen) and say their label.
  for (const auto& [name, m] : by_name) {
    std::string labels(FindMetric(name)->labels);
    EXPECT_TRUE(labels.empty() || labels == "job") << name;
    EXPECT_EQ(m.value("labels", ""), labels) << name;
  }
  ASSERT_TRUE(by_name.count("gpudoctor_job_step_seconds"));
  EXPECT_EQ(client_->Get("/api/v1/series?x=1")->status, 400);
}

TEST_F(HttpServerTest, ErrorsAreJson4xx) {
  StartServer({});
  auto r = client_->Get("/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(nlohmann::json::parse(r->body)["error"].get<std::string>().find("/nope"),
            std::string::npos);
  r = client_->Get("/api/v1/history?metric=bogus");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_TRUE(nlohmann::json::parse(r->body).contains("error"));
  r = client_->Get("/api/v1/history?gpu=1");
  EXPECT_EQ(r->status, 400);
  r = client_->Get("/metrics?x=1");
  EXPECT_EQ(r->status, 400);
  r = client_->Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  r = client_->Delete("/api/v1/findings");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  r = client_->Get(("/metrics?" + std::string(20000, 'a')).c_str());
  ASSERT_TRUE(r);
  EXPECT_GE(r->status, 400);
  EXPECT_LT(r->status, 500);
}

TEST_F(HttpServerTest, TokenRequiredExceptHealthz) {
  HttpOptions o;
  o.token = "s3cret";
  StartServer(o);
  EXPECT_EQ(client_->Get("/metrics")->status, 401);
  EXPECT_EQ(client_->Get("/api/v1/status")->status, 401);
  EXPECT_EQ(client_->Get("/nope")->status, 401);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  client_->set_bearer_token_auth("wrong");
  EXPECT_EQ(client_->Get("/metrics")->status, 401);
  client_->set_bearer_token_auth("s3cret");
  EXPECT_EQ(client_->Get("/metrics")->status, 200);
  EXPECT_EQ(client_->Get("/api/v1/findings")->status, 200);
}

TEST_F(HttpServerTest, HealthzStaleAndNoTick) {
  HttpOptions o;
  o.interval_s = 1;
  tick_ = nullptr;
  StartServer(o);
  EXPECT_EQ(client_->Get("/healthz")->status, 503);
  EXPECT_EQ(client_->Get("/metrics")->status, 503);
  std::atomic_store(&tick_, std::shared_ptr<const TickResult>(MakeTick()));
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  auto old = MakeTick(1000);
  std::atomic_store(&tick_, std::shared_ptr<const TickResult>(old));
  auto r = client_->Get("/healthz");
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(nlohmann::json::parse(r->body)["status"], "stale");
}

// A history that is not written (or was reopened) shows in /healthz; the daemon still serves.
TEST_F(HttpServerTest, HealthzSaysTheHistoryIsDegraded) {
  StartServer(HttpOptions{});
  auto r = client_->Get("/healthz");
  EXPECT_EQ(nlohmann::json::parse(r->body)["history"], "ok");
  auto t = MakeTick();
  t->history_degraded = "/var/lib/gpudoctor/history.db was deleted 3 s ago and was reopened";
  std::atomic_store(&tick_, std::shared_ptr<const TickResult>(t));
  r = client_->Get("/healthz");
  EXPECT_EQ(r->status, 200);
  auto j = nlohmann::json::parse(r->body);
  EXPECT_EQ(j["status"], "degraded");
  EXPECT_EQ(j["history"], "degraded");
  EXPECT_EQ(j["history_error"], t->history_degraded);
}

// Keep-alive requests are answered at loopback speed: without TCP_NODELAY on the server, the
// body (written after the headers) waited for the client's delayed ACK, 40 ms per request.
TEST_F(HttpServerTest, KeepAliveRequestsDoNotWaitForDelayedAck) {
  StartServer({});
  httplib::Client c("127.0.0.1", server_->port());
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  c.set_read_timeout(5, 0);
  ASSERT_TRUE(c.Get("/metrics"));  // connection open and warm
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) {
    auto r = c.Get(i % 2 ? "/api/v1/status" : "/metrics");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Delayed-ACK stalls would be 40 x 40 ms = 1.6 s; loopback speed is a few ms a request, so
  // 1 s leaves room for a loaded machine.
  EXPECT_LT(s, 1.0) << "40 keep-alive requests; 40 ms each means delayed-ACK stalls";
}

TEST_F(HttpServerTest, StopIsPromptAndIdempotent) {
  StartServer({});
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  server_->Stop();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 3.0);
}

TEST(HttpServerStartTest, BadAddressAndPortInUse) {
  HttpOptions o;
  o.listen = "nonsense";
  EXPECT_FALSE(WatchHttpServer::Start(o, nullptr, nullptr).ok());
  o.listen = "127.0.0.1:0";
  auto a = WatchHttpServer::Start(o, nullptr, nullptr);
  ASSERT_TRUE(a.ok());
  o.listen = "127.0.0.1:" + std::to_string((*a)->port());
  EXPECT_FALSE(WatchHttpServer::Start(o, nullptr, nullptr).ok());
}

}  // namespace
}  // namespace gpudoctor
