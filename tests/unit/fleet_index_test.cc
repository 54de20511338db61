// The report index (fleet/report_index.h) and the simdjson report parser (fleet/report_parse.h):
// a second read of an unchanged directory parses nothing and gives the same fleet; a changed,
// added or removed report is re-read; a corrupt or foreign index is rebuilt, never trusted;
// bad documents keep their error messages (file and field named) through the index.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/time_spec.h"
#include "fleet/index_file.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/report_index.h"
#include "fleet/report_reader.h"
#include "test_util.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;
constexpr int64_t kT0 = 1768003200;  // 2026-01-10T00:00:00Z
constexpr int64_t kNow = kT0 + 86400 * 10;

json Gpu(int i, const std::string& serial, double clock = 1980) {
  char bus[16];
  std::snprintf(bus, sizeof bus, "0000:%02X:00.0", 0x18 + i);
  return {{"index", i},
          {"uuid", "GPU-" + serial},
          {"serial", serial},
          {"pci_bus_id", bus},
          {"name", "NVIDIA H100 80GB HBM3"},
          {"util_gpu_pct", 97},
          {"sm_clock_mhz", clock},
          {"power_mw", 650000},
          {"temp_c", 61},
          {"counters_first", {{"ecc_sbe_volatile", 1}, {"clock_event_reasons", 4}}},
          {"counters_second", {{"ecc_sbe_volatile", 2}, {"pcie_replays", -1}}}};
}

std::string Report(const std::string& node, int64_t t, const std::string& serial,
                   double clock = 1980) {
  json findings =
      json::array({{{"id", "gpu.xid"},
                    {"severity", "crit"},
                    {"layer", "hardware"},
                    {"summary", "Xid 79"},
                    {"evidence", {{"xid", 79}}},
                    {"gpu", {{"index", 0}, {"pci_bus_id", "0000:18:00.0"}, {"serial", serial}}}}});
  return json{{"verdict", "crit"},
              {"host", node},
              {"time", FormatUtc(t)},
              {"job", "slurm:42"},
              {"findings", findings},
              {"probes", json::array()},
              {"gpus", json::array({Gpu(0, serial, clock), Gpu(1, serial + "b")})}}
      .dump(2);
}

// Everything ReadReports produced, as text, to compare two reads.
std::string Dump(const FleetData& d) {
  std::string s;
  for (const auto& c : d.cards) {
    s += "card " + c.node + " " + c.pci_bus_id + " " + c.serial + " " + c.uuid + " " + c.model +
         (c.index ? std::to_string(*c.index) : "-") + "\n";
  }
  for (const auto& r : d.reports) {
    s += "report " + r.node + " " + r.source + " " + r.verdict + " " + r.job + " " +
         std::to_string(r.time_s) + " " + std::to_string(r.gpu_count) + "\n";
  }
  auto f = [](const std::optional<float>& v) { return v ? std::to_string(*v) : "-"; };
  auto u = [](const std::optional<uint32_t>& v) { return v ? std::to_string(*v) : "-"; };
  for (const auto& x : d.samples) {
    s += "sample " + std::to_string(x.card) + " " + std::to_string(x.time_s) + " " +
         f(x.sm_clock_mhz) + f(x.power_w) + f(x.util_pct) + f(x.temp_c) + u(x.clock_event_reasons) +
         u(x.ecc_sbe) + u(x.ecc_dbe) + u(x.pcie_replays) + "\n";
  }
  for (const auto& e : d.findings) {
    s += "finding " + e.node + " " + e.id + " " + std::to_string(static_cast<int>(e.action)) + " " +
         e.gpu.pci_bus_id + " " + e.gpu.serial + " " + e.summary + "\n";
  }
  for (const auto& j : d.card_jobs) {
    s += "job " + std::to_string(j.card) + " " + j.job + "\n";
  }
  for (const auto& p : d.problems) s += "problem " + p.source + ": " + p.message + "\n";
  return s;
}

