#include "config/job_config.h"

#include <cmath>

#include "core/notify_target.h"
#include "inference/prom_text.h"
#include "job/step_inbox.h"
#include "job/step_line.h"

namespace gpudoctor {
namespace {

std::string Line(const std::string& source, const toml::node& n) {
  return source + ":" + std::to_string(n.source().begin.line);
}

}  // namespace

Status ApplyJobConfig(const toml::table& root, const std::string& source, Settings& settings,
                      std::vector<std::string>& warnings) {
  const toml::node* node = root.get("job");
  if (node == nullptr) return Status::Ok();
  const toml::array* entries = node->as_array();
  if (entries == nullptr) {
    return InvalidArgument(Line(source, *node) + ": 'job' must be an array of tables, [[job]]");
  }
  std::vector<Settings::JobSetting> out;
  size_t index = 0;
  for (const toml::node& e : *entries) {
    ++index;
    std::string table = "[[job]] #" + std::to_string(index);
    if (out.size() >= kMaxJobs) {
      return InvalidArgument(Line(source, e) + ": " + table + ": more than " +
                             std::to_string(kMaxJobs) + " jobs");
    }
    const toml::table* t = e.as_table();
    if (t == nullptr) return InvalidArgument(Line(source, e) + ": " + table + " must be a table");
    Settings::JobSetting j;
    for (const auto& [k, v] : *t) {
      std::string key(k.str());
      std::string where = Line(source, v) + ": " + table + " key '" + key.substr(0, 60) + "'";
      const toml::node& value = v;  // clang 14 cannot capture a structured binding
      auto str = [&value]() { return value.value<std::string>(); };
      if (key == "name") {
        auto s = str();
        if (!s || !ValidJobName(*s)) {
          return InvalidArgument(where + ": must be 1-64 characters of A-Z a-z 0-9 _ . -");
        }
        j.name = *s;
      } else if (key == "log") {
        auto s = str();
        if (!s || s->empty() || (*s)[0] != '/') {
          return InvalidArgument(where + ": must be an absolute path");
        }
        j.log = *s;
      } else if (key == "preset") {
        auto s = str();
        if (!s || !ParseStepPreset(*s)) {
          return InvalidArgument(where +
                                 ": must be one of auto, tqdm, lightning, megatron, deepspeed, "
                                 "step, regex");
        }
        j.preset = *s;
      } else if (key == "regex") {
        auto s = str();
        std::string why;
        if (!s || !CompileStepRegex(*s, &why)) {
          return InvalidArgument(where + ": " + (s ? why : "must be a string"));
        }
        j.regex = *s;
      } else if (key == "capture") {
        auto s = str();
        if (!s || !ParseStepCapture(*s)) {
          return InvalidArgument(where + ": must be one of seconds, ms, it_per_s, step");
        }
        j.capture = *s;
      } else if (key == "baseline_steps") {
        auto n = v.value<int64_t>();
        if (!v.is_integer() || !n || *n < 1 || *n > 100000) {
          return InvalidArgument(where + ": must be an integer from 1 to 100000");
        }
        j.baseline_steps = static_cast<int>(*n);
      } else if (key == "baseline_s") {
        auto d = v.value<double>();
        if (!d || !std::isfinite(*d) || *d < 0 || *d > 1e6) {
          return InvalidArgument(where + ": must be seconds from 0 (measure it) to 1e6");
        }
        j.baseline_s = *d;
      } else if (key == "prometheus_url") {
        auto s = str();
        if (!s) return InvalidArgument(where + ": must be a string");
        if (std::string why = HttpUrlProblem(*s); !why.empty()) {
          return InvalidArgument(where + ": " + why);
        }
        j.prometheus_url = *s;
      } else if (key == "metric") {
        auto s = str();
        bool ok = s && !s->empty() && s->size() <= 200;
        for (char c : s.value_or("")) {
          ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == ':');
        }
        if (!ok || ((*s)[0] >= '0' && (*s)[0] <= '9')) {
          return InvalidArgument(where +
                                 ": must be a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
        }
        j.metric = *s;
      } else if (key == "selector") {
        auto s = str();
        if (!s) return InvalidArgument(where + ": must be a string such as {rank=\"0\"}");
        if (auto m = ParsePromSelector(*s); !m.ok()) {
          return InvalidArgument(where + ": " + m.status().message());
        }
        j.selector = *s;
      } else {
        warnings.push_back(where + ": unknown key (ignored)");
      }
    }
    if (j.name.empty()) return InvalidArgument(Line(source, e) + ": " + table + " needs name");
    for (const auto& other : out) {
      if (other.name == j.name) {
        return InvalidArgument(Line(source, e) + ": " + table + " key 'name': '" + j.name +
                               "' is already the name of another [[job]]");
      }
    }
    if (j.preset == "regex" && j.regex.empty()) {
      return InvalidArgument(Line(source, e) + ": " + table +
                             " key 'preset': \"regex\" needs the key regex");
    }
    if (!j.regex.empty() && j.preset != "regex") {
      return InvalidArgument(Line(source, e) + ": " + table +
                             " key 'regex': set preset = \"regex\" to use it");
    }
    if (j.prometheus_url.empty() != j.metric.empty()) {
      return InvalidArgument(Line(source, e) + ": " + table + " key '" +
                             (j.metric.empty() ? "prometheus_url" : "metric") +
                             "': needs the key " +
                             (j.metric.empty() ? "metric" : "prometheus_url"));
    }
    if (!j.selector.empty() && j.metric.empty()) {
      return InvalidArgument(Line(source, e) + ": " + table +
                             " key 'selector': needs prometheus_url and metric");
    }
    out.push_back(std::move(j));
  }
  settings.jobs = std::move(out);
  return Status::Ok();
}

}  // namespace gpudoctor
