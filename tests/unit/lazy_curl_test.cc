// libcurl is loaded on the first curl call only: a check without URL targets or notifiers never
// maps it (nor its TLS and Kerberos dependencies); the first curl call loads it.
#include "net/lazy_curl.h"

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "check/run_check.h"
#include "host_fixture.h"

namespace gpudoctor {
namespace {

bool LibcurlMapped() {
  std::ifstream maps("/proc/self/maps");
  std::stringstream text;
  text << maps.rdbuf();
  return text.str().find("libcurl") != std::string::npos;
}

// ctest runs each test in its own process; run together in one binary, an earlier test may
// have made a curl call already, and then there is nothing to observe here.
#define SKIP_IF_ALREADY_LOADED() \
  if (LibcurlLoaded()) GTEST_SKIP() << "an earlier test in this process loaded libcurl"

TEST(LazyCurlTest, ACheckWithoutUrlTargetsNeverMapsLibcurl) {
  SKIP_IF_ALREADY_LOADED();
  testing::HostFixture fx("healthy");
  auto s = std::make_shared<Settings>();
  s->fs = fx.fs();
  s->sample_ms = 100;
  s->deadline_s = 5;
  s->nvml_lib = "/nonexistent/libnvidia-ml.so.1";
  Report r = RunCheck(s);  // every default probe, no URL target, no notifier
  EXPECT_FALSE(r.snapshot.probes.empty());
  EXPECT_FALSE(LibcurlLoaded());
  EXPECT_FALSE(LibcurlMapped()) << "libcurl mapped by a check that makes no HTTP request";
}

TEST(LazyCurlTest, TheFirstCurlCallLoadsIt) {
  SKIP_IF_ALREADY_LOADED();
  ASSERT_FALSE(LibcurlMapped()) << "loaded before any curl call";
  CURL* h = curl_easy_init();
  ASSERT_NE(h, nullptr) << "libcurl.so.4 could not be loaded on this machine";
  EXPECT_TRUE(LibcurlLoaded());
  EXPECT_TRUE(LibcurlMapped());
  EXPECT_EQ(curl_easy_setopt(h, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
  curl_easy_cleanup(h);
}

}  // namespace
}  // namespace gpudoctor
