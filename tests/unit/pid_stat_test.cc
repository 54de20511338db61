#include "parsers/pid_stat.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

TEST(PidStatTest, ParsesStateAfterLastParen) {
  auto st = ParsePidStat("4242 (nvidia-smi) D 4100 4242 4242 0 -1 4194560 1234 0 0 0\n");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->pid, 4242);
  EXPECT_EQ(st->comm, "nvidia-smi");
  EXPECT_EQ(st->state, 'D');
  EXPECT_EQ(st->ppid, 4100);
}

TEST(PidStatTest, FlagsTellKernelThreads) {
  // kworker: PF_KTHREAD | PF_WQ_WORKER | PF_NOFREEZE = 0x208060; a user process: 4194560.
  auto kw = ParsePidStat("117 (kworker/3:1-events) I 2 0 0 0 -1 2129984 0 0 0 0 0 5 0 0\n");
  ASSERT_TRUE(kw.ok()) << kw.status().ToString();
  EXPECT_EQ(kw->flags, 2129984u);
  EXPECT_TRUE(kw->IsKernelThread());
  auto user = ParsePidStat("4242 (python3) S 4100 4242 4242 0 -1 4194560 1234 0 0 0\n");
  ASSERT_TRUE(user.ok());
  EXPECT_EQ(user->flags, 4194560u);
  EXPECT_FALSE(user->IsKernelThread());
  auto shrt = ParsePidStat("5 (x) S 1 5 5\n");  // no field 9: not taken for a kernel thread
  ASSERT_TRUE(shrt.ok());
  EXPECT_FALSE(shrt->flags);
  EXPECT_FALSE(shrt->IsKernelThread());
}

TEST(PidStatTest, CommWithSpacesAndParens) {
  auto st = ParsePidStat("901 (tmux: server) S) S 1 901 901 0\n");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->comm, "tmux: server) S");
  EXPECT_EQ(st->state, 'S');
  EXPECT_EQ(st->ppid, 1);
  auto sd = ParsePidStat("900 ((sd-pam)) S 899 900 900\n");
  ASSERT_TRUE(sd.ok());
  EXPECT_EQ(sd->comm, "(sd-pam)");
  auto z = ParsePidStat("77 () Z 1 2 3\n");
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(z->comm, "");
  EXPECT_EQ(z->state, 'Z');
}

TEST(PidStatTest, AllKernelStatesAccepted) {
  for (char c : std::string("RSDZTtXxKWPI")) {
    std::string line = "10 (a) " + std::string(1, c) + " 1 0\n";
    auto st = ParsePidStat(line);
    ASSERT_TRUE(st.ok()) << line;
    EXPECT_EQ(st->state, c);
  }
}

TEST(PidStatTest, RejectsGarbledAndTruncated) {
  EXPECT_FALSE(ParsePidStat("").ok());
  EXPECT_FALSE(ParsePidStat("4242 nvidia-smi D 1").ok());      // no parens
  EXPECT_FALSE(ParsePidStat("4242 (nvidia-smi").ok());         // truncated in comm
  EXPECT_FALSE(ParsePidStat("4242 (nvidia-smi)").ok());        // nothing after comm
  EXPECT_FALSE(ParsePidStat("4242 (nvidia-smi) D").ok());      // no ppid
  EXPECT_FALSE(ParsePidStat("4242 (nvidia-smi) Q 1 2").ok());  // unknown state
  EXPECT_FALSE(ParsePidStat("4242 (nvidia-smi) DD 1 2").ok());
  EXPECT_FALSE(ParsePidStat("abc (x) S 1 2").ok());
  EXPECT_FALSE(ParsePidStat("0 (x) S 1 2").ok());
  EXPECT_FALSE(ParsePidStat("-5 (x) S 1 2").ok());
  EXPECT_FALSE(ParsePidStat("99999999999 (x) S 1 2").ok());  // absurd pid
  EXPECT_FALSE(ParsePidStat("5 (x) S -1 2").ok());
  EXPECT_FALSE(ParsePidStat(") 5 (x S 1").ok());  // ')' before '('
}

TEST(PidStatTest, CommIsSanitized) {
  auto st = ParsePidStat(std::string("5 (a\xff\x01z) S 1 2", 16));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->comm, "a??z");
}

TEST(PidStatTest, SchedExecStart) {
  EXPECT_DOUBLE_EQ(*ParseSchedExecStartMs("nvidia-smi (4242, #threads: 1)\n-----\n"
                                          "se.exec_start    :     863700500.000000\n"
                                          "se.vruntime      :     1234.5\n"),
                   863700500.0);
  EXPECT_FALSE(ParseSchedExecStartMs("se.vruntime : 1.0\n"));
  EXPECT_FALSE(ParseSchedExecStartMs("se.exec_start : abc\n"));
  EXPECT_FALSE(ParseSchedExecStartMs("se.exec_start : -3\n"));
  EXPECT_FALSE(ParseSchedExecStartMs("se.exec_start\n"));
  EXPECT_FALSE(ParseSchedExecStartMs(""));
}

