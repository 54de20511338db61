#include "config/notify_config.h"

#include "core/notify_target.h"
#include "findings/finding.h"

namespace gpudoctor {
namespace {

std::string Line(const std::string& source, const toml::node& n) {
  return source + ":" + std::to_string(n.source().begin.line);
}

}  // namespace

Status ApplyNotifyConfig(const toml::table& root, const std::string& source, Settings& settings,
                         std::vector<std::string>& warnings) {
  const toml::node* notify = root.get("notify");
  if (notify == nullptr) return Status::Ok();
  const toml::table* kinds = notify->as_table();
  if (kinds == nullptr)
    return InvalidArgument(Line(source, *notify) + ": 'notify' must be a table");
  std::vector<Settings::NotifySetting> out;
  for (const auto& [kind_key, node] : *kinds) {
    std::string kind(kind_key.str());
    if (kind != "webhook" && kind != "exec" && kind != "alertmanager") {
      warnings.push_back(Line(source, node) + ": unknown key 'notify." + kind.substr(0, 60) +
                         "' (ignored)");
      continue;
    }
    const toml::array* entries = node.as_array();
    if (entries == nullptr) {
      return InvalidArgument(Line(source, node) + ": notify." + kind +
                             " must be an array of tables, [[notify." + kind + "]]");
    }
    for (const toml::node& e : *entries) {
      if (out.size() >= kMaxNotifiers) {
        return InvalidArgument(Line(source, e) + ": more than " + std::to_string(kMaxNotifiers) +
                               " notifiers (each has its own thread); merge receivers");
      }
      const toml::table* t = e.as_table();
      if (t == nullptr) {
        return InvalidArgument(Line(source, e) + ": [[notify." + kind + "]] entries are tables");
      }
      Settings::NotifySetting n;
      n.kind = kind;
      for (const auto& [k, v] : *t) {
        std::string key(k.str());
        std::string where =
            Line(source, v) + ": notify." + kind + " key '" + key.substr(0, 60) + "'";
        if (key == "url" && kind != "exec") {
          auto s = v.value<std::string>();
          if (!s) return InvalidArgument(where + ": must be an http(s):// URL");
          std::string problem =
              kind == "alertmanager" ? AlertmanagerUrlProblem(*s) : HttpUrlProblem(*s);
          if (!problem.empty()) return InvalidArgument(where + ": the URL " + problem);
          n.url = *s;
        } else if (key == "argv" && kind == "exec") {
          const toml::array* a = v.as_array();
          if (a == nullptr || a->empty() || a->size() > 64) {
            return InvalidArgument(where + ": must be a non-empty array of strings");
          }
          for (const toml::node& arg : *a) {
            auto s = arg.value<std::string>();
            if (!s || s->size() > 4096) return InvalidArgument(where + ": must be strings");
            n.argv.push_back(*s);
          }
          if (n.argv[0].empty() || n.argv[0][0] != '/') {
            return InvalidArgument(where + ": the program must be an absolute path (no shell)");
          }
          if (std::string problem = ExecArgvProblem(n.argv); !problem.empty()) {
            return InvalidArgument(where + ": " + problem);
          }
        } else if (key == "min_severity") {
          auto s = v.value<std::string>();
          if (!s || !ParseSeverity(*s))
            return InvalidArgument(where + ": must be info, warn or crit");
          n.min_severity = *s;
        } else if (key == "timeout_s") {
          auto d = v.value<double>();
          if (!d || !(*d >= kMinNotifyTimeoutS && *d <= kMaxNotifyTimeoutS))
            return InvalidArgument(where + ": must be seconds from 0.001 to 600");
          n.timeout_s = *d;
        } else {
          warnings.push_back(where + ": unknown key (ignored)");
        }
      }
      if (kind == "exec" && n.argv.empty()) {
        return InvalidArgument(Line(source, e) + ": [[notify.exec]] needs argv");
      }
      if (kind != "exec" && n.url.empty()) {
        return InvalidArgument(Line(source, e) + ": [[notify." + kind + "]] needs url");
      }
      out.push_back(std::move(n));
    }
  }
  settings.notify = std::move(out);
  return Status::Ok();
}

}  // namespace gpudoctor
