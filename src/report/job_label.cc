#include "report/job_label.h"

#include <cstdlib>
#include <string_view>

namespace gpudoctor {
namespace {

bool Printable(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (unsigned char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace

std::string JobLabelFromEnvironment() {
  if (const char* j = std::getenv("GPUDOCTOR_JOB"); j != nullptr && Printable(j)) return j;
  if (const char* s = std::getenv("SLURM_JOB_ID"); s != nullptr && Printable(s)) {
    return "slurm:" + std::string(s);
  }
  return "";
}

}  // namespace gpudoctor
