// URL targets (issue 8 item 9) against real servers on 127.0.0.1: a fast endpoint, a slow one,
// one answering 500, one that hangs, a closed port, https against a plain-HTTP port, and an
// https server with a self-signed certificate made at test time (OpenSSL, in process). The
// facts are measured by HttpProbeSeries/ProbeHost and judged by the rules.
#include <gtest/gtest.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "core/settings.h"
#include "net/reachability.h"
#include "probes/probe.h"
#include "probes/probe_entry_points.h"
#include "rules/engine.h"
#include "test_util.h"

namespace gpudoctor {

namespace {

using std::chrono::milliseconds;

void Routes(httplib::Server& s, std::atomic<bool>& stop) {
  s.Get("/ok", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok", "text/plain");
  });
  s.Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(milliseconds(300));
    res.set_content("late", "text/plain");
  });
  s.Get("/fail", [](const httplib::Request&, httplib::Response& res) {
    res.status = 500;
    res.set_content("boom", "text/plain");
  });
  s.Get("/flaky", [n = std::make_shared<std::atomic<int>>(0)](const httplib::Request&,
                                                              httplib::Response& res) {
    res.status = (*n)++ % 2 == 0 ? 503 : 200;
  });
  s.Get("/hang", [&stop](const httplib::Request&, httplib::Response& res) {
    for (int i = 0; i < 300 && !stop; ++i) std::this_thread::sleep_for(milliseconds(10));
    res.set_content("too late", "text/plain");
  });
  s.Get("/big", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(1 << 20, 'x'), "text/plain");  // 1 MiB: read 64 KiB, then cut
  });
}

class Server {
 public:
  explicit Server(std::unique_ptr<httplib::Server> s) : server_(std::move(s)) {
    Routes(*server_, stop_);
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(milliseconds(1));
  }
  Server() : Server(std::make_unique<httplib::Server>()) {}
  ~Server() {
    stop_ = true;
    server_->stop();
    thread_.join();
  }
  std::string Url(const std::string& path, const char* scheme = "http") const {
    return std::string(scheme) + "://127.0.0.1:" + std::to_string(port_) + path;
  }
  int port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  int port_ = 0;
};

ReachabilityOptions Fast(int count = 3) {
  ReachabilityOptions o;
  o.http.count = count;
  o.http.interval = milliseconds(20);
  o.http.timeout = milliseconds(2000);
  o.ping.count = 3;
  o.ping.interval = milliseconds(10);
  o.ping.timeout = milliseconds(400);
  return o;
}

TargetProbeFacts Probe(const std::string& url, const ReachabilityOptions& opts = Fast()) {
  auto t = ParseTarget(url);
  EXPECT_TRUE(t.ok()) << url;
  return ProbeHost({*t, TargetGroup::kTarget}, opts);
}

std::vector<Finding> Judge(const std::vector<TargetProbeFacts>& hosts,
                           const Thresholds& t = Thresholds()) {
  Snapshot snap;
  snap.network.reachability = ReachabilityFacts{hosts, false};
  return EvaluateRules(snap, t);
}

