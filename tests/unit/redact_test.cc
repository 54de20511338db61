// Redaction of the bundle's config (from the parsed TOML document) and of its other members.
#include "bundle/redact.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bundle/bundle.h"
#include "core/settings.h"
#include "facts/snapshot.h"
#include "report/report.h"

namespace gpudoctor {
namespace {

void ExpectHidden(const std::string& out, const std::vector<std::string>& secrets) {
  for (const std::string& s : secrets) {
    EXPECT_EQ(out.find(s), std::string::npos) << s << "\n" << out;
  }
}

void ExpectKept(const std::string& out, const std::vector<std::string>& kept) {
  for (const std::string& k : kept) {
    EXPECT_NE(out.find(k), std::string::npos) << k << "\n" << out;
  }
}

TEST(RedactTest, SecretsInConfigAreHidden) {
  std::string r = RedactConfigToml(
      "[watch]\n"
      "listen = \"0.0.0.0:9835\"\n"
      "token_file = \"/etc/gpudoctor/token\"\n"
      "api_token = \"abc123secret\"\n"
      "\n"
      "[[notify.webhook]]\n"
      "url = \"https://bob:hunter2@hooks.example.com/x?token=qwerty99&team=ops\"\n"
      "headers = { Authorization = \"Bearer s3cr3t-bearer\" }\n"
      "[[notify.exec]]\n"
      "argv = [\"/usr/bin/curl\", \"-H\", \"Authorization: Basic Ym9iOmh1bnRlcjI=\", "
      "\"--password=pw1234\"]\n"
      "# password = \"commented\"\n"
      "min_severity = \"crit\"\n",
      {"the-token-value"});
  ExpectHidden(r, {"abc123secret", "hunter2", "bob", "qwerty99", "s3cr3t-bearer",
                   "Ym9iOmh1bnRlcjI=", "pw1234", "commented"});
  ExpectKept(r, {"listen = '0.0.0.0:9835'", "token_file = '/etc/gpudoctor/token'",
                 "url = 'https://hooks.example.com/<redacted>'", "min_severity = 'crit'",
                 "[[notify.exec]]", "'/usr/bin/curl'"});
}

// Every TOML spelling of a notifier URL reaches the same rule: the parser, not the text, decides.
TEST(RedactTest, NotifyUrlsInEveryTomlShapeKeepOnlyTheOrigin) {
  const char* shapes[] = {
      "[[notify.webhook]]\nurl = \"\"\"https://h.example/T/B/LEAK1\"\"\"\n",
      "[[notify.webhook]]\nurl = '''https://h.example/T/B/LEAK1'''\n",
      "[[notify.webhook]]\nurl = \"\"\"\nhttps://h.example/T/B/LEAK1\"\"\"\n",
      "[[notify.webhook]]\nurl = \"\"\"https://h.example/T/B/LE\\\n   AK1\"\"\"\n",
      "notify = { webhook = [ { url = \"https://h.example/T/B/LEAK1\" } ] }\n",
      "[notify]\nwebhook = [{url = \"https://h.example/T/B/LEAK1\"}]\n",
      "[[ notify . webhook ]]\nurl = \"https://h.example/T/B/LEAK1\"\n",
      "[[\"notify\".webhook]]\nurl = \"https://h.example/T/B/LEAK1\"\n",
      "[[\"notify\".\"webhook\"]]\n\"url\" = 'https://h.example/T/B/LEAK1'\n",
      "[[Notify.WebHook]]\nurl = \"https://h.example/T/B/LEAK1\"\n",
      "[notify.alertmanager]\nurl = \"https://h.example/T/B/LEAK1\"\n",
  };
  for (const char* shape : shapes) {
    std::string r = RedactConfigToml(shape, {});
    ExpectHidden(r, {"LEAK1", "AK1"});
    EXPECT_NE(r.find("https://h.example/<redacted>"), std::string::npos) << shape << "\n" << r;
  }
}

TEST(RedactTest, NestedValuesUnderSecretAndNotifierKeysAreHiddenLeafByLeaf) {
  // A secret-looking key's table or array: every leaf; a notifier section's tables field by field
  // (their known fields kept), its other elements and nested arrays redacted.
  std::string r = RedactConfigToml(
      "[credentials]\nuser = \"CRED1\"\nnested = { deep = \"CRED2\", list = [\"CRED3\", 4] }\n"
      "[watch]\napi_tokens = [\"TOK1\", [\"TOK2\"], { t = \"TOK3\" }]\n"
      "[notify]\nwebhook = [{ url = \"https://h.example/LEAK4\", timeout_s = 5 }, \"LEAK5\", "
      "[\"LEAK6\"]]\nextra = \"LEAK7\"\n",
      {});
  ExpectHidden(
      r, {"CRED1", "CRED2", "CRED3", "TOK1", "TOK2", "TOK3", "LEAK4", "LEAK5", "LEAK6", "LEAK7"});
  ExpectKept(r, {"https://h.example/<redacted>", "timeout_s = 5", "[credentials]"});
}

TEST(RedactTest, UserinfoPasswordWithSlashIsHidden) {
  std::string r = RedactConfigToml(
      "[[notify.webhook]]\nurl = \"https://bob:pa/ss@hooks.example/x\"\n"
      "[probes]\ntarget = \"https://eve:s3/cr3t@mirror.example/y\"\n",
      {});
  ExpectHidden(r, {"pa/ss", "pa", "s3/cr3t", "cr3t", "bob", "eve"});
  ExpectKept(r, {"https://hooks.example/<redacted>", "https://<redacted>@mirror.example/y"});
  EXPECT_EQ(RedactText("{\"d\":\"https://bob:pa/ss@h.example/x\"}", {}),
            "{\"d\":\"https://<redacted>@h.example/x\"}");
}

TEST(RedactTest, ExecArgvKeepsOnlyProgramFlagsAndPlaceholders) {
  std::string r = RedactConfigToml(
      "[[notify.exec]]\n"
      "argv = [\n"
      "  \"/usr/local/bin/notify\",\n"
      "  \"--api-key\", \"k3y-VALUE\",\n"
      "  \"-u\", \"bob:hunter2\",\n"
      "  \"-pSECRETpw\",\n"
      "  \"-H\", \"Authorization: token ghp_TOKEN9\",\n"
      "  \"https://alice:wonder@h.example/p\",\n"
      "  '{\"user\":\"x\",\"password\":\"JSONPW\"}',\n"
      "  \"--host\", \"--\", \"{serial}\",\n"
      "]\n",
      {});
  ExpectHidden(r, {"k3y-VALUE", "hunter2", "SECRETpw", "ghp_TOKEN9", "wonder", "JSONPW"});
  ExpectKept(r, {"'/usr/local/bin/notify'", "'--host'", "'--'", "'{serial}'"});
  // The --api-key flag itself names a secret: hidden as well, never the value after it.
  EXPECT_EQ(r.find("'--api-key'"), std::string::npos) << r;
}

TEST(RedactTest, SecretKeysLoseEveryValueWhateverTheShape) {
  std::string r = RedactConfigToml(
      "password = \"\"\"\n"
      "line-one-secret\n"
      "[not_a_table]\n"
      "\"\"\"\n"
      "private_key = '''\n"
      "-----BEGIN KEY-----\n"
      "MIIEvQIBADANBg\n"
      "-----END KEY-----'''\n"
      "tokens = [\n"
      "  \"multi-line-tok1\",\n"
      "  \"multi-line-tok2\",\n"
      "]\n"
      "motd = \"\"\"\n"
      "hello\n"
      "\"\"\"\n"
      "[a]\n"
      "b.auth.user = \"dotted-secret\"\n"
      "c = { X-Api-Key = \"inline key 1\", X-Team = \"ops\", token='ab' }\n"
      "[srv]\n"
      "secret = 1234567\n"
      "api_key = \"xy\"\n"
      "hdr = \"Authorization: token ghp_hdr\"\n"
      "cmd = \"login --password=pw9 user\"\n"
      "json = '{\"password\": \"jsonpw\"}'\n",
      {});
  ExpectHidden(
      r, {"line-one-secret", "not_a_table", "MIIEvQIBADANBg", "BEGIN KEY", "multi-line-tok",
          "dotted-secret", "inline key 1", "'ab'", "1234567", "'xy'", "ghp_hdr", "pw9", "jsonpw"});
  ExpectKept(r, {"hello", "X-Team = 'ops'", "user"});
}

TEST(RedactTest, ConfigThatDoesNotParseIsNotIncluded) {
  std::string r = RedactConfigToml("token = \"unterminated-S3CRET\n[[x\n", {});
  EXPECT_EQ(r.find("S3CRET"), std::string::npos) << r;
  EXPECT_NE(r.find("not included"), std::string::npos) << r;
}

TEST(RedactTest, ExplicitSecretsAreReplacedEverywhereShortOnesAsWholeWords) {
  EXPECT_EQ(RedactText("{\"x\":\"a-token-1234 and a-token-1234\"}", {"a-token-1234"}),
            "{\"x\":\"<redacted> and <redacted>\"}");
  // A 2-character token is replaced where it stands alone, not inside every word.
  EXPECT_EQ(RedactText("{\"t\":\"q7\",\"w\":\"aq7b\"}", {"q7"}),
            "{\"t\":\"<redacted>\",\"w\":\"aq7b\"}");
  EXPECT_EQ(RedactConfigToml("[x]\nnote = \"q7\"\n", {"q7"}).find("q7"), std::string::npos);
  // Reports keep a key named like a secret: only values inside it are judged.
  EXPECT_EQ(RedactText("password = 1\n", {}), "password = 1\n");
  EXPECT_EQ(RedactText("{\"h\":\"Authorization: token abc\"}", {}),
            "{\"h\":\"Authorization: <redacted>\"}");
  EXPECT_TRUE(SecretLookingName("GITHUB_TOKEN"));
  EXPECT_FALSE(SecretLookingName("token_file"));
  EXPECT_FALSE(SecretLookingName("min_severity"));
}

TEST(RedactTest, SecretQueryParametersAreHidden) {
  std::string r = RedactConfigToml(
      "[probes]\n"
      "target = \"https://h/x?access_key=AKIAEXAMPLE1&sig=c2lnbmF0dXJl&X-Amz-Signature=abcdef12"
      "&api_key=k1k1k1&key=kkkk2&region=eu\"\n",
      {});
  ExpectHidden(r, {"AKIAEXAMPLE1", "c2lnbmF0dXJl", "abcdef12", "k1k1k1", "kkkk2"});
  ExpectKept(r, {"region=eu"});
}

// One secret planted in the config and in the explicit secrets: no member of the bundle shows it.
TEST(RedactTest, PlantedSecretIsInNoBundleMember) {
  const std::string kSecret = "PLANTED-zz9-SECRET";
  Report report;
  Settings settings;
  BundleInputs in;
  in.report = &report;
  in.settings = &settings;
  in.config_path = "/etc/gpudoctor/gpudoctor.toml";
  in.config_text = "[[ notify . webhook ]]\nurl = \"\"\"https://u:" + kSecret +
                   "@h.example/x\"\"\"\n[[notify.exec]]\nargv = ['/bin/x', '" + kSecret +
                   "']\n[watch]\nauth = { bearer = '" + kSecret + "' }\n";
  in.secrets = {kSecret};
  in.now_unix_s = 1764000000;
  for (const BundleMember& m : BuildBundleMembers(in)) {
    EXPECT_EQ(m.content.find(kSecret), std::string::npos) << m.name << "\n" << m.content;
  }
}

}  // namespace
}  // namespace gpudoctor
