// Config file: TOML, described by one typed schema table (config_schema.cc) that both parses the
// file and prints the commented default (`gpudoctor config --default`). Unknown keys are warned
// about, never fatal; a key with a wrong type or an invalid value is an error naming file, line
// and key (the CLI exits 3). Not thread-safe; used on the main thread before checks start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/settings.h"
#include "core/status.h"

namespace gpudoctor {

enum class SettingType { kBool, kInt, kDouble, kString, kStringArray };

using SettingValue = std::variant<bool, int64_t, double, std::string, std::vector<std::string>>;

struct SettingSpec {
  std::vector<std::string> path;  // {"finding", "host.disk.full", "warn_used_pct"}
  SettingType type;
  SettingValue default_value;
  std::string help;
  // Validates the (type-checked) value and stores it. Error message without key or line.
  Status (*apply)(const SettingSpec& spec, const SettingValue& value, Settings& settings);
  // Optional context for apply (e.g. the finding id and threshold key).
  std::string arg1, arg2;
};

// The schema: static keys plus one [probes] key per probe and one [finding."ID"] table per
// catalogue entry (enabled + its thresholds).
// Builds every entry (about a thousand: help texts, paths) on first use and keeps them for the
// process: for `config --default`, the docs and the tests, not for reading a config file.
const std::vector<SettingSpec>& ConfigSchema();

// The schema's entry at `path` ({"finding", "net.loss", "enabled"}), built alone: a probe's or a
// catalogue entry's keys from the registry or the catalogue, the static keys from their table
// (built once). nullopt: no such key (a table such as {"finding", "net.loss"} is not a key).
// Equal to the ConfigSchema() entry with that path. Reading a config file looks up its keys
// here, so a `check` with a config file does not build the whole schema (~100 page faults).
// Thread-safe.
std::optional<SettingSpec> FindSetting(const std::vector<std::string>& path);

// `a.b."c.d".e`: the TOML dotted key of a path (segments quoted when not bare).
std::string DottedKey(const std::vector<std::string>& path);

struct ConfigLoad {
  std::vector<std::string> warnings;  // "FILE:LINE: unknown key 'x' (ignored)"
};

// Parses TOML text (named `source_name` in messages) into `settings`.
// Errors: parse_error "FILE:LINE:COL: ..." or invalid_argument "FILE:LINE: key 'k': ...".
Result<ConfigLoad> ApplyConfigText(std::string_view text, const std::string& source_name,
                                   Settings& settings);

// The commented default config file.
std::string DefaultConfigText();

inline constexpr const char* kDefaultConfigPath = "/etc/gpudoctor/gpudoctor.toml";
// A config file larger than this is refused (invalid_argument), never read in part.
inline constexpr size_t kMaxConfigBytes = size_t{1} << 20;

}  // namespace gpudoctor