const Finding* Find(const std::vector<Finding>& fs, const std::string& id) {
  for (const auto& f : fs) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::string Evidence(const Finding& f, const std::string& key) {
  for (const auto& e : f.evidence) {
    if (e.name != key) continue;
    if (auto* s = std::get_if<std::string>(&e.value)) return *s;
  }
  return "";
}

TEST(HttpProbeTest, HealthyEndpointIsMeasuredByPhase) {
  Server s;
  TargetProbeFacts f = Probe(s.Url("/ok"));
  EXPECT_EQ(f.method, "http");
  EXPECT_EQ(f.address, "127.0.0.1");
  EXPECT_EQ(f.sent, 3);
  EXPECT_EQ(f.received, 3);
  EXPECT_EQ(f.http_status, 200);
  EXPECT_EQ(f.http_status_counts.at(200), 3);
  EXPECT_EQ(f.http_failed, 0);
  ASSERT_TRUE(f.http_connect_ms && f.http_ttfb_ms && f.http_wait_ms);
  EXPECT_LE(*f.http_connect_ms, *f.http_ttfb_ms);
  EXPECT_FALSE(f.http_tls_ms);  // plain http
  EXPECT_FALSE(f.dns_ms);       // an IP literal is not looked up
  EXPECT_FALSE(f.loss_pct);     // not a ping series
  EXPECT_TRUE(Judge({f}).empty());
}

TEST(HttpProbeTest, NamedHostIsResolvedOnceAndPinned) {
  Server s;
  TargetProbeFacts f = Probe("http://localhost:" + std::to_string(s.port()) + "/ok");
  EXPECT_EQ(f.received, 3) << f.http_error << f.error;
  EXPECT_TRUE(f.dns_ms.has_value());
}

TEST(HttpProbeTest, SlowEndpointIsTheApplicationNotTheNetwork) {
  Server s;
  TargetProbeFacts f = Probe(s.Url("/slow"));
  ASSERT_EQ(f.received, 3) << f.http_error;
  EXPECT_GE(*f.http_ttfb_ms, 290);
  EXPECT_GE(*f.http_wait_ms, 290);
  EXPECT_LT(*f.http_connect_ms, 100);
  Thresholds t;
  t.Set("net.http.slow", "warn_ttfb_ms", 200);
  auto findings = Judge({f}, t);
  const Finding* slow = Find(findings, "net.http.slow");
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->severity, Severity::kWarn);
  EXPECT_EQ(Evidence(*slow, "verdict"), "application");
  EXPECT_NE(slow->summary.find("not the network"), std::string::npos) << slow->summary;
  ASSERT_EQ(slow->next_steps.size(), 1u);  // only the application's step
  EXPECT_NE(slow->next_steps[0].find("backend"), std::string::npos) << slow->next_steps[0];
  EXPECT_EQ(Find(findings, "net.http.failing"), nullptr);
  // The default threshold (1 s) does not call 300 ms slow.
  EXPECT_EQ(Find(Judge({f}), "net.http.slow"), nullptr);
}

TEST(HttpProbeTest, ServerErrorsFailTheService) {
  Server s;
  TargetProbeFacts f = Probe(s.Url("/fail"));
  EXPECT_EQ(f.received, 3);
  EXPECT_EQ(f.http_failed, 3);
  EXPECT_DOUBLE_EQ(*f.http_failed_pct, 100);
  EXPECT_EQ(f.http_error_kind, "http_5xx");
  EXPECT_EQ(f.http_error, "HTTP 500");
  auto findings = Judge({f});
  const Finding* failing = Find(findings, "net.http.failing");
  ASSERT_NE(failing, nullptr);
  EXPECT_EQ(failing->severity, Severity::kCrit);
  EXPECT_EQ(Evidence(*failing, "statuses"), "500x3");
  ASSERT_EQ(failing->next_steps.size(), 1u);
  EXPECT_NE(failing->next_steps[0].find("logs"), std::string::npos);

  TargetProbeFacts flaky = Probe(s.Url("/flaky"), Fast(4));
  EXPECT_EQ(flaky.http_failed, 2);
  auto flaky_findings = Judge({flaky});
  const Finding* half = Find(flaky_findings, "net.http.failing");
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half->severity, Severity::kCrit);  // 50%
  Thresholds t;
  t.Set("net.http.failing", "crit_failed_pct", 75);
  EXPECT_EQ(Find(Judge({flaky}, t), "net.http.failing")->severity, Severity::kWarn);
}

TEST(HttpProbeTest, ClosedPortIsAConnectFailureOfTheServiceWhenTheHostAnswers) {
  uint16_t port = 0;
  close(testing::BindLoopback(0, &port));  // nothing listens there
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  ReachabilityOptions opts = Fast();
  auto out = ProbeHosts({{*ParseTarget(url), TargetGroup::kTarget},
                         {*ParseTarget("127.0.0.1"), TargetGroup::kTarget}},
                        opts, SteadyClock::now() + std::chrono::seconds(5));
  ASSERT_EQ(out.size(), 2u);
  const TargetProbeFacts& f = out[0];
  EXPECT_EQ(f.received, 0);
  EXPECT_EQ(f.http_failed, 3);
  EXPECT_EQ(f.http_error_kind, "connect");
  EXPECT_FALSE(f.http_error.empty());
  auto findings = Judge(out);
  const Finding* failing = Find(findings, "net.http.failing");
  ASSERT_NE(failing, nullptr);
  EXPECT_EQ(failing->severity, Severity::kCrit);
  EXPECT_NE(failing->summary.find("all 3 requests failed"), std::string::npos);
  ASSERT_EQ(failing->next_steps.size(), 1u);
  EXPECT_NE(failing->next_steps[0].find("listening"), std::string::npos);
  if (out[1].received > 0) {  // ICMP to 127.0.0.1 worked: the host is up, the service is not
    EXPECT_NE(failing->summary.find("it is the service, not the network"), std::string::npos)
        << failing->summary;
    EXPECT_EQ(Evidence(*failing, "same_host_target"), "127.0.0.1");
  }
}

