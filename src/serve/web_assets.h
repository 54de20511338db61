// The web dashboard, embedded into the binary at build time (web/ built by vite, turned into
// build/generated/web_assets.cc by scripts/embed_web.py). When node/npm were unavailable at build
// time the table holds one fallback index.html that says the dashboard was not built.
// Thread-safe: the table is constant data.
#pragma once

#include <string_view>

namespace gpudoctor {

struct WebAsset {
  std::string_view path;          // "/index.html", "/assets/app.js"
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view body;
};

// The asset served at `path`; "/" is index.html. Query strings are not part of `path`.
// nullptr when there is none.
const WebAsset* FindWebAsset(std::string_view path);

// True when the real dashboard was embedded, false for the "not built" fallback page.
bool WebDashboardBuilt();

}  // namespace gpudoctor
