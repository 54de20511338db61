// KeptProcFiles (probes/kept_proc_files.h): a probe's procfs files kept open from run to run
// under watch and read fresh each time; a fixture tree's files are never kept (a kept descriptor
// would read a file replaced by rename for ever); under check no descriptor outlives a read; the
// set travels to the next run in the carry and only there.
#include "probes/kept_proc_files.h"

#include <gtest/gtest.h>
#include <stdio.h>

#include "core/root_fs.h"
#include "probes/probe_entry_points.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using testing::TempDir;

ProbeContext Context(const RootFs& fs, bool continuous,
                     std::shared_ptr<ProbeCarry> previous = nullptr) {
  auto settings = std::make_shared<Settings>();
  settings->fs = fs;
  settings->sample_ms = 0;
  ProbeContext ctx{settings, SteadyClock::now() + std::chrono::seconds(10)};
  ctx.continuous = continuous;
  ctx.previous = std::move(previous);
  return ctx;
}

// Replaces dir/rel by rename, as a fixture writer does between samples.
void ReplaceByRename(const TempDir& dir, const std::string& rel, const std::string& content) {
  dir.Write(rel + ".new", content);
  ASSERT_EQ(::rename((dir.path() + "/" + rel + ".new").c_str(), (dir.path() + "/" + rel).c_str()),
            0);
}

TEST(KeptProcFilesTest, FixtureTreeFilesAreNotKeptUnderWatchAndReadTheReplacement) {
  TempDir dir;
  dir.Write("proc/stat", "cpu  1 0 0 0\n");
  dir.Write("proc/loadavg", "0.01 0.02 0.03 1/100 42\n");
  RootFs fs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  auto files = KeptProcFiles::ForRun(Context(fs, /*continuous=*/true), {"stat", "loadavg"});
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ(files->path(0), dir.path() + "/proc/stat");
  auto text = files->Read(0);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "cpu  1 0 0 0\n");
  EXPECT_FALSE(files->is_open(0));  // not procfs: opened afresh on every read
  ReplaceByRename(dir, "proc/stat", "cpu  2 0 0 0\n");
  text = files->Read(0);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "cpu  2 0 0 0\n");
  text = files->Read(1, 4);  // one buffer serves both files; max_bytes bounds the read
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "0.01");
}

TEST(KeptProcFilesTest, ProcfsFileIsKeptUnderWatchAndReadFresh) {
  // This process's own I/O counters: every read of the file counts in rchar.
  auto files = KeptProcFiles::ForRun(Context(RootFs(), /*continuous=*/true), {"self/io"});
  auto first = files->Read(0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  std::string first_text(*first);
  EXPECT_TRUE(files->is_open(0));
  auto second = files->Read(0);
  ASSERT_TRUE(second.ok());
  ASSERT_NE(first_text.find("rchar:"), std::string::npos) << first_text;
  EXPECT_NE(first_text, *second);  // rchar grew by the first read
  EXPECT_TRUE(files->is_open(0));
}

TEST(KeptProcFilesTest, CheckHoldsNoDescriptorBetweenReads) {
  auto files = KeptProcFiles::ForRun(Context(RootFs(), /*continuous=*/false), {"self/io"});
  ASSERT_TRUE(files->Read(0).ok());
  EXPECT_FALSE(files->is_open(0));
}

TEST(KeptProcFilesTest, MissingFileIsNotFoundNamingThePath) {
  TempDir dir;
  dir.MakeDir("proc");
  RootFs fs(dir.path() + "/proc", dir.path() + "/sys", dir.path());
  auto files = KeptProcFiles::ForRun(Context(fs, true), {"pressure/io"});
  auto text = files->Read(0);
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
  EXPECT_NE(text.status().message().find(dir.path() + "/proc/pressure/io"), std::string::npos)
      << text.status().message();
}

TEST(KeptProcFilesTest, TheSetTravelsInTheWatchCarryOnly) {
  RootFs fs;
  auto files = KeptProcFiles::ForRun(Context(fs, true), {"self/io"});
  ASSERT_TRUE(files->Read(0).ok());

  // Under watch the next carry holds the set, and the next run gets that very set back.
  auto watch_carry = CarrySample(Context(fs, true), 7, SteadyClock::now(), files);
  auto* sample = dynamic_cast<SampleCarry<int>*>(watch_carry.get());
  ASSERT_NE(sample, nullptr);
  EXPECT_EQ(sample->sample, 7);
  EXPECT_EQ(KeptProcFiles::ForRun(Context(fs, true, watch_carry), {"self/io"}), files);
  auto files_only = std::make_shared<KeptFilesCarry>(files);
  EXPECT_EQ(KeptProcFiles::ForRun(Context(fs, true, files_only), {"self/io"}), files);

  // Under check the carry is the sample alone; a run after it makes a set of its own.
  auto check_carry = CarrySample(Context(fs, false), 7, SteadyClock::now(), files);
  EXPECT_EQ(dynamic_cast<CarriesKeptFiles*>(check_carry.get()), nullptr);
  ASSERT_NE(dynamic_cast<SampleCarry<int>*>(check_carry.get()), nullptr);
  auto fresh = KeptProcFiles::ForRun(Context(fs, true, check_carry), {"self/io"});
  EXPECT_NE(fresh, files);
  // A carried set of another shape (another probe's) is not taken.
  EXPECT_NE(KeptProcFiles::ForRun(Context(fs, true, watch_carry), {"self/io", "self/stat"}), files);
}

TEST(KeptProcFilesTest, CpuMemoryAndPressureProbesKeepTheirFilesAcrossWatchRuns) {
  // The real host's procfs: each probe's second watch run reads through the set its first run
  // carried, which then holds open descriptors.
  RootFs fs;
  struct Case {
    const char* name;
    ProbeOutput (*run)(const ProbeContext&);
    const char* procfs_dir;  // the probe skips without it
  };
  for (const Case& c : {Case{"cpu", RunCpuProbe, ""}, Case{"memory", RunMemoryProbe, ""},
                        Case{"pressure", RunPressureProbe, "pressure"}}) {
    SCOPED_TRACE(c.name);
    if (*c.procfs_dir != '\0' && !RootFs::Exists(fs.ProcPath(c.procfs_dir))) continue;
    ProbeOutput first = c.run(Context(fs, true));
    ASSERT_EQ(first.state, ProbeState::kOk) << first.reason;
    auto* carried = dynamic_cast<CarriesKeptFiles*>(first.next.get());
    ASSERT_NE(carried, nullptr);
    std::shared_ptr<KeptProcFiles> files = carried->kept_files;
    ASSERT_NE(files, nullptr);
    ProbeOutput second = c.run(Context(fs, true, first.next));
    ASSERT_EQ(second.state, ProbeState::kOk) << second.reason;
    auto* again = dynamic_cast<CarriesKeptFiles*>(second.next.get());
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->kept_files, files);
    EXPECT_TRUE(files->is_open(0));
    // Under check nothing is carried that holds a descriptor.
    ProbeOutput check = c.run(Context(fs, false));
    EXPECT_EQ(dynamic_cast<CarriesKeptFiles*>(check.next.get()), nullptr);
  }
}

}  // namespace
}  // namespace gpudoctor
