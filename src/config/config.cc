#include "config/config.h"

#include <map>
#include <sstream>

#include "config/inference_config.h"
#include "config/job_config.h"
#include "config/notify_config.h"
#include "core/input_file.h"
#include "core/root_fs.h"
#include "core/strings.h"
#include "core/toml.h"
#include "core/toml_ascii_guard.h"
#include "rules/catalogue.h"

namespace gpudoctor {
namespace {

bool IsBareKey(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string TomlString(std::string_view s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q.push_back('\\');
    q.push_back(c);
  }
  return q + "\"";
}

std::string QuoteKeyIfNeeded(std::string_view s) {
  return IsBareKey(s) ? std::string(s) : TomlString(s);
}

std::string Where(const std::string& source, const toml::node& node) {
  const auto& src = node.source();
  return source + ":" + std::to_string(src.begin.line);
}

const char* TypeName(SettingType t) {
  switch (t) {
    case SettingType::kBool:
      return "a boolean (true/false)";
    case SettingType::kInt:
      return "an integer";
    case SettingType::kDouble:
      return "a number";
    case SettingType::kString:
      return "a string";
    case SettingType::kStringArray:
      return "an array of strings";
  }
  return "?";
}

// Converts a TOML node to the spec's type; nullopt on a type mismatch.
std::optional<SettingValue> Convert(const toml::node& node, SettingType type) {
  switch (type) {
    case SettingType::kBool:
      if (auto v = node.as_boolean()) return SettingValue(v->get());
      return std::nullopt;
    case SettingType::kInt:
      if (auto v = node.as_integer()) return SettingValue(static_cast<int64_t>(v->get()));
      return std::nullopt;
    case SettingType::kDouble:
      if (auto v = node.as_floating_point()) return SettingValue(v->get());
      if (auto v = node.as_integer()) return SettingValue(static_cast<double>(v->get()));
      return std::nullopt;
    case SettingType::kString:
      if (auto v = node.as_string()) return SettingValue(v->get());
      return std::nullopt;
    case SettingType::kStringArray: {
      auto arr = node.as_array();
      if (arr == nullptr) return std::nullopt;
      std::vector<std::string> out;
      for (const auto& el : *arr) {
        auto s = el.as_string();
        if (s == nullptr) return std::nullopt;
        out.push_back(s->get());
      }
      return SettingValue(std::move(out));
    }
  }
  return std::nullopt;
}

struct Walker {
  const std::string& source;
  Settings& settings;
  ConfigLoad load;
  Status error;

  void Walk(const toml::table& table, std::vector<std::string>& path) {
    for (const auto& [key, node] : table) {
      if (!error.ok()) return;
      path.emplace_back(key.str());
      std::string dotted = DottedKey(path);
      std::optional<SettingSpec> spec;
      if (path.size() == 1 &&
          (key.str() == "notify" || key.str() == "job" || key.str() == "inference")) {
        // Arrays of tables: config/notify_config.cc, config/job_config.cc,
        // config/inference_config.cc.
      } else if ((spec = FindSetting(path))) {
        Apply(*spec, node, dotted);
      } else if (const toml::table* sub = node.as_table()) {
        Walk(*sub, path);
      } else {
        load.warnings.push_back(Where(source, node) + ": unknown key '" + Sanitize(dotted, 120) +
                                "' (ignored)");
      }
      path.pop_back();
    }
  }

  void Apply(const SettingSpec& spec, const toml::node& node, const std::string& dotted) {
    auto value = Convert(node, spec.type);
    if (!value) {
      error = InvalidArgument(Where(source, node) + ": key '" + dotted + "': must be " +
                              TypeName(spec.type));
      return;
    }
    if (Status s = spec.apply(spec, *value, settings); !s.ok()) {
      error = InvalidArgument(Where(source, node) + ": key '" + dotted + "': " + s.message());
    }
  }
};

std::string ValueToToml(const SettingValue& v) {
  struct Visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return FormatThreshold(d); }
    std::string operator()(const std::string& s) const { return TomlString(s); }
    std::string operator()(const std::vector<std::string>& a) const {
      std::string out = "[";
      for (size_t i = 0; i < a.size(); ++i) out += (i ? ", " : "") + TomlString(a[i]);
      return out + "]";
    }
  };
  return std::visit(Visitor{}, v);
}

}  // namespace

std::string DottedKey(const std::vector<std::string>& path) {
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i) out += ".";
    out += QuoteKeyIfNeeded(path[i]);
  }
  return out;
}

Result<ConfigLoad> ApplyConfigText(std::string_view text, const std::string& source_name,
                                   Settings& settings) {
  if (auto place = FindNonAsciiOutsideStrings(text)) {
    return ParseError(source_name + ":" + std::to_string(place->line) + ":" +
                      std::to_string(place->column) + ": " + kTomlNonAsciiOutsideStrings);
  }
  toml::table parsed;
  try {
    // toml++ in Debian is built with exceptions: convert here, at the call site.
    parsed = toml::parse(text, source_name);
  } catch (const toml::parse_error& err) {
    return ParseError(source_name + ":" + std::to_string(err.source().begin.line) + ":" +
                      std::to_string(err.source().begin.column) + ": " +
                      Sanitize(err.description(), 200));
  }
  Walker w{source_name, settings, {}, Status::Ok()};
  std::vector<std::string> path;
  w.Walk(parsed, path);
  if (!w.error.ok()) return w.error;
  if (Status s = ApplyNotifyConfig(parsed, source_name, settings, w.load.warnings); !s.ok()) {
    return s;
  }
  if (Status s = ApplyJobConfig(parsed, source_name, settings, w.load.warnings); !s.ok()) {
    return s;
  }
  if (Status s = ApplyInferenceConfig(parsed, source_name, settings, w.load.warnings); !s.ok()) {
    return s;
  }
  return std::move(w.load);
}

std::string DefaultConfigText() {
  std::string out =
      "# gpudoctor configuration (TOML).\n"
      "# Every key is listed with its default value, commented out; uncomment to change.\n"
      "# Flags given on the command line win over this file.\n";
  std::string current_table = "\x01";
  for (const auto& spec : ConfigSchema()) {
    std::vector<std::string> table(spec.path.begin(), spec.path.end() - 1);
    std::string header = DottedKey(table);
    if (header != current_table) {
      out += "\n[" + header + "]\n";
      current_table = header;
    }
    out += "# " + spec.help + "\n";
    out +=
        "# " + QuoteKeyIfNeeded(spec.path.back()) + " = " + ValueToToml(spec.default_value) + "\n";
  }
  return out;
}

}  // namespace gpudoctor
