// Notifier targets are checked when the config is loaded, naming the file and line: URLs,
// Alertmanager base URLs, exec programs, device values in argv, timeouts and the notifier count.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "config/config.h"
#include "core/notify_target.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

Status Load(const std::string& text) {
  Settings s;
  auto r = ApplyConfigText(text, "n.toml", s);
  return r.ok() ? Status::Ok() : r.status();
}

void ExpectRejectedAtLine(const std::string& text, int line, const std::string& reason) {
  Status s = Load(text);
  ASSERT_FALSE(s.ok()) << text;
  EXPECT_NE(s.message().find("n.toml:" + std::to_string(line) + ":"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find(reason), std::string::npos) << s.message();
}

TEST(NotifyValidationTest, WebhookUrlsAreCheckedAtLoad) {
  for (const char* bad :
       {"http://", "https://:80/x", "http://host:0/x", "http://host:65536/x", "http://host:99999/x",
        "http://host:8a/x", "http://ho st/x", "http://host/x y", "http://host/\tx", "http://[::1/x",
        "ftp://host/x", "http://host:/x", "http://ho%st/"}) {
    ExpectRejectedAtLine(std::string("\n[[notify.webhook]]\nurl = \"") + bad + "\"\n", 3, "URL");
  }
  for (const char* good : {"http://127.0.0.1:9/x", "https://hooks.example/a/b?c=d",
                           "http://[::1]:8080/hook", "https://u:p@h.example:443/"}) {
    EXPECT_TRUE(Load(std::string("[[notify.webhook]]\nurl = \"") + good + "\"\n").ok()) << good;
  }
}

TEST(NotifyValidationTest, AlertmanagerUrlWithItsApiPathIsRefused) {
  ExpectRejectedAtLine("[[notify.alertmanager]]\nurl = \"http://am:9093/api/v2/alerts\"\n", 2,
                       "base URL");
  ExpectRejectedAtLine("[[notify.alertmanager]]\nurl = \"http://am:9093/api/v1/alerts/\"\n", 2,
                       "base URL");
  EXPECT_TRUE(Load("[[notify.alertmanager]]\nurl = \"http://am:9093\"\n").ok());
  EXPECT_TRUE(Load("[[notify.alertmanager]]\nurl = \"http://proxy/alertmanager/\"\n").ok());
}

TEST(NotifyValidationTest, ExecProgramMustExistBeExecutableAndNotADirectory) {
  testing::TempDir dir;
  dir.Write("plain", "not a program\n");
  ::chmod((dir.path() + "/plain").c_str(), 0644);
  ExpectRejectedAtLine("[[notify.exec]]\nargv = [\"" + dir.path() + "/missing\"]\n", 2, "missing");
  ExpectRejectedAtLine("[[notify.exec]]\nargv = [\"" + dir.path() + "\"]\n", 2, "directory");
  // No execute bit at all: refused even for root (access(X_OK) needs one).
  ExpectRejectedAtLine("[[notify.exec]]\nargv = [\"" + dir.path() + "/plain\"]\n", 2,
                       "not executable");
  EXPECT_TRUE(Load("[[notify.exec]]\nargv = [\"/bin/true\"]\n").ok());
}

TEST(NotifyValidationTest, DeviceValuesMayStartAnArgumentOnlyAfterDoubleDash) {
  ExpectRejectedAtLine("[[notify.exec]]\nargv = [\"/bin/true\", \"{serial}\"]\n", 2, "--");
  ExpectRejectedAtLine("[[notify.exec]]\nargv = [\"/bin/true\", \"{uuid}-x\"]\n", 2, "{uuid}");
  EXPECT_TRUE(Load("[[notify.exec]]\nargv = [\"/bin/true\", \"--serial={serial}\", \"{id}\", "
                   "\"--\", \"{serial}\", \"{summary}\"]\n")
                  .ok());
}

TEST(NotifyValidationTest, TimeoutBelowAMillisecondIsRefused) {
  ExpectRejectedAtLine("[[notify.webhook]]\nurl = \"http://h/x\"\ntimeout_s = 0.0001\n", 3,
                       "timeout_s");
  EXPECT_TRUE(Load("[[notify.webhook]]\nurl = \"http://h/x\"\ntimeout_s = 0.001\n").ok());
}

TEST(NotifyValidationTest, AtMost32Notifiers) {
  std::string text;
  for (int i = 0; i < 33; ++i)
    text += "[[notify.webhook]]\nurl = \"http://h/" + std::to_string(i) + "\"\n";
  // The 33rd table starts on line 65.
  ExpectRejectedAtLine(text, 65, "more than 32 notifiers");
  std::string ok;
  for (int i = 0; i < 32; ++i)
    ok += "[[notify.webhook]]\nurl = \"http://h/" + std::to_string(i) + "\"\n";
  EXPECT_TRUE(Load(ok).ok());
  // 2000 tables: refused, not 2000 threads.
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "[[notify.webhook]]\nurl = \"http://h/x\"\n";
  EXPECT_FALSE(Load(many).ok());
}

}  // namespace
}  // namespace gpudoctor
