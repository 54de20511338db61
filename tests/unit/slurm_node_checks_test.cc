// Issue 20 item 3: the Slurm drain record (sched/slurm_record.h), the dry run NHC uses, and the
// NHC-style node checks as config: [node] required_mounts (host.mount.missing) and
// [network] ib_min_rate_gbps (net.ib.rate), on literal mount tables and a sysfs fixture.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>

#include "config/config.h"
#include "core/root_fs.h"
#include "net/infiniband_sysfs.h"
#include "parsers/mounts.h"
#include "probes/disk_probe.h"
#include "rules/engine.h"
#include "rules/make_finding.h"
#include "rules/thresholds.h"
#include "sched/slurm.h"
#include "sched/slurm_record.h"
#include "test_util.h"

namespace gpudoctor {
namespace {

using ::testing::HasSubstr;

std::vector<const Finding*> WithId(const std::vector<Finding>& all, const std::string& id) {
  std::vector<const Finding*> out;
  for (const auto& f : all) {
    if (f.id == id) out.push_back(&f);
  }
  return out;
}

TEST(SlurmRecordTest, RoundTripsAndReplacesAtomically) {
  testing::TempDir dir;
  std::string state = dir.path() + "/state";  // created on the first write
  SlurmDrainRecord r{"gd-node1", "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0", 1767225600};
  ASSERT_TRUE(WriteSlurmDrainRecord(state, r).ok());
  std::string path = SlurmDrainRecordPath(state, "gd-node1");
  EXPECT_EQ(path, state + "/slurm-drain-gd-node1.txt");
  EXPECT_EQ(testing::ReadFileOrDie(path),
            "gpudoctor-slurm-drain 1\nnode=gd-node1\nreason=gpudoctor: gpu.ecc.dbe GPU1 "
            "0000:2a:00.0\ndrained_at=1767225600\n");
  auto back = ReadSlurmDrainRecord(state, "gd-node1");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->node, r.node);
  EXPECT_EQ(back->reason, r.reason);
  EXPECT_EQ(back->drained_at_unix_s, r.drained_at_unix_s);

  // A leftover temporary from a crash is replaced, never appended to; the rename replaces.
  dir.Write("state/slurm-drain-gd-node1.txt.tmp", "half a rec");
  r.reason = "gpudoctor: host.mount.missing /scratch";
  ASSERT_TRUE(WriteSlurmDrainRecord(state, r).ok());
  EXPECT_EQ(ReadSlurmDrainRecord(state, "gd-node1")->reason, r.reason);
  struct stat st {};
  EXPECT_NE(::stat((path + ".tmp").c_str(), &st), 0);  // no temporary left behind

