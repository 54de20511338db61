#include "fleet/report_index.h"

#include <unistd.h>

#include <cstring>

#include "fleet/index_file.h"

namespace gpudoctor::fleet {
namespace {

constexpr IndexFileKind kReportIndex{"GDFLEETIDX", 2, "fleet index"};

template <typename T>
void PutRaw(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
void PutStr(std::string& out, const std::string& s) {
  PutRaw<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}
template <typename T>
bool Get(std::string_view& in, T& v) {
  if (in.size() < sizeof(T)) return false;
  std::memcpy(&v, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return true;
}
bool GetStr(std::string_view& in, std::string& s) {
  uint32_t n = 0;
  if (!Get(in, n) || in.size() < n) return false;
  s.assign(in.substr(0, n));
  in.remove_prefix(n);
  return true;
}

// The table of files; blobs point into `in`.
bool DecodePayload(std::string_view in, std::map<std::string, IndexedFile>& files) {
  uint32_t n = 0;
  if (!Get(in, n) || n > in.size() / 24) return false;  // an entry takes 24 bytes at least
  for (uint32_t i = 0; i < n; ++i) {
    std::string path;
    IndexedFile f;
    uint32_t len = 0;
    if (!GetStr(in, path) || !Get(in, f.size) || !Get(in, f.mtime_ns) || !Get(in, len) ||
        in.size() < len) {
      return false;
    }
    f.blob = in.substr(0, len);
    in.remove_prefix(len);
    files.insert_or_assign(std::move(path), std::move(f));
  }
  return in.empty();
}

bool DecodeDocs(std::string_view in, std::vector<IndexedDoc>& docs) {
  uint32_t n = 0;
  if (!Get(in, n) || n > in.size() / 5) return false;  // a document takes 5 bytes at least
  docs.clear();
  docs.resize(n);
  for (auto& d : docs) {
    uint8_t ok = 0;
    if (!GetStr(in, d.source) || !Get(in, ok)) return false;
    d.ok = ok != 0;
    if (d.ok ? !DecodeParsedReport(in, d.report) : !GetStr(in, d.error)) return false;
  }
  return in.empty();
}

}  // namespace

ReportIndex ReportIndex::Load(const std::string& path, TimePoint deadline, std::string* why) {
  why->clear();
  if (::access(path.c_str(), F_OK) != 0) return ReportIndex();
  auto text = ReadIndexFile(path, kReportIndex, deadline, why);
  if (!text) return ReportIndex();
  auto mapped = std::make_shared<IndexFileText>(std::move(*text));
  ReportIndex index = FromPayload(mapped->payload(), why);
  index.text_ = std::move(mapped);
  return index;
}

ReportIndex ReportIndex::FromPayload(std::string_view payload, std::string* why) {
  ReportIndex index;
  if (!DecodePayload(payload, index.files_)) {
    index.files_.clear();
    *why = "a record does not decode";
  }
  return index;
}

bool ReportIndex::Has(const std::string& file, uint64_t size, int64_t mtime_ns) const {
  auto it = files_.find(file);
  return it != files_.end() && it->second.size == size && it->second.mtime_ns == mtime_ns;
}

bool ReportIndex::Decode(const std::string& file, uint64_t size, int64_t mtime_ns,
                         std::vector<IndexedDoc>& docs) {
  auto it = files_.find(file);
  if (it == files_.end() || it->second.size != size || it->second.mtime_ns != mtime_ns) {
    return false;
  }
  // A mapped index cut short under us reads as zeros: the file is parsed instead.
  if (DecodeDocs(it->second.blob, docs) && (text_ == nullptr || text_->intact())) return true;
  files_.erase(it);
  docs.clear();
  return false;
}

void ReportIndex::Put(const std::string& file, uint64_t size, int64_t mtime_ns,
                      const std::vector<IndexedDoc>& docs) {
  IndexedFile f;
  f.size = size;
  f.mtime_ns = mtime_ns;
  PutRaw<uint32_t>(f.owned, static_cast<uint32_t>(docs.size()));
  for (const auto& d : docs) {
    PutStr(f.owned, d.source);
    PutRaw<uint8_t>(f.owned, d.ok ? 1 : 0);
    if (d.ok) {
      EncodeParsedReport(d.report, f.owned);
    } else {
      PutStr(f.owned, d.error);
    }
  }
  auto& slot = files_[file];
  slot = std::move(f);
  slot.blob = slot.owned;  // after the move: the string's buffer is where it now lives
}

Status ReportIndex::Save(const std::string& path, const std::vector<std::string>& keep) const {
  std::string payload;
  uint32_t n = 0;
  PutRaw<uint32_t>(payload, 0);  // count, patched below
  for (const auto& file : keep) {
    auto it = files_.find(file);
    if (it == files_.end()) continue;
    ++n;
    const IndexedFile& f = it->second;
    // Blobs of a mapped index cut short under us are zeros now: not saved (parsed next time).
    if (f.owned.empty() && text_ != nullptr && !text_->intact()) {
      --n;
      continue;
    }
    PutStr(payload, file);
    PutRaw(payload, f.size);
    PutRaw(payload, f.mtime_ns);
    PutRaw<uint32_t>(payload, static_cast<uint32_t>(f.blob.size()));
    payload.append(f.blob);
  }
  std::memcpy(payload.data(), &n, 4);
  return WriteIndexFile(path, kReportIndex, payload);
}

}  // namespace gpudoctor::fleet