TEST(FleetIndexTest, SecondReadComesFromTheIndexAndIsIdentical) {
  testing::TempDir dir;
  dir.Write("reports/a.json", Report("n0", kT0, "SN0"));
  dir.Write("reports/b.json", Report("n1", kT0, "SN1", 1400));
  dir.Write("reports/bad.json", "{\"host\": \"n2\", \"time\": \"yesterday\", \"findings\": []}");
  const std::string reports = dir.path() + "/reports", index = dir.path() + "/fleet.idx";
  FleetData plain, first, second;
  ASSERT_TRUE(ReadReports(reports, kNow, plain).ok());
  ReadStats s1, s2;
  ASSERT_TRUE(ReadReports(reports, kNow, first, std::chrono::seconds(5), index, &s1).ok());
  EXPECT_EQ(s1.files_parsed, 3u);
  EXPECT_EQ(s1.files_from_index, 0u);
  EXPECT_TRUE(s1.index_saved) << s1.index_note;
  ASSERT_TRUE(ReadReports(reports, kNow, second, std::chrono::seconds(5), index, &s2).ok());
  EXPECT_EQ(s2.files_parsed, 0u);  // nothing parsed again
  EXPECT_EQ(s2.files_from_index, 3u);
  EXPECT_FALSE(s2.index_saved);  // nothing changed: not rewritten
  EXPECT_EQ(Dump(first), Dump(plain));
  EXPECT_EQ(Dump(second), Dump(plain));
  // The bad report keeps its error (file and field named) when it comes from the index.
  EXPECT_NE(Dump(second).find("bad.json: node n2: missing or malformed \"time\" 'yesterday'"),
            std::string::npos)
      << Dump(second);
  // The counters: the later sample's, the earlier one's where the later has none (or a
  // negative value); the job label reaches every card.
  EXPECT_NE(Dump(second).find("job 0 slurm:42"), std::string::npos);
  ASSERT_FALSE(second.samples.empty());
  EXPECT_EQ(second.samples[0].ecc_sbe, 2u);
  EXPECT_EQ(second.samples[0].clock_event_reasons, 4u);
  EXPECT_FALSE(second.samples[0].pcie_replays.has_value());
  // A card query answered from the index is the one answered from the files.
  Verdict a = JudgeCard("SN0", BuildLedger(plain), HardwareFaults(plain, FindOnsets(plain)));
  Verdict b = JudgeCard("SN0", BuildLedger(second), HardwareFaults(second, FindOnsets(second)));
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_EQ(a.reason, b.reason);
}

TEST(FleetIndexTest, ChangedAddedAndRemovedReportsAreReRead) {
  testing::TempDir dir;
  dir.Write("r/a.json", Report("n0", kT0, "SN0"));
  dir.Write("r/b.json", Report("n1", kT0, "SN1"));
  const std::string reports = dir.path() + "/r", index = dir.path() + "/fleet.idx";
  {
    FleetData d;
    ReadStats st;
    ASSERT_TRUE(ReadReports(reports, kNow, d, std::chrono::seconds(5), index, &st).ok());
    ASSERT_EQ(st.files_parsed, 2u);
  }
  // b.json rewritten (another serial: a card swap), c.json added, a.json removed.
  dir.Write("r/b.json", Report("n1", kT0, "SN9-swapped"));
  struct timespec later[2] = {{kT0 + 1000, 0}, {kT0 + 1000, 0}};  // a different mtime for sure
  ASSERT_EQ(utimensat(AT_FDCWD, (reports + "/b.json").c_str(), later, 0), 0);
  dir.Write("r/c.json", Report("n2", kT0, "SN2"));
  std::filesystem::remove(reports + "/a.json");
  FleetData d, plain;
  ReadStats st;
  ASSERT_TRUE(ReadReports(reports, kNow, d, std::chrono::seconds(5), index, &st).ok());
  EXPECT_EQ(st.files_parsed, 2u);  // b (changed) and c (new)
  EXPECT_EQ(st.files_from_index, 0u);
  EXPECT_TRUE(st.index_saved);
  ASSERT_TRUE(ReadReports(reports, kNow, plain).ok());
  EXPECT_EQ(Dump(d), Dump(plain));
  EXPECT_NE(Dump(d).find("SN9-swapped"), std::string::npos);
  EXPECT_EQ(Dump(d).find(" SN0 "), std::string::npos);
  // And the index now holds exactly b and c.
  FleetData again;
  ReadStats st2;
  ASSERT_TRUE(ReadReports(reports, kNow, again, std::chrono::seconds(5), index, &st2).ok());
  EXPECT_EQ(st2.files_from_index, 2u);
  EXPECT_EQ(st2.files_parsed, 0u);
  EXPECT_FALSE(st2.index_saved);
}