  ASSERT_TRUE(RemoveSlurmDrainRecord(state, "gd-node1").ok());
  auto gone = ReadSlurmDrainRecord(state, "gd-node1");
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(RemoveSlurmDrainRecord(state, "gd-node1").ok());  // missing is fine
}

TEST(SlurmRecordTest, NodeNamesNeverEscapeTheStateDirectory) {
  EXPECT_EQ(SlurmDrainRecordPath("/s", "../../etc/passwd"), "/s/slurm-drain-.._.._etc_passwd.txt");
  EXPECT_EQ(SlurmDrainRecordPath("/s", ".."), "/s/slurm-drain-_...txt");
  EXPECT_EQ(SlurmDrainRecordPath("/s", "a b"), "/s/slurm-drain-a_b.txt");
}

TEST(SlurmRecordTest, CorruptRecordsAreErrorsThatSayWhy) {
  const std::string good = "gpudoctor-slurm-drain 1\nnode=n1\nreason=gpudoctor: x\ndrained_at=5\n";
  ASSERT_TRUE(ParseSlurmDrainRecord(good).ok());
  struct Case {
    std::string text, why;
  } cases[] = {
      {"", "empty"},
      {"gpudoctor-slurm-drain 2\nnode=n1\n", "line 1: expected"},
      {good.substr(0, good.size() - 7), "no newline at the end"},
      {"gpudoctor-slurm-drain 1\nnode=n1\nreason=gpudoctor: x\n", "no drained_at"},
      {"gpudoctor-slurm-drain 1\nnode=n1\ndrained_at=5\n", "no reason"},
      {"gpudoctor-slurm-drain 1\nreason=r\ndrained_at=5\n", "no node"},
      {good + "node=n2\n", "line 5: 'node' given twice"},
      {good + "colour=red\n", "line 5: unknown field 'colour'"},
      {"gpudoctor-slurm-drain 1\nnode=n1\nreason=r\ndrained_at=yesterday\n", "not unix seconds"},
      {"gpudoctor-slurm-drain 1\nnode\n", "line 2: expected KEY=VALUE"},
      {good + std::string(5000, 'x'), "larger than 4096"},
  };
  for (const auto& c : cases) {
    auto r = ParseSlurmDrainRecord(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kParseError);
    EXPECT_THAT(r.status().message(), HasSubstr(c.why)) << c.text;
  }
  // Read from disk, the error names the file.
  testing::TempDir dir;
  dir.Write("slurm-drain-n1.txt", "gpudoctor-slurm-drain 1\nnode=n1\nrea");
  auto r = ReadSlurmDrainRecord(dir.path(), "n1");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr(dir.path() + "/slurm-drain-n1.txt: "));
}

TEST(SlurmRecordTest, UnwritableStateDirectoryIsAnErrorNamingIt) {
  testing::TempDir dir;
  dir.Write("file", "x");
  Status s = WriteSlurmDrainRecord(dir.path() + "/file/state", {"n1", "gpudoctor: x", 1});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(dir.path() + "/file/state"));
}

TEST(SlurmDryRunTest, DecidesByActionWithoutScontrol) {
  testing::TempDir dir;
  SlurmOptions o;
  o.node = "n1";
  o.scontrol = "/nonexistent/scontrol";  // any call would fail loudly
  o.state_dir = dir.path();
  o.dry_run = true;
  Finding dbe = MakeFinding("gpu.ecc.dbe", Severity::kCrit, "");
  dbe.gpu = GpuRef{1, "GPU-x", "0000:2a:00.0", "123", "H100"};
  SlurmOutcome sick = RunSlurmMode({dbe}, "", o);
  EXPECT_EQ(sick.exit_code, 2);
  EXPECT_EQ(sick.action, "would_drain");
  EXPECT_EQ(sick.stdout_line, "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0");
  EXPECT_EQ(sick.message, "");
  // A busy CPU is the job's business: crit or not, its action (watch) keeps the node in.
  SlurmOutcome busy = RunSlurmMode({MakeFinding("host.cpu.saturated", Severity::kCrit, "")}, "", o);
  EXPECT_EQ(busy.exit_code, 0);
  EXPECT_EQ(busy.stdout_line, "");
  SlurmOutcome broken = RunSlurmMode({}, "NVML missing", o);
  EXPECT_EQ(broken.exit_code, 3);
  EXPECT_EQ(broken.stdout_line, "");
  EXPECT_TRUE(RootFs::ListDir(dir.path())->empty());  // a dry run records nothing
}

