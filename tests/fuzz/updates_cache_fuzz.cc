// Fuzzes the security-updates cache file's parser (probes/updates_cache.h): any input is either
// refused or gives facts within the bounds a scan's answer keeps, and what parses serialises back
// to a file that parses to the same facts. The input is "<identity>\n\n<cache text>" (an input
// without a blank line is a cache text for a fixed identity).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "probes/updates_cache.h"
#include "probes/updates_scan.h"

namespace {

std::string Flat(const gpudoctor::UpdateFacts& f) {
  std::string out = f.manager + "|" + f.method + "|" + (f.checked ? "1" : "0") + "|" + f.note +
                    "|" + std::to_string(f.security_lists) + "|" + std::to_string(f.pending_count) +
                    "|" + (f.lists_date_unix_s ? std::to_string(*f.lists_date_unix_s) : "-");
  for (const auto& p : f.pending) {
    out += "\n" + p.name + "|" + p.installed_version + "|" + p.candidate_version + "|" + p.suite +
           "|" + (p.list_date_unix_s ? std::to_string(*p.list_date_unix_s) : "-");
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string_view identity = "var/lib/dpkg/status 1 2 3 4 5\n", text = in;
  if (size_t cut = in.find("\n\n"); cut != std::string_view::npos) {
    identity = in.substr(0, cut + 1);
    text = in.substr(cut + 2);
  }
  auto f = ParseUpdatesCache(text, identity);
  if (!f) return 0;
  if (f->pending.size() > kMaxPendingListed || f->pending_count < 0 ||
      static_cast<size_t>(f->pending_count) < f->pending.size() || f->security_lists < 0) {
    __builtin_trap();
  }
  auto again = ParseUpdatesCache(SerializeUpdatesCache(identity, *f), identity);
  if (!again || Flat(*again) != Flat(*f)) __builtin_trap();
  return 0;
}
