#include "net/infiniband_sysfs.h"

#include <cctype>

#include "core/strings.h"

namespace gpudoctor {
namespace {

std::optional<std::string> ReadTrimmed(const std::string& path) {
  auto text = RootFs::ReadFile(path, 4096);
  if (!text.ok()) return std::nullopt;
  return std::string(Trim(*text));
}

}  // namespace

std::string ParseIbStateName(std::string_view text) {
  text = Trim(text);
  size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    if (!ParseInt64(text.substr(0, colon))) return "";
    text = Trim(text.substr(colon + 1));
  }
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != ' ') return "";
  }
  return std::string(text.substr(0, 32));
}

std::optional<double> ParseIbRateGbps(std::string_view text) {
  text = Trim(text);
  size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  if (!StartsWith(text.substr(space + 1), "Gb/sec")) return std::nullopt;
  auto v = ParseDouble(text.substr(0, space));
  if (!v || *v <= 0 || *v > 100000) return std::nullopt;
  return v;
}

Result<std::vector<IbPortSample>> ReadIbPorts(const RootFs& fs) {
  std::string base = fs.SysPath("class/infiniband");
  auto devices = RootFs::ListDir(base);
  if (!devices.ok()) return devices.status();
  std::vector<IbPortSample> out;
  for (const auto& dev : *devices) {
    std::string ports_dir = base + "/" + dev + "/ports";
    auto ports = RootFs::ListDir(ports_dir);
    if (!ports.ok()) continue;
    for (const auto& p : *ports) {
      auto num = ParseInt64(p);
      if (!num || *num < 0 || *num > 1024) continue;
      std::string dir = ports_dir + "/" + p;
      IbPortSample s;
      s.device = Sanitize(dev, 64);
      s.port = static_cast<int>(*num);
      s.state = ParseIbStateName(ReadTrimmed(dir + "/state").value_or(""));
      s.phys_state = ParseIbStateName(ReadTrimmed(dir + "/phys_state").value_or(""));
      if (auto r = ReadTrimmed(dir + "/rate")) s.rate_gbps = ParseIbRateGbps(*r);
      if (auto ll = ReadTrimmed(dir + "/link_layer")) s.link_layer = Sanitize(*ll, 32);
      if (auto names = RootFs::ListDir(dir + "/counters"); names.ok()) {
        for (const auto& c : *names) {
          if (auto t = ReadTrimmed(dir + "/counters/" + c)) {
            if (auto v = ParseUint64(*t)) s.counters[Sanitize(c, 64)] = *v;
          }
        }
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<IbPortFacts> IbPortFactsBetween(const std::vector<IbPortSample>& before,
                                            const std::vector<IbPortSample>& after,
                                            double window_s) {
  std::vector<IbPortFacts> out;
  for (const auto& b : after) {
    IbPortFacts f;
    f.device = b.device;
    f.port = b.port;
    f.state = b.state;
    f.phys_state = b.phys_state;
    f.rate_gbps = b.rate_gbps;
    f.link_layer = b.link_layer;
    f.counters = b.counters;
    for (const auto& a : before) {
      if (a.device != b.device || a.port != b.port) continue;
      if (window_s > 0) f.window_s = window_s;
      for (const auto& [name, v] : b.counters) {
        auto it = a.counters.find(name);
        if (it != a.counters.end() && v >= it->second) f.counters_delta[name] = v - it->second;
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace gpudoctor