// A stand-in scontrol that keeps one node's state and reason in files beside it (the real
// slurmctld is in tests/e2e/slurm_e2e_test.cc; this runs without root).
class FakeScontrol {
 public:
  FakeScontrol() {
    dir_.Write("state", "IDLE\n");
    dir_.Write("reason", "(null)\n");
    dir_.Write("scontrol",
               "#!/bin/sh\nD=\"$(dirname \"$0\")\"\n"
               "case \"$1\" in\n"
               "show) echo \"NodeName=n1 State=$(cat \"$D/state\") Reason=$(cat \"$D/reason\") "
               "[root@2026-01-01T00:00:00]\";;\n"
               "update) shift; for a in \"$@\"; do case \"$a\" in\n"
               "  state=drain) echo IDLE+DRAIN > \"$D/state\";;\n"
               "  state=resume) echo IDLE > \"$D/state\"; echo '(null)' > \"$D/reason\";;\n"
               "  reason=*) printf '%s\\n' \"${a#reason=}\" > \"$D/reason\";;\n"
               "  esac; done;;\n"
               "*) exit 9;;\n"
               "esac\n");
    ::chmod((dir_.path() + "/scontrol").c_str(), 0755);
  }
  SlurmOptions Options() const {
    SlurmOptions o;
    o.node = "n1";
    o.scontrol = dir_.path() + "/scontrol";
    o.state_dir = dir_.path() + "/state.d";
    o.now_unix_s = 1767225600;
    return o;
  }
  void AdminDrain(const std::string& reason) const {
    dir_.Write("state", "IDLE+DRAIN\n");
    dir_.Write("reason", reason + "\n");
  }
  void AdminResume() const {
    dir_.Write("state", "IDLE\n");
    dir_.Write("reason", "(null)\n");
  }
  bool Drained() const {
    return testing::ReadFileOrDie(dir_.path() + "/state").find("DRAIN") != std::string::npos;
  }
  const std::string& path() const { return dir_.path(); }

 private:
  testing::TempDir dir_;
};

Finding Dbe() {
  Finding f = MakeFinding("gpu.ecc.dbe", Severity::kCrit, "");
  f.gpu = GpuRef{1, "GPU-x", "0000:2a:00.0", "123", "H100"};
  return f;
}

TEST(SlurmRecordModeTest, ResumesOnlyTheDrainOnRecord) {
  FakeScontrol slurm;
  SlurmOptions o = slurm.Options();
  SlurmOutcome drain = RunSlurmMode({Dbe()}, "", o);
  EXPECT_EQ(drain.action, "drain") << drain.message;
  EXPECT_EQ(drain.exit_code, 2);
  EXPECT_TRUE(slurm.Drained());
  auto rec = ReadSlurmDrainRecord(o.state_dir, "n1");
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  EXPECT_EQ(rec->reason, "gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0");
  EXPECT_EQ(rec->drained_at_unix_s, 1767225600);
  EXPECT_EQ(RunSlurmMode({Dbe()}, "", o).message, "node n1 stays drained: " + rec->reason);

  // Healthy, but the record is corrupt: not ours, left drained, said why.
  const std::string path = SlurmDrainRecordPath(o.state_dir, "n1");
  std::string good = testing::ReadFileOrDie(path);
  testing::TempDir scratch;
  ASSERT_EQ(std::rename(path.c_str(), (scratch.path() + "/keep").c_str()), 0);
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs("gpudoctor-slurm-drain 1\nnode=n1\nreason=gpudoc", f);
    std::fclose(f);
  }
  SlurmOutcome corrupt = RunSlurmMode({}, "", o);
  EXPECT_EQ(corrupt.action, "keep_foreign_drain");
  EXPECT_EQ(corrupt.exit_code, 0);
  EXPECT_THAT(corrupt.message,
              HasSubstr("drain record unusable: " + path + ": line 3: no newline"));
  EXPECT_TRUE(slurm.Drained());
  ASSERT_EQ(std::rename((scratch.path() + "/keep").c_str(), path.c_str()), 0);

  SlurmOutcome resume = RunSlurmMode({}, "", o);
  EXPECT_EQ(resume.action, "resume") << resume.message;
  EXPECT_FALSE(slurm.Drained());
  EXPECT_EQ(ReadSlurmDrainRecord(o.state_dir, "n1").status().code(), StatusCode::kNotFound);
}

