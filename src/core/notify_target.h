// Checks of notifier targets, done when the config is loaded (with its file and line) and again
// when notifiers are created, so a bad target never waits for the first alert to be noticed.
// Pure except ExecProgramProblem, which stats the program. Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

// At most this many notifiers (each has its own thread and queue).
inline constexpr size_t kMaxNotifiers = 32;
// Shortest accepted timeout_s: below a millisecond, curl and the exec wait would read 0 as
// "no timeout at all".
inline constexpr double kMinNotifyTimeoutS = 0.001;
inline constexpr double kMaxNotifyTimeoutS = 600;

// "" when `url` is http:// or https://, has a host (name, IPv4 or [IPv6]) and, if any, a port
// 1-65535, holds no whitespace or control characters and is at most 2048 bytes; else the reason.
std::string HttpUrlProblem(std::string_view url);

// HttpUrlProblem, and the base URL of Alertmanager: gpudoctor appends /api/v2/alerts itself, so a
// URL already naming the API (/api/v1/..., /api/v2/...) is refused. A path prefix
// (--web.route-prefix) is fine.
std::string AlertmanagerUrlProblem(std::string_view url);

// "" when `path` is absolute, exists, is not a directory and is executable by us; else the reason.
std::string ExecProgramProblem(const std::string& path);

// Exec argv placeholders whose values come from the device or the host ({key} {uuid}
// {pci_bus_id} {serial} {summary} {hostname}): a GPU serial "--help" must never become an option.
// "" when every argument that starts with one of them comes after a literal "--" (arguments like
// "--serial={serial}" are fine anywhere); else the reason naming the argument.
std::string ExecArgvProblem(const std::vector<std::string>& argv);

}  // namespace gpudoctor
