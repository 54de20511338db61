// `gpudoctor compare GOOD.json [NOW.json]`: what differs between a report from a day the node was
// fast and now (a second report, or a check run now with the given flags). Exit 0 when nothing
// that matters differs, 1 when something does, 3 when a report cannot be read.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "check/run_check.h"
#include "cli/commands.h"
#include "core/input_file.h"
#include "core/json_text.h"
#include "core/root_fs.h"
#include "report/compare.h"
#include "report/report.h"

namespace gpudoctor {
namespace {

constexpr size_t kMaxReportBytes = 64 << 20;

Result<nlohmann::json> LoadReport(const std::string& path, TimePoint deadline) {
  auto text = ReadInputFile(path, kMaxReportBytes, deadline);
  if (!text.ok()) return text.status();
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return InvalidArgument(path + ": not valid JSON");
  return j;
}

}  // namespace

int CompareCommand(const CliOptions& o) {
  if (o.positional.empty() || o.positional.size() > 2) {
    return CouldNotRun("usage: gpudoctor compare GOOD.json [NOW.json]");
  }
  TimePoint deadline = InputDeadline(o);
  auto before = LoadReport(o.positional[0], deadline);
  if (!before.ok()) return CouldNotRun(before.status().message());
  nlohmann::json after;
  if (o.positional.size() == 2) {
    auto loaded = LoadReport(o.positional[1], deadline);
    if (!loaded.ok()) return CouldNotRun(loaded.status().message());
    after = std::move(*loaded);
  } else {
    auto settings = BuildSettings(o);
    if (!settings.ok()) return CouldNotRun(settings.status().message());
    after = nlohmann::json::parse(RenderJson(RunCheck(*settings)), nullptr, false);
  }
  auto c = CompareReports(*before, after);
  if (!c.ok()) return CouldNotRun(c.status().message());
  std::string out = o.json ? JsonText(c->json, 2) + "\n" : RenderComparisonText(*c);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return c->differences > 0 ? 1 : 0;
}

}  // namespace gpudoctor