TEST(SlurmRecordModeTest, AdminDrainWithOurWordsIsTheAdmins) {
  FakeScontrol slurm;
  SlurmOptions o = slurm.Options();
  slurm.AdminDrain("gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0");
  SlurmOutcome healthy = RunSlurmMode({}, "", o);
  EXPECT_EQ(healthy.action, "keep_foreign_drain");
  EXPECT_THAT(healthy.message,
              HasSubstr("which gpudoctor did not set (no drain record in " + o.state_dir + ")"));
  EXPECT_TRUE(slurm.Drained());
  SlurmOutcome sick = RunSlurmMode({Dbe()}, "", o);
  EXPECT_EQ(sick.action, "keep_foreign_drain");
  EXPECT_EQ(sick.exit_code, 2);
  EXPECT_EQ(ReadSlurmDrainRecord(o.state_dir, "n1").status().code(), StatusCode::kNotFound);

  // A record for another reason is no better.
  ASSERT_TRUE(WriteSlurmDrainRecord(o.state_dir, {"n1", "gpudoctor: gpu.lost GPU0", 1}).ok());
  SlurmOutcome other = RunSlurmMode({}, "", o);
  EXPECT_EQ(other.action, "keep_foreign_drain");
  EXPECT_THAT(other.message,
              HasSubstr("our record says we drained it with 'gpudoctor: gpu.lost GPU0'"));
  EXPECT_TRUE(slurm.Drained());
}

TEST(SlurmRecordModeTest, StaleRecordIsForgottenAndAFailedRecordIsSaid) {
  FakeScontrol slurm;
  SlurmOptions o = slurm.Options();
  ASSERT_EQ(RunSlurmMode({Dbe()}, "", o).action, "drain");
  slurm.AdminResume();
  SlurmOutcome healthy = RunSlurmMode({}, "", o);
  EXPECT_EQ(healthy.action, "none");
  EXPECT_EQ(healthy.message, "");
  EXPECT_EQ(ReadSlurmDrainRecord(o.state_dir, "n1").status().code(), StatusCode::kNotFound);
  slurm.AdminDrain("gpudoctor: gpu.ecc.dbe GPU1 0000:2a:00.0");
  EXPECT_EQ(RunSlurmMode({}, "", o).action, "keep_foreign_drain");
  slurm.AdminResume();

  testing::TempDir dir;
  dir.Write("file", "x");
  o.state_dir = dir.path() + "/file/state";
  SlurmOutcome drain = RunSlurmMode({Dbe()}, "", o);
  EXPECT_EQ(drain.action, "drain");
  EXPECT_TRUE(slurm.Drained());
  EXPECT_THAT(drain.message, HasSubstr("could not record the drain"));
  EXPECT_THAT(drain.message, HasSubstr("will not be resumed automatically"));
  EXPECT_EQ(RunSlurmMode({}, "", o).action, "keep_foreign_drain");
  EXPECT_TRUE(slurm.Drained());
}

TEST(RequiredMountsTest, MissingMountTakesTheNodeOut) {
  auto all = ParseMounts(
      "/dev/nvme0n1p2 / ext4 rw 0 0\n"
      "storage:/export/home /home nfs4 rw 0 0\n"
      "/dev/md0 /scratch xfs rw 0 0\n"
      "tmpfs /scratch tmpfs rw 0 0\n"  // the visible one is the last
      "proc /proc proc rw 0 0\n");
  ASSERT_TRUE(all.ok());
  auto req = FindRequiredMounts(*all, {"/scratch", "/home", "/proc", "/data"});
  ASSERT_EQ(req.size(), 4u);
  EXPECT_TRUE(req[0].mounted);
  EXPECT_EQ(req[0].fs_type, "tmpfs");
  EXPECT_TRUE(req[1].mounted);
  EXPECT_EQ(req[1].device, "storage:/export/home");
  EXPECT_TRUE(req[2].mounted);  // pseudo filesystems count as mounted
  EXPECT_FALSE(req[3].mounted);

  Snapshot snap;
  snap.host.required_mounts = req;
  auto findings = EvaluateRules(snap, Thresholds());
  auto missing = WithId(findings, "host.mount.missing");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->subject, "/data");
  EXPECT_EQ(missing[0]->severity, Severity::kCrit);
  EXPECT_EQ(missing[0]->summary, "/data is not mounted ([node] required_mounts)");
  EXPECT_TRUE(TakesNodeOutOfService(*missing[0]));
  EXPECT_EQ(SlurmReason(findings), "gpudoctor: host.mount.missing /data");
}

