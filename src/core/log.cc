#include "core/log.h"

#include <unistd.h>

#include <string>

namespace gpudoctor {
void Log(LogLevel level, std::string_view component, std::string_view message) {
  std::string line = "<" + std::to_string(static_cast<int>(level)) + ">gpudoctor[";
  line += component;
  line += "]: ";
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;
  line += '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace gpudoctor
