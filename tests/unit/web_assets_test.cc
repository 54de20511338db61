// The embedded dashboard (build/generated/web_assets.cc from web/ via scripts/embed_web.py).
#include "serve/web_assets.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

namespace gpudoctor {
namespace {

TEST(WebAssetsTest, RootIsTheIndexPage) {
  const WebAsset* root = FindWebAsset("/");
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root, FindWebAsset("/index.html"));
  EXPECT_EQ(root->content_type, "text/html; charset=utf-8");
  EXPECT_NE(root->body.find("<html"), std::string_view::npos);
  EXPECT_EQ(FindWebAsset("/no-such-file.js"), nullptr);
  EXPECT_EQ(FindWebAsset("/../etc/passwd"), nullptr);
}

TEST(WebAssetsTest, TheBuiltPageLoadsOnlyEmbeddedAssets) {
  if (!WebDashboardBuilt()) {
    EXPECT_NE(FindWebAsset("/")->body.find("dashboard was not built"), std::string_view::npos);
    GTEST_SKIP() << "built without node/npm: the fallback page is embedded";
  }
  std::string index(FindWebAsset("/")->body);
  // Every script and stylesheet the page names is served from the binary (no CDN).
  std::regex ref(R"((?:src|href)=\"([^\"]+)\")");
  int refs = 0;
  for (auto it = std::sregex_iterator(index.begin(), index.end(), ref);
       it != std::sregex_iterator(); ++it) {
    std::string url = (*it)[1];
    if (url.rfind("data:", 0) == 0) continue;  // inline (the empty favicon)
    EXPECT_EQ(url.rfind("http", 0), std::string::npos) << "external reference " << url;
    const WebAsset* a = FindWebAsset(url);
    ASSERT_NE(a, nullptr) << url << " is not embedded";
    EXPECT_GT(a->body.size(), 100u) << url;
    ++refs;
  }
  EXPECT_GE(refs, 2);  // app.js and app.css
  const WebAsset* js = FindWebAsset("/assets/app.js");
  ASSERT_NE(js, nullptr);
  EXPECT_EQ(js->content_type, "text/javascript; charset=utf-8");
  EXPECT_NE(js->body.find("/api/v1/status"), std::string_view::npos);
  EXPECT_NE(js->body.find("uplot"), std::string_view::npos);  // uPlot is bundled, not fetched
  // The plot's metric choice is asked from the daemon (the metric table), not typed in the page:
  // of the GPU metrics only the default one may be named in the script.
  EXPECT_NE(js->body.find("/api/v1/series"), std::string_view::npos);
  EXPECT_EQ(js->body.find("gpudoctor_gpu_power_watts"), std::string_view::npos);
}

}  // namespace
}  // namespace gpudoctor