TEST(IbRateTest, ActiveInfinibandPortBelowTheMinimumTakesTheNodeOut) {
  RootFs fs("/nonexistent-proc", testing::FixturePath("net/sysfs_ib_rate"), "/nonexistent-root");
  auto a = ReadIbPorts(fs);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  Snapshot snap;
  snap.network.ib_ports = IbPortFactsBetween(*a, *a, 1.0);
  ASSERT_EQ(snap.network.ib_ports->size(), 4u);

  // Not configured: no rate finding (the DOWN/Polling port is net.ib.port's, a warning).
  auto off = EvaluateRules(snap, Thresholds());
  EXPECT_TRUE(WithId(off, "net.ib.rate").empty());
  EXPECT_EQ(SlurmReason(off), "gpudoctor:");  // nothing that takes the node out

  Settings s;
  auto loaded = ApplyConfigText("[network]\nib_min_rate_gbps = 200\n", "site.toml", s);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  auto on = EvaluateRules(snap, Thresholds(s.thresholds));
  auto slow = WithId(on, "net.ib.rate");
  ASSERT_EQ(slow.size(), 1u);  // not the 400 Gb/s port, not RoCE, not the DOWN port
  EXPECT_EQ(slow[0]->subject, "mlx5_1/1");
  EXPECT_EQ(slow[0]->summary,
            "InfiniBand port mlx5_1/1 runs at 100 Gb/s, below the 200 Gb/s expected");
  EXPECT_EQ(slow[0]->action, Action::kInspectHardware);
  EXPECT_TRUE(TakesNodeOutOfService(*slow[0]));
  EXPECT_EQ(SlurmReason(on), "gpudoctor: net.ib.rate mlx5_1/1");
}

TEST(NodeCheckConfigTest, KeysAreValidatedWithTheKeyNamed) {
  Settings s;
  auto ok =
      ApplyConfigText("[node]\nrequired_mounts = [\"/scratch/\", \"/home\"]\n", "site.toml", s);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->warnings.empty());
  EXPECT_EQ(s.required_mounts, (std::vector<std::string>{"/scratch", "/home"}));

  for (const char* bad : {"\"scratch\"", "\"/a/../b\"", "\"\"", "\"/a b\"", "\"/x//y\""}) {
    Settings b;
    auto r =
        ApplyConfigText(std::string("[node]\nrequired_mounts = [") + bad + "]\n", "site.toml", b);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r.status().message(), HasSubstr("site.toml:2"));
    EXPECT_THAT(r.status().message(), HasSubstr("node.required_mounts"));
    EXPECT_THAT(r.status().message(), HasSubstr("absolute mount points"));
  }
  Settings b;
  auto r = ApplyConfigText("[network]\nib_min_rate_gbps = -5\n", "site.toml", b);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("network.ib_min_rate_gbps"));
  EXPECT_THAT(r.status().message(), HasSubstr("Gb/s"));
  auto text = ApplyConfigText("[network]\nib_min_rate_gbps = \"fast\"\n", "site.toml", b);
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(text.status().message(), HasSubstr("network.ib_min_rate_gbps"));
  // The commented default lists both keys.
  EXPECT_THAT(DefaultConfigText(), HasSubstr("required_mounts"));
  EXPECT_THAT(DefaultConfigText(), HasSubstr("ib_min_rate_gbps"));
}

}  // namespace
}  // namespace gpudoctor