TEST(FleetIndexTest, CorruptOrForeignIndexIsRebuiltNeverTrusted) {
  testing::TempDir dir;
  dir.Write("r/a.json", Report("n0", kT0, "SN0"));
  dir.Write("r/b.json", Report("n1", kT0, "SN1"));
  const std::string reports = dir.path() + "/r", index = dir.path() + "/fleet.idx";
  FleetData plain;
  ASSERT_TRUE(ReadReports(reports, kNow, plain).ok());
  {
    FleetData d;
    ASSERT_TRUE(ReadReports(reports, kNow, d, std::chrono::seconds(5), index, nullptr).ok());
  }
  std::string good;
  {
    std::ifstream in(index, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(good.size(), 100u);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x20;  // one bit in the payload (a serial, a value)
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bit flipped", flipped},
      {"cut short", good.substr(0, good.size() - 7)},
      {"empty", ""},
      {"not an index", "{\"host\": \"n0\"}"},
      {"another version", good.substr(0, 11) + std::string("\x63\0\0\0", 4) + good.substr(15)},
  };
  for (const auto& [what, bytes] : cases) {
    {
      std::ofstream out(index, std::ios::binary | std::ios::trunc);
      out << bytes;
    }
    FleetData d;
    ReadStats st;
    ASSERT_TRUE(ReadReports(reports, kNow, d, std::chrono::seconds(5), index, &st).ok());
    EXPECT_EQ(st.files_parsed, 2u) << what;  // every file parsed again
    EXPECT_EQ(st.files_from_index, 0u) << what;
    EXPECT_FALSE(st.index_note.empty()) << what;
    EXPECT_TRUE(st.index_saved) << what << ": " << st.index_note;  // rebuilt
    EXPECT_EQ(Dump(d), Dump(plain)) << what;
    FleetData again;
    ReadStats st2;
    ASSERT_TRUE(ReadReports(reports, kNow, again, std::chrono::seconds(5), index, &st2).ok());
    EXPECT_EQ(st2.files_from_index, 2u) << what << ": the rebuilt index is used";
  }
}

// A file's record is decoded only when the file is used; one that does not decode (a file that
// passes its checksum but holds a bad record) is never used: that report is parsed again, the
// others still come from the index, and the index is rewritten.
TEST(FleetIndexTest, RecordThatDoesNotDecodeIsParsedAgain) {
  testing::TempDir dir;
  dir.Write("r/a.json", Report("n0", kT0, "SN0"));
  dir.Write("r/b.json", Report("n1", kT0, "SN1"));
  const std::string reports = dir.path() + "/r", index = dir.path() + "/fleet.idx";
  FleetData plain;
  ASSERT_TRUE(ReadReports(reports, kNow, plain).ok());
  {
    FleetData d;
    ASSERT_TRUE(ReadReports(reports, kNow, d, std::chrono::seconds(5), index, nullptr).ok());
  }
  std::string file;
  {
    std::ifstream in(index, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), {});
  }
  constexpr size_t kHeader = 31;  // magic + NUL, version, length, checksum (index_file.h)
  ASSERT_GT(file.size(), kHeader);
  std::string payload = file.substr(kHeader);
  // The table: count, then per file path, size, mtime, record length, record. The record of
  // b.json gets a document count its bytes cannot hold.
  size_t pos = 4;
  bool broken = false;
  for (int i = 0; i < 2; ++i) {
    uint32_t len;
    std::memcpy(&len, payload.data() + pos, 4);
    const std::string path = payload.substr(pos + 4, len);
    pos += 4 + len + 16;
    uint32_t record;
    std::memcpy(&record, payload.data() + pos, 4);
    pos += 4;
    if (path.size() >= 6 && path.substr(path.size() - 6) == "b.json") {
      const uint32_t huge = 0x7fffffff;
      std::memcpy(payload.data() + pos, &huge, 4);
      broken = true;
    }
    pos += record;
  }
  ASSERT_TRUE(broken);
  ASSERT_TRUE(WriteIndexFile(index, IndexFileKind{"GDFLEETIDX", 2, "fleet index"}, payload).ok());
  FleetData d;
  ReadStats st;
  ASSERT_TRUE(ReadReports(reports, kNow, d, std::chrono::seconds(5), index, &st).ok());
  EXPECT_EQ(st.files_from_index, 1u);
  EXPECT_EQ(st.files_parsed, 1u);
  EXPECT_TRUE(st.index_saved);
  EXPECT_EQ(Dump(d), Dump(plain));
  FleetData again;
  ReadStats st2;
  ASSERT_TRUE(ReadReports(reports, kNow, again, std::chrono::seconds(5), index, &st2).ok());
  EXPECT_EQ(st2.files_from_index, 2u);
  EXPECT_EQ(Dump(again), Dump(plain));
}

