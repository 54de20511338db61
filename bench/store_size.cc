// History store size and write cost (issue 9): writes HOURS of synthetic 1 s ticks of an 8-GPU
// node (tests/store/synthetic_tick.h, ~480 series) with fake time as fast as it can, then reports
// the write cost per tick, the file size, and the steady-state size: raw samples for 24 h plus
// 1-minute rollups for 30 days (rollups measured per hour of data and projected to 720 h).
// Per hour of data: CPU per tick and MiB written (WAL and checkpoints) in that hour.
// Usage: store_size DB [HOURS=25] [PACK_BLOCK_S=600] [END_UNIX_S] (StoreOptions::pack_block_s: 60
// packs every minute, as before the tenth round; END_UNIX_S: the last tick's time, else 2023)
#include <sqlite3.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "store/history_store.h"
#include "store/synthetic_tick.h"

namespace {

double Query(const std::string& db, const char* sql) {
  sqlite3* h = nullptr;
  double v = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql, -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      v = sqlite3_column_double(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return v;
}

// CPU of the whole process (user + system) in seconds: the writer thread and the tick builder.
double ProcessCpuS() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// Bytes this process has written through write(2)/pwrite(2) so far (/proc/self/io wchar): the
// WAL, the checkpoints and nothing else here.
double WrittenMiB() {
  std::FILE* f = std::fopen("/proc/self/io", "r");
  if (f == nullptr) return 0;
  char line[128];
  double v = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long n = 0;
    if (std::sscanf(line, "wchar: %llu", &n) == 1) v = static_cast<double>(n) / (1 << 20);
  }
  std::fclose(f);
  return v;
}

double FileMiB(const std::string& p) {
  std::error_code ec;
  auto n = std::filesystem::file_size(p, ec);
  return ec ? 0 : static_cast<double>(n) / (1 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: store_size DB [HOURS] [PACK_BLOCK_S] [END_UNIX_S]\n");
    return 2;
  }
  std::string db = argv[1];
  double hours = argc > 2 ? std::atof(argv[2]) : 25;
  gpudoctor::StoreOptions o;
  if (argc > 3) o.pack_block_s = std::atoll(argv[3]);
  for (const char* s : {"", "-wal", "-shm", ".lock"}) std::filesystem::remove(db + s);
  o.max_queued_ticks = 1 << 20;
  auto store = gpudoctor::HistoryStore::Open(db, o);
  if (!store.ok()) {
    std::fprintf(stderr, "store_size: %s\n", store.status().ToString().c_str());
    return 1;
  }
  // END_UNIX_S: the last tick's time (a seed for a `watch` that goes on writing the file: its
  // retention then deletes the oldest minutes as on a node with a day of history).
  const int64_t ticks_total = static_cast<int64_t>(hours * 3600);
  const int64_t t0 =
      argc > 4 ? std::atoll(argv[4]) - ticks_total + 1 : 1700000000 - 1700000000 % 3600;
  const int64_t ticks = ticks_total;
  size_t points = gpudoctor::testing::SyntheticTick(t0)->points.size();
  double write_s = 0;
  double hour_cpu_s = ProcessCpuS(), hour_written_mib = WrittenMiB();
  for (int64_t i = 0; i < ticks; ++i) {
    auto tick = gpudoctor::testing::SyntheticTick(t0 + i);  // built outside the timed part
    auto start = std::chrono::steady_clock::now();
    (*store)->Append(std::move(tick));
    if (i % 60 == 59) (*store)->Flush();
    write_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (i % 3600 == 3599) {
      (*store)->Flush();  // the hour's writes done before its CPU is read
      double cpu = ProcessCpuS(), written = WrittenMiB();
      std::fprintf(stderr,
                   "  %5.1f h written, %.1f MiB; this hour: %.0f us CPU/tick, %.0f MiB written\n",
                   (i + 1) / 3600.0, FileMiB(db), (cpu - hour_cpu_s) / 3600 * 1e6,
                   written - hour_written_mib);
      hour_cpu_s = cpu;
      hour_written_mib = written;
    }
  }
  auto start = std::chrono::steady_clock::now();
  (*store)->Close();
  write_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!(*store)->write_error().empty()) {
    std::fprintf(stderr, "store_size: %s\n", (*store)->write_error().c_str());
    return 1;
  }
  double raw_bytes = Query(db, "SELECT sum(length(data)) + 12 * count(*) FROM samples");
  double raw_minutes = Query(db, "SELECT count(DISTINCT minute_s) FROM samples");
  double rollup_bytes = Query(db, "SELECT sum(length(data)) + 12 * count(*) FROM rollups");
  double rollup_hours = Query(db, "SELECT count(DISTINCT hour_s) FROM rollups");
  double series = Query(db, "SELECT count(*) FROM series");
  double file = FileMiB(db);
  double raw_24h = raw_minutes > 0 ? raw_bytes / raw_minutes * 1440 / (1 << 20) : 0;
  double rollup_30d = rollup_hours > 0 ? rollup_bytes / rollup_hours * 720 / (1 << 20) : 0;
  // Pages are not full: scale the payload estimate by the measured file / payload ratio.
  double payload = (raw_bytes + rollup_bytes) / (1 << 20);
  double overhead = payload > 0 ? file / payload : 1;
  std::printf("store_size: %.1f h of 1 s ticks, %zu points/tick, %.0f series\n", hours, points,
              series);
  std::printf("  write cost: %.0f us/tick (%.2f us/point), writer thread incl. commit\n",
              write_s / ticks * 1e6, write_s / ticks / points * 1e6);
  std::printf("  file now: %.1f MiB (+ wal %.1f MiB)\n", file, FileMiB(db + "-wal"));
  std::printf(
      "  raw samples: %.1f MiB per 24 h; rollups: %.2f MiB per 30 d (measured over %.0f h)\n",
      raw_24h, rollup_30d, rollup_hours);
  std::printf(
      "  steady state (24 h raw + 30 d rollups, x%.2f page overhead): %.1f MiB (target < 200)\n",
      overhead, (raw_24h + rollup_30d) * overhead);
  return 0;
}
