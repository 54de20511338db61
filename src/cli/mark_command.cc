// `gpudoctor mark step [--job NAME] [--seconds S] [--step N] [--connect URL] [--token-file F]`:
// one line of integration for a training loop: POST /api/v1/job/NAME/step to the local watch
// daemon (serve/job_push.h). The job defaults to the config's only [[job]]; the URL to the
// config's [watch] listen address. Bounded: 2 s for the whole exchange (a slow daemon never
// holds a training step longer). Exit 0 when the daemon took the mark, 3 otherwise (one line).
#include <cstdlib>

#include "cli/commands.h"
#include "core/http_get.h"
#include "core/strings.h"
#include "serve/http_server.h"

namespace gpudoctor {

int MarkCommand(const CliOptions& o) {
  if (o.positional.size() != 1 || o.positional[0] != "step") {
    return CouldNotRun(
        "usage: gpudoctor mark step [--job NAME] [--seconds S] [--step N] "
        "[--connect URL]");
  }
  auto settings = BuildSettings(o);
  if (!settings.ok()) return CouldNotRun(settings.status().message());
  const Settings& s = **settings;
  std::string job;
  if (auto j = o.Value("--job")) {
    job = *j;
  } else if (s.jobs.size() == 1) {
    job = s.jobs.front().name;
  } else {
    return CouldNotRun(s.jobs.empty() ? "mark step needs --job NAME (no [[job]] in the config)"
                                      : "mark step needs --job NAME (the config has several)");
  }
  std::string base;
  if (auto c = o.Value("--connect")) {
    base = *c;
  } else {
    auto addr = ParseListenAddress(s.watch_listen);
    if (!addr.ok() || s.watch_listen == "off") {
      return CouldNotRun("mark step needs --connect URL ([watch] listen is '" +
                         Sanitize(s.watch_listen, 60) + "')");
    }
    std::string host = addr->host == "0.0.0.0"                     ? "127.0.0.1"
                       : addr->host == "::"                        ? "[::1]"
                       : addr->host.find(':') != std::string::npos ? "[" + addr->host + "]"
                                                                   : addr->host;
    base = "http://" + host + ":" + std::to_string(addr->port);
  }
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::string query;
  if (auto v = o.Value("--step")) query += "step=" + *v;
  if (auto v = o.Value("--seconds")) query += (query.empty() ? "" : "&") + ("seconds=" + *v);
  HttpGetRequest req;
  req.url = base + "/api/v1/job/" + job + "/step" + (query.empty() ? "" : "?" + query);
  req.post_empty = true;
  req.deadline = SteadyClock::now() + std::chrono::seconds(2);
  req.connect_timeout_s = 1;
  req.max_body_bytes = 64 * 1024;
  std::string token;
  if (auto path = o.Value("--token-file")) {
    auto t = ReadTokenFile(*path);
    if (!t.ok()) return CouldNotRun(t.status().message());
    token = *t;
  } else if (const char* env = std::getenv("GPUDOCTOR_TOKEN"); env != nullptr && *env) {
    token = env;
  } else if (!s.watch_token_file.empty()) {
    if (auto t = ReadTokenFile(s.watch_token_file); t.ok()) token = *t;
  }
  if (!token.empty()) req.headers.push_back("Authorization: Bearer " + token);
  auto res = HttpGet(req);
  if (!res.ok()) return CouldNotRun("mark step: " + res.status().message());
  if (res->status != 202) {
    return CouldNotRun("mark step: " + base + " answered HTTP " + std::to_string(res->status) +
                       ": " + Sanitize(res->body, 200));
  }
  return 0;
}

}  // namespace gpudoctor
