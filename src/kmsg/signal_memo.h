// SignalMemo: what the kernel-log scanner's signal parsers made of a message, kept for messages
// that come again byte for byte (a NIC whose link flaps, a bonding driver repeating itself). The
// scanner asks it before parsing and stores only outcomes that are a pure function of the
// message (a NIC link event: no parser state involved), so a hit gives exactly what parsing
// would; the aggregator hint makes counting it a slot lookup instead of a key build and hash.
// Bounded: kSlots entries, direct-mapped by a hash of the message. Not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "facts/kernel_facts.h"
#include "kmsg/event_aggregator.h"

namespace gpudoctor {

class SignalMemo {
 public:
  static constexpr size_t kSlots = 64;
  static constexpr size_t kMaxMessageBytes = 256;

  struct Entry {
    std::string message;
    KernelEvent event;   // the parser's event for `message` (count 1)
    EventSlotHint hint;  // where the aggregator keeps event's entry
  };

  // The entry for exactly this message, or nullptr. An empty message is never learned, and a
  // slot nothing was learned into holds an empty message with a default event (an Xid): asking
  // for "" must not find it (a kernel line with nothing after its stamp was counted as an Xid).
  Entry* Find(std::string_view message) {
    if (!slots_ || message.empty() || message.size() > kMaxMessageBytes) return nullptr;
    Entry& e = (*slots_)[Slot(message)];
    return e.message.size() == message.size() && e.message == message ? &e : nullptr;
  }
  // Remembers `event` as the outcome of `message` (replacing what shared its slot).
  void Learn(std::string_view message, const KernelEvent& event) {
    if (message.empty() || message.size() > kMaxMessageBytes) return;
    if (!slots_) slots_ = std::make_unique<std::array<Entry, kSlots>>();
    Entry& e = (*slots_)[Slot(message)];
    e.message.assign(message);
    e.event = event;
    e.hint = {};
  }

 private:
  static size_t Slot(std::string_view message) {
    return std::hash<std::string_view>{}(message) % kSlots;
  }
  std::unique_ptr<std::array<Entry, kSlots>> slots_;
};

}  // namespace gpudoctor
