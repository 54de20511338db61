#include "job/step_inbox.h"

#include <charconv>
#include <cmath>

namespace gpudoctor {

bool ValidJobName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

Result<StepMark> ParseStepMarkQuery(std::string_view query) {
  StepMark m;
  bool seen_seconds = false, seen_step = false;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    std::string shown(key.substr(0, 40));
    for (char& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
    }
    if (key == "seconds") {
      if (seen_seconds) return InvalidArgument("parameter 'seconds' given twice");
      seen_seconds = true;
      double v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size() ||
          !std::isfinite(v) || !(v > 0) || v >= 1e7) {
        return InvalidArgument("parameter 'seconds' must be a number of seconds in (0, 1e7)");
      }
      m.seconds = v;
    } else if (key == "step") {
      if (seen_step) return InvalidArgument("parameter 'step' given twice");
      seen_step = true;
      int64_t v = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size() || v < 0 ||
          v > (int64_t{1} << 62)) {
        return InvalidArgument("parameter 'step' must be a non-negative integer");
      }
      m.step = v;
    } else {
      return InvalidArgument("unknown parameter '" + shown + "' (only seconds and step)");
    }
  }
  return m;
}

void JobInbox::SetKnownJobs(const std::vector<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  std::map<std::string, std::vector<StepMark>, std::less<>> next;
  for (const std::string& n : names) {
    auto it = queued_.find(n);
    next[n] = it == queued_.end() ? std::vector<StepMark>() : std::move(it->second);
  }
  queued_ = std::move(next);
}

Status JobInbox::Push(const std::string& job, const StepMark& mark) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = queued_.find(job);
  if (it == queued_.end()) {
    return NotFound("no [[job]] named '" + job.substr(0, 64) + "' in this daemon's config");
  }
  if (it->second.size() >= kMaxQueued) {
    it->second.erase(it->second.begin());
    ++dropped_[job];
  }
  it->second.push_back(mark);
  return Status::Ok();
}

std::vector<StepMark> JobInbox::Take(const std::string& job, uint64_t* dropped) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StepMark> out;
  auto it = queued_.find(job);
  if (it != queued_.end()) out.swap(it->second);
  if (dropped) {
    auto d = dropped_.find(job);
    *dropped = d == dropped_.end() ? 0 : d->second;
    if (d != dropped_.end()) dropped_.erase(d);
  }
  return out;
}

JobInbox& GlobalJobInbox() {
  static JobInbox* inbox = new JobInbox();  // never destroyed: workers may outlive main
  return *inbox;
}

}  // namespace gpudoctor
