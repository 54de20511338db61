#include "net/infiniband_sysfs.h"

#include <cctype>

#include "core/strings.h"

namespace gpudoctor {

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

Result<std::vector<IbPortSample>> ReadIbPorts(const RootFs& fs) { return IbReader(false).Read(fs); }

void IbReader::List(const std::string& base, const std::vector<std::string>& devices) {
  ports_.clear();
  devices_ = devices;
  listed_ = true;
  for (const auto& dev : devices) {
    std::string ports_dir = base + "/" + dev + "/ports";
    auto ports = RootFs::ListDir(ports_dir);
    if (!ports.ok()) continue;
    for (const auto& p : *ports) {
      auto num = ParseInt64(p);
      if (!num || *num < 0 || *num > 1024) continue;
      std::string dir = ports_dir + "/" + p;
      Port port;
      port.device = Sanitize(dev, 64);
      port.port = static_cast<int>(*num);
      auto file = [&](const char* name) -> std::optional<KeptFile> {
        std::string path = dir + "/" + name;
        if (!RootFs::Exists(path)) return std::nullopt;
        return KeptFile(std::move(path), keep_);
      };
      port.state = file("state");
      port.phys_state = file("phys_state");
      port.rate = file("rate");
      port.link_layer = file("link_layer");
      if (auto names = RootFs::ListDir(dir + "/counters"); names.ok()) {
        for (const auto& c : *names) {
          port.counters.emplace_back(Sanitize(c, 64), KeptFile(dir + "/counters/" + c, keep_));
        }
      }
      ports_.push_back(std::move(port));
    }
  }
}

bool IbReader::ReadPort(Port& p, IbPortSample& s) {
  bool gone = false;
  // The trimmed content, or nullopt when unreadable; a path that is gone marks the listing stale.
  auto read = [&](std::optional<KeptFile>& f) -> std::optional<std::string_view> {
    if (!f) return std::nullopt;
    Status st = f->Read(&text_, 4096);
    if (!st.ok()) {
      if (st.code() == StatusCode::kNotFound) gone = true;
      return std::nullopt;
    }
    return Trim(text_);
  };
  s.device = p.device;
  s.port = p.port;
  s.state = ParseIbStateName(read(p.state).value_or(""));
  s.phys_state = ParseIbStateName(read(p.phys_state).value_or(""));
  if (auto r = read(p.rate)) s.rate_gbps = ParseIbRateGbps(*r);
  if (auto ll = read(p.link_layer)) s.link_layer = Sanitize(*ll, 32);
  for (auto& [name, file] : p.counters) {
    std::optional<std::string_view> t;
    if (Status st = file.Read(&text_, 4096); st.ok()) {
      t = Trim(text_);
    } else if (st.code() == StatusCode::kNotFound) {
      gone = true;
    }
    if (t) {
      if (auto v = ParseUint64(*t)) s.counters[name] = *v;
    }
  }
  return !gone;
}

Result<std::vector<IbPortSample>> IbReader::Read(const RootFs& fs) {
  std::string base = fs.SysPath("class/infiniband");
  auto devices = RootFs::ListDir(base);
  if (!devices.ok()) {
    ports_.clear();
    devices_.clear();
    listed_ = false;
    return devices.status();
  }
  bool relisted = !listed_ || *devices != devices_;
  if (relisted) List(base, *devices);
  for (;;) {
    std::vector<IbPortSample> out;
    out.reserve(ports_.size());
    bool stale = false;
    for (Port& p : ports_) {
      IbPortSample s;
      stale = !ReadPort(p, s) || stale;
      out.push_back(std::move(s));
    }
    if (!stale || relisted) return out;
    // A kept path is gone (a port or counter removed under an unchanged device list): list again
    // and read afresh, once.
    List(base, *devices);
    relisted = true;
  }
}

size_t IbReader::open_files() const {
  size_t n = 0;
  for (const Port& p : ports_) {
    for (const auto* f : {&p.state, &p.phys_state, &p.rate, &p.link_layer}) {
      n += *f && (*f)->is_open();
    }
    for (const auto& c : p.counters) n += c.second.is_open();
  }
  return n;
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