TEST(FleetIndexTest, ParserKeepsTheErrorsAndValueChecks) {
  auto err = [](std::string_view text) {
    auto r = ParseReportJson(text);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(err("{\"host\": \"n0\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": [}"),
            "invalid or truncated JSON");
  EXPECT_EQ(err("{\"host\": \"n0\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": ["),
            "invalid or truncated JSON");
  EXPECT_EQ(err(""), "invalid or truncated JSON");
  EXPECT_EQ(err("not json"), "invalid or truncated JSON");
  // Two documents are a stream, never one report.
  EXPECT_EQ(err("{\"host\": \"n0\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": []}\n"
                "{\"host\": \"n1\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": []}"),
            "invalid or truncated JSON");
  EXPECT_EQ(err("{\"host\": \"n0\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": []} x"),
            "invalid or truncated JSON");
  EXPECT_EQ(err("{\"host\": \"n0\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": []}\n\n"),
            "ok");
  EXPECT_EQ(err("[1, 2]"), "not a JSON object (not a gpudoctor check --json report)");
  EXPECT_EQ(err("{\"time\": \"2026-01-10T00:00:00Z\", \"findings\": []}"),
            "no \"host\" (not a gpudoctor check --json report)");
  EXPECT_EQ(err("{\"host\": \"n0\", \"findings\": []}"),
            "node n0: missing or malformed \"time\" ''");
  EXPECT_EQ(err("{\"host\": \"n0\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": {}}"),
            "node n0: no \"findings\" array (truncated or not a report)");
  auto r = ParseReportJson(
      "{\"host\": \"n0\", \"time\": \"2026-01-10T00:00:00Z\", \"findings\": [], \"gpus\": [{"
      "\"sm_clock_mhz\": 1e300, \"power_mw\": -1e9, \"temp_c\": \"hot\", \"util_gpu_pct\": 50,"
      " \"name\": \"caf\\u00e9\", \"serial\": \"N/A\", \"pci_bus_id\": \"00000000:3A:00.0\"}]}");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->gpus.size(), 1u);
  const ParsedGpu& g = r->gpus[0];
  EXPECT_EQ(g.rejected,
            "sm_clock_mhz 1e300 (expected 0..10000 MHz), power_mw -1e9 (expected 0..5000000 mW)");
  EXPECT_FALSE(g.sample.sm_clock_mhz.has_value());
  EXPECT_FALSE(g.sample.temp_c.has_value());  // not a number: absent, not rejected
  EXPECT_EQ(g.sample.util_pct, 50.0f);
  EXPECT_EQ(g.card.model, "caf\xc3\xa9");  // escapes decoded
  EXPECT_EQ(g.card.serial, "");            // a placeholder serial is no serial
  EXPECT_EQ(g.card.pci_bus_id, "0000:3a:00.0");
}

}  // namespace
}  // namespace gpudoctor::fleet
