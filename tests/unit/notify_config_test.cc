#include <gtest/gtest.h>

#include "config/config.h"

namespace gpudoctor {
namespace {

TEST(NotifyConfigTest, ParsesAllKindsAndWatchHttpKeys) {
  Settings s;
  auto r = ApplyConfigText(R"(
[watch]
listen = "[::1]:9100"
token_file = "/etc/gpudoctor/token"
dcgm_compat = true

[[notify.webhook]]
url = "https://hooks.example/gpu"
min_severity = "warn"

[[notify.exec]]
argv = ["/bin/true", "{id}"]
min_severity = "crit"
timeout_s = 30

[[notify.alertmanager]]
url = "http://127.0.0.1:9093"
bogus = 1
)",
                           "t.toml", s);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(s.watch_listen, "[::1]:9100");
  EXPECT_EQ(s.watch_token_file, "/etc/gpudoctor/token");
  EXPECT_TRUE(s.watch_dcgm_compat);
  ASSERT_EQ(s.notify.size(), 3u);
  // Grouped by kind (toml++ tables iterate in key order), file order within a kind.
  EXPECT_EQ(s.notify[0].kind, "alertmanager");
  EXPECT_EQ(s.notify[0].url, "http://127.0.0.1:9093");
  EXPECT_EQ(s.notify[1].argv.size(), 2u);
  EXPECT_EQ(s.notify[1].timeout_s, 30);
  EXPECT_EQ(s.notify[2].kind, "webhook");
  EXPECT_EQ(s.notify[2].min_severity, "warn");
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_NE(r->warnings[0].find("bogus"), std::string::npos);
}

TEST(NotifyConfigTest, RejectsShellStringsAndBadValues) {
  for (const char* bad : {"[[notify.exec]]\nargv = \"drain-node {id}\"\n",
                          "[[notify.exec]]\nargv = [\"drain-node\"]\n",
                          "[[notify.webhook]]\nurl = \"file:///etc/passwd\"\n",
                          "[[notify.webhook]]\nurl = \"http://x\"\nmin_severity = \"loud\"\n",
                          "[[notify.exec]]\nargv = [\"/bin/true\"]\ntimeout_s = 0\n",
                          "[[notify.webhook]]\nmin_severity = \"warn\"\n", "notify = 3\n"}) {
    Settings s;
    auto r = ApplyConfigText(bad, "t.toml", s);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("t.toml:"), std::string::npos) << bad;
    }
  }
}

}  // namespace
}  // namespace gpudoctor
