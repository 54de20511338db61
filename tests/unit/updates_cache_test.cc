// The on-disk cache of the pending-security-updates answer (probes/updates_cache.h): a hit gives
// exactly the scan's answer, any changed input invalidates it, and a corrupt, foreign or unsafe
// cache never changes the answer.
#include "probes/updates_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "core/strings.h"
#include "host_fixture.h"
#include "probes/updates_scan.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

TimePoint Later() { return SteadyClock::now() + std::chrono::seconds(10); }

// Every field of the answer, so that "the same answer" is checked field by field.
std::string Describe(const UpdateFacts& f) {
  std::string out = f.manager + "|" + f.method + "|" + (f.checked ? "1" : "0") + "|" + f.note +
                    "|" + std::to_string(f.security_lists) + "|" + std::to_string(f.pending_count) +
                    "|" + (f.lists_date_unix_s ? std::to_string(*f.lists_date_unix_s) : "-");
  for (const PendingUpdate& p : f.pending) {
    out += "\n" + p.name + "|" + p.installed_version + "|" + p.candidate_version + "|" + p.suite +
           "|" + (p.list_date_unix_s ? std::to_string(*p.list_date_unix_s) : "-");
  }
  return out;
}

// The apt-security-pending host with its cache directory (0700, ours).
class UpdatesCacheHost {
 public:
  UpdatesCacheHost() : host_("apt-security-pending") {
    std::filesystem::create_directories(cache_dir());
    ::chmod(cache_dir().c_str(), 0700);
  }
  RootFs fs() const { return host_.fs(); }
  std::string root() const { return host_.root(); }
  std::string cache_dir() const { return host_.root() + kUpdatesCacheDir; }
  std::string cache_file() const { return cache_dir() + "/" + kUpdatesCacheFile; }
  std::string lists() const { return host_.root() + "/var/lib/apt/lists"; }
  std::string status() const { return host_.root() + "/var/lib/dpkg/status"; }
  std::string List(std::string_view suffix) const {
    for (const auto& e : std::filesystem::directory_iterator(lists())) {
      if (EndsWith(e.path().filename().string(), suffix)) return e.path().string();
    }
    return "";
  }
  UpdateFacts Scan(UpdatesCacheUse* use) const {
    return ScanSecurityUpdatesCached(fs(), Later(), use);
  }

 private:
  testing::HostFixture host_;
};

void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::filesystem::remove(path);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  ::chmod(path.c_str(), mode);
}