TEST(HttpProbeTest, HangingServiceTimesOutWithinTheSeriesBound) {
  Server s;
  ReachabilityOptions opts = Fast(2);
  opts.http.timeout = milliseconds(300);
  auto start = SteadyClock::now();
  TargetProbeFacts f = Probe(s.Url("/hang"), opts);
  double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
  // (count - 1) x interval + timeout + slack for a loaded machine; the hanging handler would
  // answer only after 3 s.
  EXPECT_LT(ms, 20 + 300 + 700);
  EXPECT_EQ(f.received, 0);
  EXPECT_EQ(f.http_failed, 2);
  EXPECT_EQ(f.http_error_kind, "timeout");
  EXPECT_TRUE(f.http_connect_ms.has_value());  // it connected, then nothing came
  auto findings = Judge({f});
  const Finding* failing = Find(findings, "net.http.failing");
  ASSERT_NE(failing, nullptr);
  EXPECT_NE(failing->next_steps.at(0).find("load"), std::string::npos);
}

// A short check deadline: fewer requests, and a shorter timeout, so the series still ends in
// time and says something (here: a 300 ms endpoint measured within a 1.5 s check).
TEST(HttpProbeTest, ProbeFitsTheSeriesIntoAShortDeadline) {
  Server s;
  auto settings = std::make_shared<Settings>();
  settings->net_targets = {s.Url("/slow")};
  settings->net_http_count = 10;
  settings->net_http_interval_ms = 400;  // 3.6 s of series
  settings->net_http_timeout_ms = 3000;
  settings->net_resolve_timeout_ms = 100;
  auto start = SteadyClock::now();
  ProbeContext ctx{settings, start + milliseconds(1500)};
  ProbeOutput out = RunReachabilityProbe(ctx);
  EXPECT_LT(std::chrono::duration<double>(SteadyClock::now() - start).count(), 1.5);
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot snap;
  out.apply(snap);
  const TargetProbeFacts& h = snap.network.reachability->hosts.at(0);
  EXPECT_FALSE(h.unfinished) << h.error;
  EXPECT_GE(h.received, 1) << h.http_error;
  EXPECT_LT(h.sent, 10);
  EXPECT_EQ(h.http_failed, 0);
}

// `check --deadline 3` with the default series (5 requests, 3 s timeout each): the timeout is
// cut first, so several requests still go out (one request alone cannot show loss).
TEST(HttpProbeTest, ShortDeadlineShortensTheTimeoutBeforeTheRequestCount) {
  Server s;
  auto settings = std::make_shared<Settings>();
  settings->net_targets = {s.Url("/ok")};
  auto start = SteadyClock::now();
  ProbeContext ctx{settings, start + milliseconds(3000)};
  ProbeOutput out = RunReachabilityProbe(ctx);
  ASSERT_EQ(out.state, ProbeState::kOk) << out.reason;
  Snapshot snap;
  out.apply(snap);
  const TargetProbeFacts& h = snap.network.reachability->hosts.at(0);
  EXPECT_GE(h.sent, 3) << "a 3 s check sent too few requests";
  EXPECT_EQ(h.received, h.sent) << h.http_error;
}

// Four timeouts and one 503: a timing-out service. The finding names the kind that happened
// most and keeps that kind's step; an unclassified failure still gets a step.
TEST(HttpProbeTest, FailureKindIsTheMostFrequentOneAndEveryKindHasAStep) {
  std::vector<HttpRequestResult> rs(5);
  for (int i = 0; i < 4; ++i)
    rs[i] = {std::nullopt,          1.0,      std::nullopt, std::nullopt, std::nullopt,
             "Operation timed out", "timeout"};
  rs[4].status = 503;
  rs[4].connect_ms = 1.0;
  TargetProbeFacts f;
  f.name = "http://svc/";
  f.group = TargetGroup::kTarget;
  FillFromHttp(rs, f);
  EXPECT_EQ(f.http_error_kind, "timeout");
  EXPECT_EQ(f.http_error, "Operation timed out");
  EXPECT_EQ(*f.http_failed, 5);
  auto findings = Judge({f});
  const Finding* failing = Find(findings, "net.http.failing");
  ASSERT_NE(failing, nullptr);
  ASSERT_EQ(failing->next_steps.size(), 1u);
  EXPECT_NE(failing->next_steps[0].find("load"), std::string::npos) << failing->next_steps[0];

  std::vector<HttpRequestResult> odd(1);
  odd[0].error = "Unsupported protocol";
  odd[0].error_kind = "other";
  TargetProbeFacts g;
  g.name = "http://svc/";
  g.group = TargetGroup::kTarget;
  FillFromHttp(odd, g);
  auto other_findings = Judge({g});
  const Finding* other = Find(other_findings, "net.http.failing");
  ASSERT_NE(other, nullptr);
  ASSERT_EQ(other->next_steps.size(), 1u);
  EXPECT_NE(other->next_steps[0].find("curl -v"), std::string::npos);
}

