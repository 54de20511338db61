// `check` takes the kernel ring whole through syslog(2) (ScanSyslogRing) instead of one read(2) a
// /dev/kmsg record, where the text can stand in for the records. Fake rings for each case where it
// cannot (nothing may be scanned then: ReadKmsg goes on record by record, from the oldest), and
// the live host's ring read both ways.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/klog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "kmsg/line_format.h"
#include "kmsg/live_sources.h"
#include "kmsg/log_scanner.h"

namespace gpudoctor {
namespace {

// The fake ring: its size and text, set per test (the API takes plain function pointers).
int g_ring_size = 0;
std::string g_text;
int g_read_calls = 0;
int g_last_len = 0;
int FakeSize() { return g_ring_size; }
int FakeReadAll(char* buf, int len) {
  ++g_read_calls;
  g_last_len = len;
  // As the kernel does: the newest text that fits.
  const size_t n = std::min(g_text.size(), static_cast<size_t>(len));
  std::memcpy(buf, g_text.data() + g_text.size() - n, n);
  return static_cast<int>(n);
}
int FailingSize() {
  errno = EPERM;
  return -1;
}
int FailingRead(char*, int) {
  errno = EPERM;
  return -1;
}
constexpr SyslogRingApi kFake{&FakeSize, &FakeReadAll};

class SyslogRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_ring_size = 128 << 10;
    g_read_calls = 0;
    g_last_len = 0;
    g_text.clear();
  }
};

// The kernel's own syslog text, caller ids included (CONFIG_PRINTK_CALLER); user-space lines
// written to /dev/kmsg carry facility 1 (<12>, <14>).
constexpr char kRing[] =
    "<6>[    0.000000][    T0] Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075)\n"
    "<4>[  812.114211][ T4321] NVRM: Xid (PCI:0000:3b:00): 79, pid=4321, name=python, GPU has "
    "fallen off the bus.\n"
    "<14>[  813.000000][ T999] NVRM: Xid (PCI:0000:3c:00): 79, pid=1, name=x, written by a user\n"
    "<3>[  900.5][    C3] INFO: task python:4321 blocked for more than 122 seconds.\n";

TEST_F(SyslogRingTest, TheRingsTextIsScannedLikeItsRecords) {
  g_text = kRing;
  KernelLogScanner scanner;
  ASSERT_TRUE(ScanSyslogRing(scanner, kFake, 0));
  EXPECT_EQ(g_read_calls, 1);
  KernelLogFacts f = scanner.Finish();
  EXPECT_EQ(f.source, "kmsg");
  EXPECT_EQ(f.records_read, 4u);
  EXPECT_EQ(f.bytes_scanned, g_text.size());
  EXPECT_EQ(f.non_kernel_lines, 1u);  // the user's line is not the kernel's Xid
  std::set<std::pair<KernelEventKind, std::string>> events;
  for (const KernelEvent& e : f.events) events.insert({e.kind, e.subject});
  ASSERT_EQ(events.size(), 2u);
  bool xid = false;
  for (const KernelEvent& e : f.events) {
    if (e.kind != KernelEventKind::kXid) continue;
    xid = true;
    EXPECT_EQ(e.xid, 79);
    ASSERT_TRUE(e.pci);
    EXPECT_EQ(e.pci->bus, 0x3b);
    ASSERT_TRUE(e.first.boot_us);
    EXPECT_EQ(*e.first.boot_us, 812114211);
  }
  EXPECT_TRUE(xid);
  // Room for twice the ring, small or large (a buffer of its own in small pages, not the
  // scanner's 1 MiB huge-page buffer).
  EXPECT_EQ(g_last_len, 2 * g_ring_size + (64 << 10));
  g_ring_size = 4 << 20;
  KernelLogScanner big;
  ASSERT_TRUE(ScanSyslogRing(big, kFake, 0));
  EXPECT_EQ(g_last_len, (8 << 20) + (64 << 10));
  EXPECT_EQ(big.Finish().records_read, 4u);
}

