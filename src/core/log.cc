#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <string>

namespace gpudoctor {
namespace {

std::atomic<int> g_max_level{static_cast<int>(LogLevel::kInfo)};

}  // namespace

void SetLogLevel(LogLevel max_level) { g_max_level = static_cast<int>(max_level); }

void Log(LogLevel level, std::string_view component, std::string_view message) {
  if (static_cast<int>(level) > g_max_level.load()) return;
  std::string line = "<" + std::to_string(static_cast<int>(level)) + ">gpudoctor[";
  line += component;
  line += "]: ";
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;
  line += '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace gpudoctor