// The slow verdict: TLS handshake longer than the server's wait is `tls`; no handshake time
// gives no "not the network" claim.
TEST(HttpProbeTest, SlowVerdictSeparatesTlsAndNeverClaimsWhatItDidNotMeasure) {
  TargetProbeFacts f;
  f.name = "https://svc/";
  f.group = TargetGroup::kTarget;
  f.sent = f.received = 5;
  f.http_failed = 0;
  f.http_failed_pct = 0;
  f.http_ttfb_ms = 3000;
  f.http_connect_ms = 2;
  f.http_tls_ms = 2800;
  f.http_wait_ms = 150;
  auto tls_findings = Judge({f});
  const Finding* slow = Find(tls_findings, "net.http.slow");
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(Evidence(*slow, "verdict"), "tls");
  f.http_connect_ms.reset();
  auto unknown_findings = Judge({f});
  slow = Find(unknown_findings, "net.http.slow");
  ASSERT_NE(slow, nullptr);
  EXPECT_EQ(slow->summary.find("not the network"), std::string::npos) << slow->summary;
  EXPECT_EQ(slow->summary.find("?"), std::string::npos) << slow->summary;
}

TEST(HttpProbeTest, LargeBodyIsCutNotFailed) {
  Server s;
  TargetProbeFacts f = Probe(s.Url("/big"), Fast(1));
  EXPECT_EQ(f.received, 1) << f.http_error;
  EXPECT_EQ(f.http_failed, 0);
  EXPECT_EQ(f.http_status, 200);
}

TEST(HttpProbeTest, HttpsAgainstAPlainHttpPortIsATlsFailure) {
  Server s;
  TargetProbeFacts f = Probe(s.Url("/ok", "https"));
  EXPECT_EQ(f.method, "https");
  EXPECT_EQ(f.received, 0);
  EXPECT_EQ(f.http_failed, 3);
  EXPECT_EQ(f.http_error_kind, "tls") << f.http_error;
  auto findings = Judge({f});
  const Finding* failing = Find(findings, "net.http.failing");
  ASSERT_NE(failing, nullptr);
  EXPECT_NE(failing->next_steps.at(0).find("openssl s_client"), std::string::npos);
}

// A self-signed certificate for 127.0.0.1, made in process (no openssl command).
struct SelfSigned {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  SelfSigned() {
    key = EVP_EC_gen("P-256");
    cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("127.0.0.1"), -1, -1, 0);
    X509_set_issuer_name(cert, name);
    X509_sign(cert, key, EVP_sha256());
  }
  ~SelfSigned() {
    X509_free(cert);
    EVP_PKEY_free(key);
  }
};

TEST(HttpProbeTest, SelfSignedHttpsFailsVerificationUnlessTurnedOff) {
  SelfSigned pki;
  ASSERT_NE(pki.key, nullptr);
  auto tls_server = std::make_unique<httplib::SSLServer>(pki.cert, pki.key);
  ASSERT_TRUE(tls_server->is_valid());
  Server s(std::move(tls_server));
  TargetProbeFacts strict = Probe(s.Url("/ok", "https"), Fast(2));
  EXPECT_EQ(strict.received, 0);
  EXPECT_EQ(strict.http_error_kind, "tls") << strict.http_error;
  ReachabilityOptions lax = Fast(2);
  lax.http.tls_verify = false;
  TargetProbeFacts f = Probe(s.Url("/ok", "https"), lax);
  EXPECT_EQ(f.received, 2) << f.http_error;
  EXPECT_EQ(f.http_status, 200);
  ASSERT_TRUE(f.http_tls_ms.has_value());
  EXPECT_GT(*f.http_tls_ms, 0);
  EXPECT_GE(*f.http_ttfb_ms, *f.http_tls_ms);
}

}  // namespace
}  // namespace gpudoctor
