#include "config/inference_config.h"

#include "core/notify_target.h"
#include "inference/engine_metrics.h"
#include "job/step_inbox.h"

namespace gpudoctor {
namespace {

std::string Line(const std::string& source, const toml::node& n) {
  return source + ":" + std::to_string(n.source().begin.line);
}

}  // namespace

Status ApplyInferenceConfig(const toml::table& root, const std::string& source, Settings& settings,
                            std::vector<std::string>& warnings) {
  const toml::node* node = root.get("inference");
  if (node == nullptr) return Status::Ok();
  const toml::array* entries = node->as_array();
  if (entries == nullptr) {
    return InvalidArgument(Line(source, *node) +
                           ": 'inference' must be an array of tables, [[inference]]");
  }
  std::vector<Settings::InferenceSetting> out;
  size_t index = 0;
  for (const toml::node& e : *entries) {
    ++index;
    std::string table = "[[inference]] #" + std::to_string(index);
    if (out.size() >= kMaxInference) {
      return InvalidArgument(Line(source, e) + ": " + table + ": more than " +
                             std::to_string(kMaxInference) + " inference servers");
    }
    const toml::table* t = e.as_table();
    if (t == nullptr) return InvalidArgument(Line(source, e) + ": " + table + " must be a table");
    Settings::InferenceSetting s;
    for (const auto& [k, v] : *t) {
      std::string key(k.str());
      std::string where = Line(source, v) + ": " + table + " key '" + key.substr(0, 60) + "'";
      auto str = v.value<std::string>();
      if (key == "name") {
        if (!str || !ValidJobName(*str)) {
          return InvalidArgument(where + ": must be 1-64 characters of A-Z a-z 0-9 _ . -");
        }
        s.name = *str;
      } else if (key == "url") {
        if (!str) return InvalidArgument(where + ": must be a string");
        if (std::string why = HttpUrlProblem(*str); !why.empty()) {
          return InvalidArgument(where + ": " + why);
        }
        s.url = *str;
      } else if (key == "engine") {
        if (!str || !ParseInferenceEngine(*str)) {
          return InvalidArgument(where + ": must be one of vllm, tgi, sglang, triton, auto");
        }
        s.engine = *str;
      } else {
        warnings.push_back(where + ": unknown key (ignored)");
      }
    }
    if (s.url.empty()) return InvalidArgument(Line(source, e) + ": " + table + " needs url");
    for (const auto& other : out) {
      if (!s.name.empty() && other.name == s.name) {
        return InvalidArgument(Line(source, e) + ": " + table + " key 'name': '" + s.name +
                               "' is already the name of another [[inference]]");
      }
    }
    out.push_back(std::move(s));
  }
  settings.inference = std::move(out);
  return Status::Ok();
}

}  // namespace gpudoctor