TEST(SecurityUpdatesCacheTest, SecondScanIsAHitWithExactlyTheScansAnswer) {
  UpdatesCacheHost h;
  const std::string fresh = Describe(ScanSecurityUpdates(h.fs(), Later()));
  UpdatesCacheUse use;
  UpdateFacts first = h.Scan(&use);
  EXPECT_EQ(use, UpdatesCacheUse::kStored);
  EXPECT_EQ(Describe(first), fresh);
  struct stat st {};
  ASSERT_EQ(::lstat(h.cache_file().c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  UpdateFacts second = h.Scan(&use);
  EXPECT_EQ(use, UpdatesCacheUse::kHit);
  EXPECT_EQ(Describe(second), fresh);
  ASSERT_EQ(second.pending_count, 2);  // the fixture's answer, not an empty one
  EXPECT_EQ(second.pending.size(), 2u);
  // No temporary file is left beside it.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(h.cache_dir()))
    files += !e.is_directory();
  EXPECT_EQ(files, 1u);
}

// Every input: a rewrite with other content, a rewrite keeping size and mtime (the ctime and
// inode move), a touch, a new list, a removed list. Each time the answer is the new inputs'
// scan, never the cached one.
TEST(SecurityUpdatesCacheTest, AnyChangedInputInvalidatesIt) {
  UpdatesCacheHost h;
  UpdatesCacheUse use;
  h.Scan(&use);
  ASSERT_EQ(use, UpdatesCacheUse::kStored);
  auto expect_rescan = [&](const std::string& what) {
    const std::string fresh = Describe(ScanSecurityUpdates(h.fs(), Later()));
    UpdateFacts f = h.Scan(&use);
    EXPECT_EQ(use, UpdatesCacheUse::kStored) << what;
    EXPECT_EQ(Describe(f), fresh) << what;
    h.Scan(&use);
    EXPECT_EQ(use, UpdatesCacheUse::kHit) << what;
  };
  // dpkg installs the security version of openssl: one pending update left.
  std::string status = testing::ReadFileOrDie(h.status());
  size_t at = status.find("3.0.11-1~deb12u2");
  ASSERT_NE(at, std::string::npos);
  status.replace(at, 16, "3.0.15-1~deb12u1");
  testing::TempDir tmp;
  tmp.Write("status", status);
  std::filesystem::rename(tmp.path() + "/status", h.status());  // as dpkg does
  expect_rescan("status replaced");
  EXPECT_EQ(h.Scan(&use).pending_count, 1);

  // The same bytes written in place, mtime put back: only ctime (and maybe nothing else) moves.
  for (const std::string& path : {h.status(), h.List("security_InRelease"),
                                  h.List("security_updates_main_binary-amd64_Packages")}) {
    ASSERT_FALSE(path.empty());
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    std::string text = testing::ReadFileOrDie(path);
    usleep(20000);
    {
      int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
      ::close(fd);
    }
    timespec times[2] = {before.st_atim, before.st_mtim};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
    expect_rescan("rewritten in place, mtime kept: " + path);
    // A touch alone.
    timespec later[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
    usleep(20000);
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), later, 0), 0);
    expect_rescan("touched: " + path);
  }
  // A list added (a second security list offering a newer libc6), then removed.
  const std::string extra =
      h.lists() +
      "/deb.debian.org_debian-security_dists_bookworm-security_contrib_binary-amd64_Packages";
  WriteFile(extra, "Package: libc6\nVersion: 9.0-1\nArchitecture: amd64\n", 0644);
  expect_rescan("list added");
  std::filesystem::remove(extra);
  expect_rescan("list removed");
}

