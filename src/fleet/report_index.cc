#include "fleet/report_index.h"

#include <unistd.h>

#include <cstring>

#include "fleet/index_file.h"

namespace gpudoctor::fleet {
namespace {

constexpr IndexFileKind kReportIndex{"GDFLEETIDX", 1, "fleet index"};

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

bool DecodePayload(std::string_view in, std::map<std::string, IndexedFile>& files) {
  uint32_t n = 0;
  if (!Get(in, n)) return false;
  for (uint32_t i = 0; i < n; ++i) {
    std::string path;
    IndexedFile f;
    uint32_t docs = 0;
    if (!GetStr(in, path) || !Get(in, f.size) || !Get(in, f.mtime_ns) || !Get(in, docs)) {
      return false;
    }
    if (docs > in.size() / 5) return false;  // a document takes 5 bytes at least
    f.docs.resize(docs);
    for (auto& d : f.docs) {
      uint8_t ok = 0;
      if (!GetStr(in, d.source) || !Get(in, ok)) return false;
      d.ok = ok != 0;
      if (d.ok ? !DecodeParsedReport(in, d.report) : !GetStr(in, d.error)) return false;
    }
    files.emplace(std::move(path), std::move(f));
  }
  return in.empty();
}

}  // namespace

ReportIndex ReportIndex::Load(const std::string& path, TimePoint deadline, std::string* why) {
  ReportIndex index;
  why->clear();
  if (::access(path.c_str(), F_OK) != 0) return index;
  auto text = ReadIndexFile(path, kReportIndex, deadline, why);
  if (!text) return index;
  return FromPayload(text->payload(), why);
}

ReportIndex ReportIndex::FromPayload(std::string_view payload, std::string* why) {
  ReportIndex index;
  if (!DecodePayload(payload, index.files_)) {
    index.files_.clear();
    *why = "a record does not decode";
  }
  return index;
}

const IndexedFile* ReportIndex::Find(const std::string& file, uint64_t size,
                                     int64_t mtime_ns) const {
  auto it = files_.find(file);
  if (it == files_.end() || it->second.size != size || it->second.mtime_ns != mtime_ns) {
    return nullptr;
  }
  return &it->second;
}

void ReportIndex::Put(const std::string& file, IndexedFile entry) {
  files_[file] = std::move(entry);
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
    PutStr(payload, file);
    PutRaw(payload, f.size);
    PutRaw(payload, f.mtime_ns);
    PutRaw<uint32_t>(payload, static_cast<uint32_t>(f.docs.size()));
    for (const auto& d : f.docs) {
      PutStr(payload, d.source);
      PutRaw<uint8_t>(payload, d.ok ? 1 : 0);
      if (d.ok) {
        EncodeParsedReport(d.report, payload);
      } else {
        PutStr(payload, d.error);
      }
    }
  }
  std::memcpy(payload.data(), &n, 4);
  return WriteIndexFile(path, kReportIndex, payload);
}

}  // namespace gpudoctor::fleet
