// Fuzzes the command-line parser: the input is split into arguments at NUL bytes; any argument
// vector must parse or be refused with a message, and applying the parsed overrides must never
// produce an invalid deadline or window.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_options.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"gpudoctor"};
  std::string cur;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  args.push_back(cur);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  auto r = gpudoctor::ParseCommandLine(static_cast<int>(argv.size()), argv.data());
  if (!r.ok()) {
    if (r.status().message().empty()) __builtin_trap();
    return 0;
  }
  gpudoctor::Settings s;
  for (const auto& apply : r->overrides) apply(s);
  if (!(s.deadline_s > 0) || s.sample_ms < 0) __builtin_trap();
  return 0;
}