TEST(SecurityUpdatesCacheTest, CorruptForeignOrUnsafeCacheNeverChangesTheAnswer) {
  UpdatesCacheHost h;
  UpdatesCacheUse use;
  const std::string fresh = Describe(h.Scan(&use));
  ASSERT_EQ(use, UpdatesCacheUse::kStored);
  const std::string good = testing::ReadFileOrDie(h.cache_file());
  auto expect_ignored = [&](const std::string& text, const std::string& what) {
    WriteFile(h.cache_file(), text);
    UpdateFacts f = h.Scan(&use);
    EXPECT_NE(use, UpdatesCacheUse::kHit) << what;
    EXPECT_EQ(Describe(f), fresh) << what;
  };
  // Every truncation and every single flipped byte (the checksum catches what the parse lets
  // through).
  for (size_t n = 0; n < good.size(); n += 7) expect_ignored(good.substr(0, n), "cut");
  for (size_t i = 0; i < good.size(); i += 5) {
    std::string bad = good;
    bad[i] ^= 0x04;
    expect_ignored(bad, "byte " + std::to_string(i));
  }
  expect_ignored(good + "pending x 1 2 s -\n", "appended");
  expect_ignored(std::string(1000, '\0'), "zeros");
  // A well-formed cache of another identity (other inputs): its answer must not be used.
  {
    std::string other = SerializeUpdatesCache("var/lib/dpkg/status 1 2 3 4 5\n", UpdateFacts{});
    expect_ignored(other, "other identity");
  }
  // Well formed, right identity, checksum right, but inconsistent (pending_count below the
  // listed updates): refused by the parse.
  {
    UpdateFacts lie = ScanSecurityUpdates(h.fs(), Later());
    lie.pending_count = 0;
    expect_ignored(SerializeUpdatesCache(UpdatesInputIdentity(h.fs()), lie), "inconsistent");
  }
  // The good file with an unsafe mode, or behind a symlink: not read.
  WriteFile(h.cache_file(), good, 0644);
  h.Scan(&use);
  EXPECT_NE(use, UpdatesCacheUse::kHit);
  std::filesystem::remove(h.cache_file());
  WriteFile(h.cache_dir() + "/elsewhere", good);
  std::filesystem::create_symlink("elsewhere", h.cache_file());
  h.Scan(&use);
  EXPECT_NE(use, UpdatesCacheUse::kHit);
  // The link was replaced by a file of our own (rename replaces the link, never follows it).
  struct stat st {};
  ASSERT_EQ(::lstat(h.cache_file().c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  h.Scan(&use);
  EXPECT_EQ(use, UpdatesCacheUse::kHit);
  // A directory others may write: not used at all.
  ::chmod(h.cache_dir().c_str(), 0777);
  EXPECT_EQ(Describe(h.Scan(&use)), fresh);
  EXPECT_EQ(use, UpdatesCacheUse::kOff);
  ::chmod(h.cache_dir().c_str(), 0700);
  // The directory itself a symlink: not used.
  std::filesystem::rename(h.cache_dir(), h.root() + "/var/cache/real");
  std::filesystem::create_directory_symlink("real", h.cache_dir());
  EXPECT_EQ(Describe(h.Scan(&use)), fresh);
  EXPECT_EQ(use, UpdatesCacheUse::kOff);
}

// Another root without the cache directory (a fixture tree): nothing is created or written.
TEST(SecurityUpdatesCacheTest, AnotherRootWithoutTheDirectoryIsNeverWritten) {
  testing::HostFixture host("apt-security-pending");
  UpdatesCacheUse use;
  UpdateFacts f = ScanSecurityUpdatesCached(host.fs(), Later(), &use);
  EXPECT_EQ(use, UpdatesCacheUse::kOff);
  EXPECT_EQ(Describe(f), Describe(ScanSecurityUpdates(host.fs(), Later())));
  EXPECT_FALSE(std::filesystem::exists(host.root() + "/var/cache"));
}

// Incomplete answers (a list not read) are not stored.
TEST(SecurityUpdatesCacheTest, IncompleteAnswersAreNotStored) {
  UpdatesCacheHost h;
  WriteFile(h.lists() +
                "/deb.debian.org_debian-security_dists_bookworm-security_non-free_binary-amd64_"
                "Packages.lz4",
            "not lz4", 0644);
  UpdatesCacheUse use;
  UpdateFacts f = h.Scan(&use);
  EXPECT_NE(f.note.find("not read"), std::string::npos) << f.note;
  EXPECT_EQ(use, UpdatesCacheUse::kMissed);
  EXPECT_FALSE(std::filesystem::exists(h.cache_file()));
}

TEST(SecurityUpdatesCacheTest, SerializedFieldsRoundTripExactly) {
  UpdateFacts f;
  f.manager = "apt";
  f.method = "a method with spaces, 100% and tabs\t";
  f.method = Sanitize(f.method);
  f.checked = true;
  f.note = "";
  f.security_lists = 3;
  f.lists_date_unix_s = -5;
  for (int i = 0; i < static_cast<int>(kMaxPendingListed); ++i) {
    f.pending.push_back(
        {"pkg" + std::to_string(i), "-", "1:2.0~rc1+dfsg-%1 ünï", "", std::nullopt});
  }
  f.pending[3].list_date_unix_s = 1700000000;
  f.pending_count = 120;
  const std::string id = "var/lib/dpkg/status 10 1 2 3 4\n";
  auto back = ParseUpdatesCache(SerializeUpdatesCache(id, f), id);
  ASSERT_TRUE(back);
  EXPECT_EQ(Describe(*back), Describe(f));
  EXPECT_FALSE(ParseUpdatesCache(SerializeUpdatesCache(id, f), "var/lib/dpkg/status 10 1 2 3 5\n"));
  EXPECT_FALSE(ParseUpdatesCache(SerializeUpdatesCache(id, f), ""));
  f.pending.push_back(f.pending[0]);  // more listed than the bound
  EXPECT_FALSE(ParseUpdatesCache(SerializeUpdatesCache(id, f), id));
}

}  // namespace
}  // namespace gpudoctor