TEST_F(SyslogRingTest, TextThatCannotStandInForTheRecordsIsNotScanned) {
  auto untouched = [](const char* what) {
    KernelLogScanner scanner;
    EXPECT_FALSE(ScanSyslogRing(scanner, kFake, 0)) << what;
    KernelLogFacts f = scanner.Finish();
    EXPECT_EQ(f.records_read, 0u) << what;
    EXPECT_EQ(f.bytes_scanned, 0u) << what;
    EXPECT_TRUE(f.events.empty()) << what;
  };
  // printk.time off: no stamps (the records have theirs whatever the setting).
  g_text =
      "<6>Linux version 6.8.0\n<4>NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has "
      "fallen off the bus.\n";
  untouched("no stamps");
  // The text filled the buffer: its oldest lines may have been cut.
  g_text = std::string(1 << 20, 'x');
  g_text.replace(0, 20, "<6>[    1.000000] a\n");
  untouched("full buffer");
  // An empty ring, a ring the kernel says is empty or absurdly large.
  g_text.clear();
  untouched("empty text");
  g_text = kRing;
  g_ring_size = 0;
  untouched("no ring");
  g_ring_size = 17 << 20;
  untouched("ring over 16 MiB");
  g_ring_size = 128 << 10;
  // The text does not start at the oldest record: `dmesg -C` cleared it for syslog(2) (the
  // records still hold the Xid before it), or the text lost its oldest lines.
  g_text = std::string(kRing).substr(std::string(kRing).find('\n') + 1);
  untouched("text after a dmesg -C");
  // syslog(2) refused (no CAP_SYSLOG under dmesg_restrict, a seccomp filter).
  KernelLogScanner refused;
  EXPECT_FALSE(ScanSyslogRing(refused, SyslogRingApi{&FailingSize, &FakeReadAll}, 0));
  g_ring_size = 128 << 10;
  EXPECT_FALSE(ScanSyslogRing(refused, SyslogRingApi{&FakeSize, &FailingRead}, 0));
  EXPECT_EQ(refused.Finish().records_read, 0u);
}

// The live host: the same ring through syslog(2) and record by record gives the same boots and
// events, and no fewer lines than records (records arriving in between only add).
TEST(SyslogRingLiveTest, TheLiveRingReadsTheSameBothWays) {
  int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) GTEST_SKIP() << "/dev/kmsg: " << std::strerror(errno);
  KernelLogScanner by_records;
  std::optional<uint64_t> last_seq;
  Status st = ReadKmsgRecords(fd, "/dev/kmsg", by_records, LiveReadLimits{}, last_seq);
  ::close(fd);
  ASSERT_TRUE(st.ok()) << st.ToString();
  // The oldest record's stamp, as ReadKmsg takes it.
  fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  char rec[1024];
  ssize_t n = ::read(fd, rec, sizeof(rec));
  ::close(fd);
  ASSERT_GT(n, 0);
  LineFormatState state;
  std::string_view line(rec, static_cast<size_t>(n));
  ParsedLine first = ParseLinePrefix(line.substr(0, line.find('\n')), state);
  ASSERT_TRUE(first.time.boot_us);
  KernelLogScanner by_text;
  if (!ScanSyslogRing(by_text, KernelSyslogRing(), *first.time.boot_us)) {
    GTEST_SKIP() << "syslog(2) cannot stand in here (refused, printk.time off, or dmesg -C)";
  }
  KernelLogScanner wrong_first;
  EXPECT_FALSE(ScanSyslogRing(wrong_first, KernelSyslogRing(), *first.time.boot_us + 1));
  KernelLogFacts a = by_records.Finish(), b = by_text.Finish();
  EXPECT_GT(b.records_read, 0u);
  EXPECT_GE(b.records_read, a.records_read);
  EXPECT_EQ(b.boots_seen, a.boots_seen);
  EXPECT_EQ(b.garbled_lines, a.garbled_lines);
  std::set<std::pair<KernelEventKind, std::string>> ea, eb;
  for (const KernelEvent& e : a.events) ea.insert({e.kind, e.subject});
  for (const KernelEvent& e : b.events) eb.insert({e.kind, e.subject});
  EXPECT_EQ(ea, eb);
}

}  // namespace
}  // namespace gpudoctor
