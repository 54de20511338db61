#include "fleet/report_index.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "core/input_file.h"

namespace gpudoctor::fleet {
namespace {

constexpr char kMagic[] = "GDFLEETIDX";  // 10 bytes, then a NUL
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderBytes = sizeof(kMagic) + 4 + 8 + 8;
constexpr size_t kMaxIndexBytes = size_t{1} << 30;

// FNV-1a over 64-bit words (then the tail bytes): a corruption check, not a secure hash.
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h ^= w;
    h *= 1099511628211ull;
    h ^= h >> 29;
  }
  for (; i < s.size(); ++i) {
    h ^= static_cast<unsigned char>(s[i]);
    h *= 1099511628211ull;
  }
  return h;
}

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
    if (docs > in.size()) return false;
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
  auto text = ReadInputFile(path, kMaxIndexBytes, deadline);
  if (!text.ok()) {
    *why = text.status().message();
    return index;
  }
  std::string_view in(*text);
  uint32_t version = 0;
  uint64_t length = 0, sum = 0;
  if (in.size() < kHeaderBytes || std::memcmp(in.data(), kMagic, sizeof(kMagic)) != 0) {
    *why = "not a gpudoctor fleet index";
    return index;
  }
  in.remove_prefix(sizeof(kMagic));
  Get(in, version);
  Get(in, length);
  Get(in, sum);
  if (version != kVersion) {
    *why = "index format " + std::to_string(version) + ", expected " + std::to_string(kVersion);
    return index;
  }
  if (length != in.size() || Fnv1a(in) != sum) {
    *why = "bad checksum or length (corrupt or cut short)";
    return index;
  }
  if (!DecodePayload(in, index.files_)) {
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
  std::string header(kMagic, sizeof(kMagic));
  PutRaw(header, kVersion);
  PutRaw<uint64_t>(header, payload.size());
  PutRaw<uint64_t>(header, Fnv1a(payload));
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError(tmp + ": cannot write the fleet index");
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    if (!out.flush()) {
      out.close();
      std::remove(tmp.c_str());
      return IoError(tmp + ": cannot write the fleet index");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return IoError(path + ": cannot replace the fleet index");
  }
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
