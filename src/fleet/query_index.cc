#include "fleet/query_index.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "core/input_file.h"
#include "fleet/index_file.h"
#include "fleet/report_walk.h"

namespace gpudoctor::fleet {
namespace {

constexpr IndexFileKind kQueryIndex{"GDFLEETQRY", 2, "fleet query index"};
constexpr size_t kTableEntryBytes = 8 + 4 + 8;  // key position, key length, list position

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
void PutAt(std::string& out, size_t pos, T v) {
  std::memcpy(out.data() + pos, &v, sizeof(T));
}
void PutStr(std::string& out, const std::string& s) {
  Put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

std::string SlotKey(const std::string& node, const std::string& bus) { return node + '\x1f' + bus; }

// Bounds-checked reads at a position of the payload; any failure sets ok = false.
struct Reader {
  std::string_view p;
  bool ok = true;
  template <typename T>
  T At(uint64_t& pos) {
    T v{};
    if (!ok || pos > p.size() || p.size() - pos < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p.data() + pos, sizeof(T));
    pos += sizeof(T);
    return v;
  }
  std::string Str(uint64_t& pos) {
    uint32_t n = At<uint32_t>(pos);
    if (!ok || p.size() - pos < n) {
      ok = false;
      return {};
    }
    std::string s(p.substr(pos, n));
    pos += n;
    return s;
  }
};

struct Lists {
  std::vector<uint32_t> tenures, faults;
};

class Index {
 public:
  explicit Index(std::string_view payload) : r_{payload} {}

  bool ReadHead(QueryIndexHead& h) {
    uint64_t pos = 0;
    h.fingerprint = r_.At<uint64_t>(pos);
    h.built_now_s = r_.At<int64_t>(pos);
    h.stable_until_s = r_.At<int64_t>(pos);
    h.reports = r_.At<uint64_t>(pos);
    h.problems = r_.At<uint64_t>(pos);
    nt_ = r_.At<uint32_t>(pos);
    nf_ = r_.At<uint32_t>(pos);
    tenure_offsets_ = r_.At<uint64_t>(pos);
    fault_offsets_ = r_.At<uint64_t>(pos);
    serial_table_ = r_.At<uint64_t>(pos);
    slot_table_ = r_.At<uint64_t>(pos);
    h.stamp_hash = r_.At<uint64_t>(pos);
    uint64_t stamps = r_.At<uint64_t>(pos);
    const uint32_t n = r_.At<uint32_t>(stamps);
    // Every path has a 4-byte length: more than that is a corrupt header.
    if (r_.ok && n > r_.p.size() / 4) r_.ok = false;
    h.stamp_paths.clear();
    for (uint32_t i = 0; i < n && r_.ok; ++i) h.stamp_paths.push_back(r_.Str(stamps));
    // Every record has an 8-byte offset: counts beyond that are a corrupt header.
    if (nt_ > r_.p.size() / 8 || nf_ > r_.p.size() / 8) r_.ok = false;
    return r_.ok;
  }
  uint32_t tenures() const { return nt_; }
  uint32_t faults() const { return nf_; }
  bool ok() const { return r_.ok; }

  // The lists of `key` in the table at `table`; false when absent (or on a decode error).
  bool Find(uint64_t table, std::string_view key, Lists& out) {
    uint64_t pos = table;
    const uint32_t n = r_.At<uint32_t>(pos);
    if (!r_.ok || (r_.p.size() - pos) / kTableEntryBytes < n) return r_.ok = false;
    const uint64_t base = pos;
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      uint64_t e = base + mid * kTableEntryBytes;
      uint64_t key_pos = r_.At<uint64_t>(e);
      uint32_t key_len = r_.At<uint32_t>(e);
      if (!r_.ok || key_pos > r_.p.size() || r_.p.size() - key_pos < key_len) {
        return r_.ok = false;
      }
      std::string_view k = r_.p.substr(key_pos, key_len);
      if (k == key) {
        uint64_t list = r_.At<uint64_t>(e);
        ReadList(list, out.tenures, nt_);
        ReadList(list, out.faults, nf_);
        return r_.ok;
      }
      if (k < key) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return false;
  }
  bool FindSerial(std::string_view serial, Lists& out) { return Find(serial_table_, serial, out); }
  bool FindSlot(std::string_view slot_key, Lists& out) { return Find(slot_table_, slot_key, out); }

  Tenure DecodeTenure(uint32_t i) {
    uint64_t at = tenure_offsets_ + uint64_t{i} * 8;
    uint64_t pos = r_.At<uint64_t>(at);
    Tenure t;
    t.serial = r_.Str(pos);
    t.node = r_.Str(pos);
    t.pci_bus_id = r_.Str(pos);
    t.first_s = r_.At<int64_t>(pos);
    t.last_s = r_.At<int64_t>(pos);
    t.reports = r_.At<int32_t>(pos);
    ++decoded_;
    return t;
  }
  Fault DecodeFault(uint32_t i) {
    uint64_t at = fault_offsets_ + uint64_t{i} * 8;
    uint64_t pos = r_.At<uint64_t>(at);
    Fault f;
    f.id = r_.Str(pos);
    f.severity = r_.Str(pos);
    f.serial = r_.Str(pos);
    f.node = r_.Str(pos);
    f.pci_bus_id = r_.Str(pos);
    f.summary = r_.Str(pos);
    f.time_s = r_.At<int64_t>(pos);
    ++decoded_;
    return f;
  }
  size_t decoded() const { return decoded_; }

 private:
  void ReadList(uint64_t& pos, std::vector<uint32_t>& ids, uint32_t limit) {
    uint32_t n = r_.At<uint32_t>(pos);
    if (!r_.ok || n > limit) {
      r_.ok = false;
      return;
    }
    for (uint32_t k = 0; k < n && r_.ok; ++k) {
      uint32_t id = r_.At<uint32_t>(pos);
      if (id >= limit) r_.ok = false;
      ids.push_back(id);
    }
  }

  Reader r_;
  uint32_t nt_ = 0, nf_ = 0;
  uint64_t tenure_offsets_ = 0, fault_offsets_ = 0, serial_table_ = 0, slot_table_ = 0;
  size_t decoded_ = 0;
};

// Writes one table: keys sorted, each with its lists.
void PutTable(std::string& out, const std::map<std::string, Lists>& table) {
  Put<uint32_t>(out, static_cast<uint32_t>(table.size()));
  const size_t entries = out.size();
  out.resize(out.size() + table.size() * kTableEntryBytes);
  size_t e = entries;
  for (const auto& [key, lists] : table) {
    PutAt<uint64_t>(out, e, out.size());
    PutAt<uint32_t>(out, e + 8, static_cast<uint32_t>(key.size()));
    out.append(key);
    PutAt<uint64_t>(out, e + 12, out.size());
    Put<uint32_t>(out, static_cast<uint32_t>(lists.tenures.size()));
    for (uint32_t id : lists.tenures) Put(out, id);
    Put<uint32_t>(out, static_cast<uint32_t>(lists.faults.size()));
    for (uint32_t id : lists.faults) Put(out, id);
    e += kTableEntryBytes;
  }
}

void Insert(std::set<uint32_t>& to, const std::vector<uint32_t>& ids) {
  to.insert(ids.begin(), ids.end());
}

// Where the head keeps the stamp hash and the position of the stamp paths (SaveQueryIndex:
// five 8-byte fields, two counts, four table positions, then these two).
constexpr size_t kStampHashAt = 5 * 8 + 2 * 4 + 4 * 8;
constexpr size_t kStampsAt = kStampHashAt + 8;

// `payload` with its directory stamps (its last section) replaced; nullopt when it does not
// decode that far.
std::optional<std::string> WithStamps(std::string_view payload,
                                      const std::vector<std::string>& paths, uint64_t hash) {
  Reader r{payload};
  uint64_t pos = kStampsAt;
  const uint64_t stamps = r.At<uint64_t>(pos);
  if (!r.ok || stamps > payload.size() || stamps < kStampsAt + 8) return std::nullopt;
  std::string out(payload.substr(0, stamps));
  PutAt<uint64_t>(out, kStampHashAt, hash);
  Put<uint32_t>(out, static_cast<uint32_t>(paths.size()));
  for (const std::string& p : paths) PutStr(out, p);
  return out;
}

}  // namespace

std::string QueryIndexPath(const std::string& index_path) {
  return index_path.empty() ? "" : index_path + ".q";
}

Status SaveQueryIndex(const std::string& path, const QueryIndexHead& head,
                      const std::vector<Tenure>& ledger, const std::vector<Fault>& faults) {
  std::map<std::string, Lists> serials, slots;
  std::string p;
  Put(p, head.fingerprint);
  Put(p, head.built_now_s);
  Put(p, head.stable_until_s);
  Put(p, head.reports);
  Put(p, head.problems);
  Put<uint32_t>(p, static_cast<uint32_t>(ledger.size()));
  Put<uint32_t>(p, static_cast<uint32_t>(faults.size()));
  const size_t offsets_at = p.size();
  // tenure offsets, fault offsets, serial table, slot table, stamp hash, stamp paths
  p.resize(p.size() + 6 * 8);
  std::vector<uint64_t> tenure_pos, fault_pos;
  for (uint32_t i = 0; i < ledger.size(); ++i) {
    const Tenure& t = ledger[i];
    tenure_pos.push_back(p.size());
    PutStr(p, t.serial);
    PutStr(p, t.node);
    PutStr(p, t.pci_bus_id);
    Put(p, t.first_s);
    Put(p, t.last_s);
    Put<int32_t>(p, t.reports);
    serials[t.serial].tenures.push_back(i);
    slots[SlotKey(t.node, t.pci_bus_id)].tenures.push_back(i);
  }
  for (uint32_t i = 0; i < faults.size(); ++i) {
    const Fault& f = faults[i];
    fault_pos.push_back(p.size());
    for (const std::string* s :
         {&f.id, &f.severity, &f.serial, &f.node, &f.pci_bus_id, &f.summary}) {
      PutStr(p, *s);
    }
    Put(p, f.time_s);
    serials[f.serial].faults.push_back(i);
    slots[SlotKey(f.node, f.pci_bus_id)].faults.push_back(i);
  }
  PutAt<uint64_t>(p, offsets_at, p.size());
  for (uint64_t x : tenure_pos) Put(p, x);
  PutAt<uint64_t>(p, offsets_at + 8, p.size());
  for (uint64_t x : fault_pos) Put(p, x);
  PutAt<uint64_t>(p, offsets_at + 16, p.size());
  PutTable(p, serials);
  PutAt<uint64_t>(p, offsets_at + 24, p.size());
  PutTable(p, slots);
  PutAt<uint64_t>(p, kStampHashAt, head.stamp_hash);  // offsets_at + 32 (WithStamps)
  PutAt<uint64_t>(p, kStampsAt, p.size());
  Put<uint32_t>(p, static_cast<uint32_t>(head.stamp_paths.size()));
  for (const std::string& sp : head.stamp_paths) PutStr(p, sp);

  return WriteIndexFile(path, kQueryIndex, p);
}

bool QueryIndexIsFresh(const std::string& path, uint64_t fingerprint, uint64_t stamp_hash,
                       int64_t now_s, TimePoint deadline) {
  if (path.empty() || ::access(path.c_str(), F_OK) != 0) return false;
  std::string why;
  auto text = ReadIndexFile(path, kQueryIndex, deadline, &why);
  if (!text) return false;
  Index index(text->payload());
  QueryIndexHead head;
  return index.ReadHead(head) && head.fingerprint == fingerprint && head.stamp_hash == stamp_hash &&
         now_s >= head.built_now_s && now_s < head.stable_until_s;
}

std::optional<QueryAnswer> QueryFromIndex(const std::string& path, const std::string& dir,
                                          bool card, const std::string& subject, int64_t now_s,
                                          TimePoint deadline, ReadStats* stats,
                                          Freshness freshness) {
  ReadStats local;
  ReadStats& st = stats ? *stats : local;
  st.from_query_index = false;
  st.trusted_dir_mtime = false;
  st.records_decoded = st.records_total = 0;
  auto miss = [&](std::string why) -> std::optional<QueryAnswer> {
    st.index_note = std::move(why);
    return std::nullopt;
  };
  if (path.empty() || ::access(path.c_str(), F_OK) != 0) return miss("no query index");
  auto answer = [&](const IndexFileText& text) -> std::optional<QueryAnswer> {
    std::optional<QueryAnswer> a = AnswerFromQueryPayload(text.payload(), card, subject, &st);
    if (!text.intact()) {
      st.from_query_index = false;
      return miss("query index: cut short while read (truncated by another program)");
    }
    if (!a) return miss("query index: a record does not decode");
    st.index_note.clear();
    return a;
  };
  std::string why;
  std::optional<IndexFileText> text;
  QueryIndexHead head;
  if (freshness == Freshness::kDirectoryMtime) {
    // The index first: its stamp paths are what is stat-ed.
    text = ReadIndexFile(path, kQueryIndex, deadline, &why);
    if (!text) return miss(why);
    if (!Index(text->payload()).ReadHead(head)) {
      return miss("query index: the header does not decode");
    }
    if (now_s < head.built_now_s || now_s >= head.stable_until_s) {
      return miss("query index: built for another clock time");
    }
    // On a worker, within the deadline (a hung filesystem does not hang the query).
    auto stamps = RunWithDeadline([dir, paths = head.stamp_paths] { return StampHash(dir, paths); },
                                  deadline);
    if (!stamps) return miss(InputTimeoutError(dir).message());
    if (stamps->ok() && !head.stamp_paths.empty() && **stamps == head.stamp_hash) {
      auto a = answer(*text);
      if (a) st.trusted_dir_mtime = true;
      return a;
    }
    // A directory moved: every file, as by default.
  }
  // By default the index is mapped and checked on a worker while the reports are stat-ed here.
  PendingIndexFile pending = text ? nullptr : StartReadIndexFile(path, kQueryIndex);
  const auto stall = std::max(
      std::chrono::milliseconds(1),
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()));
  auto walk = WalkReports(dir, /*with_paths=*/false, stall);
  if (!text) {
    text = FinishReadIndexFile(std::move(pending), path, kQueryIndex, deadline, &why);
    if (!text) return miss(why);
    if (!Index(text->payload()).ReadHead(head)) {
      return miss("query index: the header does not decode");
    }
  }
  if (now_s < head.built_now_s || now_s >= head.stable_until_s) {
    return miss("query index: built for another clock time");
  }
  if (!walk.ok()) return miss(walk.status().message());
  if (walk->fingerprint != head.fingerprint) return miss("reports changed");
  auto a = answer(*text);
  if (a && freshness == Freshness::kDirectoryMtime && walk->stamp_hash != head.stamp_hash) {
    // A directory moved but no report changed: the stamps of this walk (taken before its
    // stats) saved, so that the next trusting query is quick again. Best effort.
    if (auto payload = WithStamps(text->payload(), walk->stamp_paths, walk->stamp_hash)) {
      (void)WriteIndexFile(path, kQueryIndex, *payload);
    }
  }
  return a;
}

std::optional<QueryAnswer> AnswerFromQueryPayload(std::string_view payload, bool card,
                                                  const std::string& subject, ReadStats* stats) {
  Index index(payload);
  QueryAnswer answer;
  if (!index.ReadHead(answer.head)) return std::nullopt;

  // The records the judgement looks at (ledger.h), in ledger order.
  std::set<uint32_t> tenure_ids, fault_ids;
  Lists own;
  std::string node, bus;
  if (card) {
    if (index.FindSerial(subject, own)) {
      Insert(tenure_ids, own.tenures);
      Insert(fault_ids, own.faults);
      std::set<std::string> slots;
      for (uint32_t id : own.faults) {
        Fault f = index.DecodeFault(id);
        slots.insert(SlotKey(f.node, f.pci_bus_id));
      }
      for (const auto& key : slots) {
        Lists l;
        if (index.FindSlot(key, l)) Insert(fault_ids, l.faults);
      }
    }
  } else {
    node = subject.substr(0, subject.find(':'));
    bus = CanonicalBusId(
        subject.find(':') == std::string::npos ? "" : subject.substr(subject.find(':') + 1));
    if (index.FindSlot(SlotKey(node, bus), own)) {
      Insert(tenure_ids, own.tenures);
      Insert(fault_ids, own.faults);
      std::set<std::string> serials;
      for (uint32_t id : own.faults) {
        Fault f = index.DecodeFault(id);
        if (!f.serial.empty()) serials.insert(f.serial);
      }
      for (const auto& s : serials) {
        Lists l;
        if (index.FindSerial(s, l)) Insert(fault_ids, l.faults);
      }
    }
  }
  if (!index.ok()) return std::nullopt;
  auto judge = [&](const std::vector<Tenure>& ledger, const std::vector<Fault>& faults) {
    return card ? JudgeCard(subject, ledger, faults) : JudgeSlot(subject, ledger, faults);
  };
  std::vector<Tenure> ledger;
  std::vector<Fault> faults;
  for (uint32_t id : tenure_ids) ledger.push_back(index.DecodeTenure(id));
  for (uint32_t id : fault_ids) faults.push_back(index.DecodeFault(id));
  answer.verdict = judge(ledger, faults);
  if (answer.verdict.verdict == "unknown") {
    // Not in the data: the nearest names come from every record.
    ledger.clear();
    faults.clear();
    for (uint32_t i = 0; i < index.tenures() && index.ok(); ++i) {
      ledger.push_back(index.DecodeTenure(i));
    }
    for (uint32_t i = 0; i < index.faults() && index.ok(); ++i) {
      faults.push_back(index.DecodeFault(i));
    }
    if (!index.ok()) return std::nullopt;
    answer.verdict = judge(ledger, faults);
  }
  if (!index.ok()) return std::nullopt;
  if (stats != nullptr) {
    stats->from_query_index = true;
    stats->records_decoded = index.decoded();
    stats->records_total = size_t{index.tenures()} + index.faults();
  }
  return answer;
}

}  // namespace gpudoctor::fleet
