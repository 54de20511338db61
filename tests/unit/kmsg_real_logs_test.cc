// The real-log corpus (tests/fixtures/real-logs, sources in its SOURCES.md): every file is scanned
// and judged as `gpudoctor logs` does, and its findings must equal exactly what expected.txt
// lists for it: finding id, GPU bus id, action (from NVIDIA's Xid catalog), and any evidence
// named there. A new file needs a block in expected.txt, so coverage grows by adding both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "kmsg/log_scanner.h"
#include "rules/engine.h"
#include "rules/thresholds.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

namespace fs = std::filesystem;

// 2026-12-15T00:00:00Z: syslog/journal stamps without a year are read as 2026.
constexpr int64_t kNow = 1797292800;

struct ExpectedFinding {
  std::string id, bus, action;
  std::vector<std::pair<std::string, std::string>> evidence;  // name=value, value as text
  std::string line;                                           // for messages
};

struct ExpectedFile {
  std::vector<ExpectedFinding> findings;
  std::optional<uint64_t> garbled;
  bool all_wall_time = false;
};

// expected.txt: "[file]" starts a block; then "finding ID BUS|- ACTION [name=value ...]",
// "garbled N", "wall_time all". '#' starts a comment line; a value with spaces is written in
// double quotes (name="a b").
std::vector<std::string> Words(std::string_view t) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char c : t) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ' ' && !quoted) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::map<std::string, ExpectedFile> ReadExpectations(const std::string& path) {
  std::map<std::string, ExpectedFile> out;
  std::istringstream in(testing::ReadFileOrDie(path));
  std::string line, current;
  while (std::getline(in, line)) {
    std::string_view t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (t.front() == '[' && t.back() == ']') {
      current = std::string(t.substr(1, t.size() - 2));
      EXPECT_EQ(out.count(current), 0u) << "two blocks for " << current;
      out[current];
      continue;
    }
    EXPECT_FALSE(current.empty()) << "line outside a block: " << line;
    auto words = Words(t);
    if (words[0] == "finding" && words.size() >= 4) {
      ExpectedFinding f{words[1], words[2], words[3], {}, std::string(t)};
      for (size_t k = 4; k < words.size(); ++k) {
        size_t eq = words[k].find('=');
        EXPECT_NE(eq, std::string::npos) << line;
        f.evidence.emplace_back(words[k].substr(0, eq), words[k].substr(eq + 1));
      }
      out[current].findings.push_back(std::move(f));
    } else if (words[0] == "garbled" && words.size() == 2) {
      out[current].garbled = std::stoull(words[1]);
    } else if (words[0] == "wall_time" && words.size() == 2 && words[1] == "all") {
      out[current].all_wall_time = true;
    } else {
      ADD_FAILURE() << "bad expectation line: " << line;
    }
  }
  return out;
}

std::string EvidenceText(const Finding& f, const std::string& name) {
  for (const auto& e : f.evidence) {
    if (e.name != name) continue;
    if (auto* i = std::get_if<int64_t>(&e.value)) return std::to_string(*i);
    if (auto* d = std::get_if<double>(&e.value)) return std::to_string(*d);
    if (auto* s = std::get_if<std::string>(&e.value)) return *s;
    if (auto* b = std::get_if<bool>(&e.value)) return *b ? "true" : "false";
  }
  return "<absent>";
}

std::string Key(const std::string& id, const std::string& bus, const std::string& action) {
  return id + " " + bus + " " + action;
}

class RealLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    old_tz_ = getenv("TZ") ? std::optional<std::string>(getenv("TZ")) : std::nullopt;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (old_tz_) {
      setenv("TZ", old_tz_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  std::optional<std::string> old_tz_;
};

TEST_F(RealLogsTest, EveryFileHasExpectationsAndEveryExpectationAFile) {
  const std::string dir = testing::FixturePath("real-logs");
  auto expected = ReadExpectations(dir + "/expected.txt");
  size_t logs = 0, lines = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".log") continue;
    ++logs;
    std::string text = testing::ReadFileOrDie(entry.path().string());
    lines += static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    EXPECT_EQ(expected.count(name), 1u) << name << " has no block in expected.txt";
  }
  for (const auto& [name, e] : expected) {
    EXPECT_TRUE(fs::exists(dir + "/" + name)) << "expected.txt names a missing file " << name;
  }
  EXPECT_GE(logs, 20u);
  EXPECT_GE(lines, 60u);
}

TEST_F(RealLogsTest, EachFileYieldsExactlyItsExpectedFindingsAndActions) {
  const std::string dir = testing::FixturePath("real-logs");
  auto expected = ReadExpectations(dir + "/expected.txt");
  ASSERT_FALSE(expected.empty());
  for (const auto& [name, want] : expected) {
    SCOPED_TRACE(name);
    KernelLogScanOptions options;
    options.now_unix_s = kNow;
    KernelLogScanner scanner(options);
    scanner.ScanText(testing::ReadFileOrDie(dir + "/" + name));
    Snapshot snap;
    snap.kernel = scanner.Finish();
    std::vector<Finding> got;
    KernelRules(snap, Thresholds{}, got);

    std::vector<std::string> got_keys, want_keys;
    for (const auto& f : got) {
      got_keys.push_back(Key(f.id, f.gpu ? f.gpu->pci_bus_id : "-", ActionName(f.action)));
    }
    for (const auto& w : want.findings) want_keys.push_back(Key(w.id, w.bus, w.action));
    std::sort(got_keys.begin(), got_keys.end());
    std::sort(want_keys.begin(), want_keys.end());
    EXPECT_EQ(got_keys, want_keys);

    // Evidence named in the expectations, on the finding with the same id, bus and action (the
    // first whose named evidence all matches: one file may hold several Xids on one GPU).
    for (const auto& w : want.findings) {
      if (w.evidence.empty()) continue;
      bool matched = false;
      std::string seen;
      for (const auto& f : got) {
        if (Key(f.id, f.gpu ? f.gpu->pci_bus_id : "-", ActionName(f.action)) !=
            Key(w.id, w.bus, w.action)) {
          continue;
        }
        bool all = true;
        for (const auto& [k, v] : w.evidence) {
          std::string have = EvidenceText(f, k);
          if (have != v) {
            all = false;
            seen += " " + k + "=" + have;
          }
        }
        matched = matched || all;
      }
      EXPECT_TRUE(matched) << w.line << " ; differing:" << seen;
    }
    if (want.garbled) {
      EXPECT_EQ(snap.kernel.garbled_lines, *want.garbled);
    }
    if (want.all_wall_time) {
      for (const auto& e : snap.kernel.events) {
        EXPECT_TRUE(e.first.wall_us.has_value()) << e.sample;
      }
      EXPECT_FALSE(snap.kernel.events.empty());
    }
  }
}

}  // namespace
}  // namespace gpudoctor