TEST(PidStatTest, ProcessorIsField39) {
  // A real line (kernel 6.1) of a thread that last ran on CPU 7; a space in the comm.
  auto st = ParsePidStat(
      "4305 (pt autograd) D 4300 4300 4300 0 -1 4194624 120 0 0 0 8 3 0 0 20 0 12 0 5000 "
      "123456789 2345 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 7 0 0 0 0 0 0 0 0 0 0 0 0 "
      "0\n");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->utime_ticks, 8u);
  EXPECT_EQ(st->stime_ticks, 3u);
  EXPECT_EQ(st->start_ticks, 5000u);  // field 22
  EXPECT_EQ(st->processor, 7);
  EXPECT_FALSE(ParsePidStat("4242 (nvidia-smi) D 4100 4242 4242 0 -1 4194560 1234 0 0 0\n")
                   ->processor);  // short line: absent, not CPU 0
  EXPECT_FALSE(
      ParsePidStat(
          "1 (a) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -3 0\n")
          ->processor);  // negative CPU: absent
}

TEST(PidStatTest, NumThreadsIsField20) {
  auto st = ParsePidStat(
      "4305 (pt autograd) D 4300 4300 4300 0 -1 4194624 120 0 0 0 8 3 0 0 20 0 12 0 5000\n");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->num_threads, 12);
  EXPECT_FALSE(ParsePidStat("4242 (nvidia-smi) D 4100 4242 4242 0 -1 4194560 1234 0 0 0\n")
                   ->num_threads);  // short line: absent, not 1
  EXPECT_FALSE(ParsePidStat("1 (a) S 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")
                   ->num_threads);  // 0 is no thread count
}

TEST(PidStatTest, SchedInfoCounters) {
  SchedInfo info = ParseSchedInfo(
      "nvidia-smi (4242, #threads: 1)\n"
      "-------------------------------------------------------------------\n"
      "se.exec_start                                :     863700500.125000\n"
      "se.vruntime                                  :          1234.567890\n"
      "se.sum_exec_runtime                          :           456.789012\n"
      "nr_switches                                  :                 2345\n"
      "nr_voluntary_switches                        :                 2300\n");
  EXPECT_DOUBLE_EQ(*info.exec_start_ms, 863700500.125);
  EXPECT_DOUBLE_EQ(*info.sum_exec_runtime_ms, 456.789012);
  EXPECT_EQ(info.nr_switches, 2345u);
  SchedInfo bad =
      ParseSchedInfo("se.exec_start : nan\nse.sum_exec_runtime : -1\nnr_switches : 12x\n");
  EXPECT_FALSE(bad.exec_start_ms);
  EXPECT_FALSE(bad.sum_exec_runtime_ms);
  EXPECT_FALSE(bad.nr_switches);
  SchedInfo none = ParseSchedInfo("");
  EXPECT_FALSE(none.exec_start_ms || none.sum_exec_runtime_ms || none.nr_switches);
}

TEST(PidStatTest, Schedstat) {
  auto ss = ParseSchedstat("456789012 1234567 2345\n");
  ASSERT_TRUE(ss);
  EXPECT_EQ(ss->run_ns, 456789012u);
  EXPECT_EQ(ss->wait_ns, 1234567u);
  EXPECT_EQ(ss->timeslices, 2345u);
  EXPECT_FALSE(ParseSchedstat("0 0 0\n"));  // schedstats off
  EXPECT_FALSE(ParseSchedstat("1 2\n"));
  EXPECT_FALSE(ParseSchedstat("1 2 3 4\n"));
  EXPECT_FALSE(ParseSchedstat("1 -2 3\n"));
  EXPECT_FALSE(ParseSchedstat(""));
}

TEST(PidStatTest, UptimeAndWchan) {
  EXPECT_DOUBLE_EQ(*ParseUptimeS("864000.50 6543210.12\n"), 864000.5);
  EXPECT_FALSE(ParseUptimeS(""));
  EXPECT_FALSE(ParseUptimeS("abc 1\n"));
  EXPECT_FALSE(ParseUptimeS("-1 1\n"));
  EXPECT_EQ(ParseWchan("os_acquire_rwlock_read"), "os_acquire_rwlock_read");
  EXPECT_EQ(ParseWchan("0"), "");
  EXPECT_EQ(ParseWchan(""), "");
  EXPECT_EQ(ParseWchan("  io_schedule\n"), "io_schedule");
}

}  // namespace
}  // namespace gpudoctor
