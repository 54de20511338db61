#include "watch/finding_lifecycle.h"

#include <algorithm>
#include <map>

#include "facts/gpu_facts.h"
#include "rules/catalogue.h"

namespace gpudoctor {

const char* FindingStateName(FindingState s) {
  switch (s) {
    case FindingState::kPending:
      return "pending";
    case FindingState::kOpen:
      return "open";
    case FindingState::kResolved:
      return "resolved";
  }
  return "pending";
}

const char* TransitionKindName(TransitionKind k) {
  switch (k) {
    case TransitionKind::kOpened:
      return "opened";
    case TransitionKind::kResolved:
      return "resolved";
    case TransitionKind::kEscalated:
      return "escalated";
  }
  return "opened";
}

std::string FindingKey(const Finding& f) {
  std::string gpu;
  if (f.gpu) {
    if (std::string serial = SerialOrEmpty(f.gpu->serial); !serial.empty()) {
      gpu = "serial=" + serial;
    } else if (!f.gpu->pci_bus_id.empty()) {
      gpu = "bus=" + f.gpu->pci_bus_id;
    } else if (f.gpu->index) {
      gpu = "index=" + std::to_string(*f.gpu->index);
    }
  }
  return f.id + "|" + gpu + "|" + f.subject;
}

namespace {

constexpr int64_t kKeepResolvedMs = 3600 * 1000;
// A finding cleared by a reboot is remembered longer so that its return is recognised.
constexpr int64_t kKeepClearedByRebootMs = 7 * 24 * 3600 * 1000LL;
constexpr int kEscalateAfterReboots = 2;

constexpr const char* kEscalationSteps[] = {
    "Escalated: this finding came back on the same card after 2 or more reboots; a reboot does "
    "not fix it. Drain the node and inspect the hardware.",
    "Reseat the GPU (and its power cables / riser) and check the slot for damage.",
    "Swap test: exchange the card with a healthy one in another slot; if the finding follows the "
    "serial it is the card, if it stays with the slot it is the board or riser "
    "(`gpudoctor history --findings` lists serial and bus id per episode).",
    "If it follows the card: open an RMA with the vendor, attaching `nvidia-bug-report.sh` "
    "output, the serial and this finding's history.",
};

struct Timing {
  int64_t for_ms;
  int64_t resolve_ms;
  bool reboot_fixable;
  bool latched = false;
  bool cleared_by_driver_reload = false;
};

Timing TimingFor(const std::string& id, const Thresholds& th) {
  const CatalogueEntry* e = FindCatalogueEntry(id);
  if (e == nullptr) return {0, 300 * 1000, false};  // unknown ids: open at once, default hysteresis
  WatchDefaults d = WatchDefaultsFor(*e);
  return {static_cast<int64_t>(th.Get(id, kForSKey) * 1000),
          static_cast<int64_t>(th.Get(id, kResolveAfterSKey) * 1000), d.reboot_fixable, d.latched,
          d.cleared_by_driver_reload};
}

void ApplyEscalationSteps(TrackedFinding& t) {
  if (!t.escalated) return;
  if (!t.last.next_steps.empty() && t.last.next_steps.front() == kEscalationSteps[0]) return;
  std::vector<std::string> steps(std::begin(kEscalationSteps), std::end(kEscalationSteps));
  steps.insert(steps.end(), t.last.next_steps.begin(), t.last.next_steps.end());
  t.last.next_steps = std::move(steps);
}

}  // namespace

LifecycleOutput StepLifecycle(const LifecycleInput& in, const Thresholds& th) {
  LifecycleOutput out;
  const bool rebooted = !in.previous_boot_id.empty() && in.boot_id != in.previous_boot_id;
  const int64_t now = in.now_ms;
  const int64_t mono = in.mono_ms;
  // Time since a stamp: on the monotonic clock when both readings have it.
  auto since = [&](int64_t wall_ms, int64_t mono_ms) {
    return mono > 0 && mono_ms > 0 ? mono - mono_ms : now - wall_ms;
  };
  // Loaded from the store (no monotonic stamps yet): seeded from the wall-clock age, once.
  auto seed = [&](TrackedFinding& t) {
    if (mono <= 0) return;
    if (t.first_seen_mono_ms <= 0)
      t.first_seen_mono_ms = mono - std::max<int64_t>(0, now - t.first_seen_ms);
    if (t.last_seen_mono_ms <= 0)
      t.last_seen_mono_ms = mono - std::max<int64_t>(0, now - t.last_seen_ms);
  };

  // This tick's findings by key; of duplicates the worst severity wins.
  std::map<std::string, const Finding*> fired;
  for (const auto& f : in.fired) {
    auto [it, inserted] = fired.emplace(FindingKey(f), &f);
    if (!inserted && f.severity > it->second->severity) it->second = &f;
  }

  auto emit = [&](TransitionKind kind, const TrackedFinding& t) {
    out.transitions.push_back({kind, t});
  };
  auto maybe_escalate = [&](TrackedFinding& t, bool reboot_fixable) {
    if (t.escalated || !reboot_fixable || t.state != FindingState::kOpen) return;
    if (t.episodes_after_reboot + t.reboots_during < kEscalateAfterReboots) return;
    t.escalated = true;
    ApplyEscalationSteps(t);
    emit(TransitionKind::kEscalated, t);
  };

  std::map<std::string, bool> handled;
  for (const TrackedFinding& prev : in.tracked) {
    TrackedFinding t = prev;
    seed(t);
    Timing timing = TimingFor(t.last.id, th);
    auto f = fired.find(t.key);
    bool fires = f != fired.end();

    if (t.state == FindingState::kResolved) {
      if (fires && !handled[t.key]) {
        // A new episode of a known key: pending again, remembering reboot-cleared returns.
        handled[t.key] = true;
        TrackedFinding n;
        n.key = t.key;
        n.last = *f->second;
        n.first_seen_ms = now;
        n.last_seen_ms = now;
        n.first_seen_mono_ms = n.last_seen_mono_ms = mono;
        n.silenced_until_ms = t.silenced_until_ms;
        n.episodes_after_reboot =
            t.episodes_after_reboot + (t.resolution == "cleared_by_reboot" ? 1 : 0);
        if (timing.for_ms <= 0) {
          n.state = FindingState::kOpen;
          n.opened_ms = now;
          emit(TransitionKind::kOpened, n);
          maybe_escalate(n, timing.reboot_fixable);
        }
        out.tracked.push_back(std::move(n));
        continue;
      }
      int64_t keep = t.resolution == "cleared_by_reboot" ? kKeepClearedByRebootMs : kKeepResolvedMs;
      if (now - t.resolved_ms <= keep && !fires) out.tracked.push_back(std::move(t));
      continue;
    }

    handled[t.key] = true;
    if (rebooted) ++t.reboots_during;
    if (fires) {
      t.last = *f->second;
      t.last_seen_ms = now;
      t.last_seen_mono_ms = mono;
      ApplyEscalationSteps(t);
      if (t.state == FindingState::kPending &&
          since(t.first_seen_ms, t.first_seen_mono_ms) >= timing.for_ms) {
        t.state = FindingState::kOpen;
        t.opened_ms = now;
        emit(TransitionKind::kOpened, t);
      }
      maybe_escalate(t, timing.reboot_fixable);
      out.tracked.push_back(std::move(t));
      continue;
    }
    // Not firing this tick.
    if (t.state == FindingState::kPending) continue;  // never opened: forgotten silently
    if (rebooted && timing.reboot_fixable) {
      t.state = FindingState::kResolved;
      t.resolved_ms = now;
      t.resolution = "cleared_by_reboot";
      emit(TransitionKind::kResolved, t);
    } else if (timing.cleared_by_driver_reload && in.driver_loaded_ms > t.last_seen_ms) {
      // The module was loaded again after the last sighting: the GPUs were reset.
      t.state = FindingState::kResolved;
      t.resolved_ms = now;
      t.resolution = "cleared_by_driver_reload";
      emit(TransitionKind::kResolved, t);
    } else if (timing.latched && NeedsNodeOutOfService(t.last.action) && !t.acked) {
      // A quiet log is not a repaired GPU: held open until a reboot, a driver reload or an
      // acknowledgement.
    } else if (since(t.last_seen_ms, t.last_seen_mono_ms) >= timing.resolve_ms) {
      t.state = FindingState::kResolved;
      t.resolved_ms = now;
      t.resolution = "cleared";
      emit(TransitionKind::kResolved, t);
    }
    out.tracked.push_back(std::move(t));
  }

  // Keys never seen before (or only seen as resolved, handled above).
  for (const auto& [key, f] : fired) {
    if (handled.count(key)) continue;
    Timing timing = TimingFor(f->id, th);
    TrackedFinding n;
    n.key = key;
    n.last = *f;
    n.first_seen_ms = now;
    n.last_seen_ms = now;
    n.first_seen_mono_ms = n.last_seen_mono_ms = mono;
    if (timing.for_ms <= 0) {
      n.state = FindingState::kOpen;
      n.opened_ms = now;
      emit(TransitionKind::kOpened, n);
    }
    out.tracked.push_back(std::move(n));
  }
  return out;
}

}  // namespace gpudoctor
