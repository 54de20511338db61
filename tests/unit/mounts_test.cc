#include "parsers/mounts.h"

#include <gtest/gtest.h>

namespace gpudoctor {
namespace {

MountEntry M(std::string device, std::string point, std::string type, bool ro = false) {
  return MountEntry{std::move(device), std::move(point), std::move(type), ro ? "ro" : "rw", ro};
}

std::vector<std::string> Points(const std::vector<MountEntry>& v) {
  std::vector<std::string> out;
  for (const auto& m : v) out.push_back(m.mount_point);
  return out;
}

TEST(MountsTest, ParsesLinesAndOctalEscapes) {
  int skipped = -1;
  auto m = ParseMounts(
      "/dev/nvme0n1p2 / ext4 rw,relatime 0 0\n"
      "/dev/sdb1 /mnt/scratch\\040space ext4 ro,relatime 0 0\n"
      "/dev/sdc1 /mnt/tab\\011and\\012nl\\134back xfs rw 0 0\n",
      &skipped);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ(skipped, 0);
  EXPECT_EQ((*m)[0].device, "/dev/nvme0n1p2");
  EXPECT_EQ((*m)[0].fs_type, "ext4");
  EXPECT_FALSE((*m)[0].read_only);
  EXPECT_EQ((*m)[1].mount_point, "/mnt/scratch space");
  EXPECT_TRUE((*m)[1].read_only);
  EXPECT_EQ((*m)[2].mount_point, "/mnt/tab\tand\nnl\\back");
}

// Issue 8 item 3: the disk probe reads PID 1's mountinfo (node_exporter's order).
TEST(MountsTest, ParsesMountInfo) {
  const char* text =
      "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n"
      "30 22 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,size=65536k\n"
      "41 22 0:40 / /mnt/my\\040data rw,relatime shared:20 master:3 - nfs4 srv:/export "
      "rw,vers=4.2\n"
      "42 22 259:3 / /ro ro,relatime - xfs /dev/nvme1n1 ro\n"
      "43 22 259:4 / /superro rw,relatime - xfs /dev/nvme2n1 ro,attr2\n"
      "garbage line without separator\n"
      "44 22 0:5 / /x rw - \n";
  int skipped = 0;
  auto r = ParseMountInfo(text, &skipped);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ(skipped, 2);
  EXPECT_EQ((*r)[0].mount_point, "/");
  EXPECT_EQ((*r)[0].device, "/dev/nvme0n1p2");
  EXPECT_EQ((*r)[0].fs_type, "ext4");
  EXPECT_FALSE((*r)[0].read_only);
  EXPECT_EQ((*r)[2].mount_point, "/mnt/my data");
  EXPECT_EQ((*r)[2].fs_type, "nfs4");
  EXPECT_EQ((*r)[2].device, "srv:/export");
  EXPECT_TRUE((*r)[3].read_only);
  EXPECT_TRUE((*r)[4].read_only);  // read-only superblock
  EXPECT_FALSE(ParseMountInfo("nothing\n").ok());
}

TEST(MountsTest, UnescapeLeavesBrokenEscapesAlone) {
  EXPECT_EQ(UnescapeMountField("a\\04"), "a\\04");      // truncated
  EXPECT_EQ(UnescapeMountField("a\\9xy"), "a\\9xy");    // not octal
  EXPECT_EQ(UnescapeMountField("a\\000b"), "a\\000b");  // NUL is never produced
  EXPECT_EQ(UnescapeMountField("\\"), "\\");
  EXPECT_EQ(UnescapeMountField("\\040\\040"), "  ");
}

TEST(MountsTest, GarbledLinesAreSkippedNotFatal) {
  int skipped = 0;
  auto m = ParseMounts(
      "garbage\n"
      "/dev/sda1 relative/path ext4 rw 0 0\n"
      "/dev/sda2 /ok ext4 rw 0 0\n"
      "/dev/sda3 /trunc",
      &skipped);
  ASSERT_TRUE(m.ok());
  ASSERT_EQ(m->size(), 1u);
  EXPECT_EQ((*m)[0].mount_point, "/ok");
  EXPECT_EQ(skipped, 3);
  EXPECT_FALSE(ParseMounts("").ok());
  EXPECT_FALSE(ParseMounts("only garbage\n\n").ok());
}

TEST(MountsTest, WhichMountsAreChecked) {
  EXPECT_TRUE(MountIsChecked(M("/dev/nvme0n1p2", "/", "ext4")));
  EXPECT_TRUE(MountIsChecked(M("nas:/export", "/mnt/datasets", "nfs4")));
  EXPECT_TRUE(MountIsChecked(M("tmpfs", "/dev/shm", "tmpfs")));
  EXPECT_TRUE(MountIsChecked(M("tmpfs", "/tmp", "tmpfs")));
  EXPECT_TRUE(MountIsChecked(M("overlay", "/", "overlay")));              // inside a container
  EXPECT_TRUE(MountIsChecked(M("/dev/sdd1", "/var/lib/docker", "xfs")));  // docker's own disk
  EXPECT_TRUE(MountIsChecked(M("sshfs#x", "/mnt/remote", "fuse.sshfs")));

  EXPECT_FALSE(MountIsChecked(M("proc", "/proc", "proc")));
  EXPECT_FALSE(MountIsChecked(M("sysfs", "/sys", "sysfs")));
  EXPECT_FALSE(MountIsChecked(M("cgroup2", "/sys/fs/cgroup", "cgroup2")));
  EXPECT_FALSE(MountIsChecked(M("tmpfs", "/run", "tmpfs")));
  EXPECT_FALSE(MountIsChecked(M("tmpfs", "/run/user/1000", "tmpfs")));
  EXPECT_FALSE(MountIsChecked(M("tmpfs", "/sys/fs/cgroup", "tmpfs")));
  EXPECT_FALSE(MountIsChecked(M("tmpfs", "/dev", "tmpfs")));
  EXPECT_FALSE(MountIsChecked(M("/dev/loop3", "/snap/core20/1974", "squashfs", true)));
  EXPECT_FALSE(MountIsChecked(M("overlay", "/var/lib/docker/overlay2/x/merged", "overlay")));
  EXPECT_FALSE(MountIsChecked(M("overlay", "/mnt/other", "overlay")));
  EXPECT_FALSE(MountIsChecked(M("tmpfs", "/var/lib/kubelet/pods/u/volumes/s", "tmpfs")));
  EXPECT_FALSE(MountIsChecked(M("lxcfs", "/var/lib/lxcfs", "fuse.lxcfs")));
  EXPECT_TRUE(MountIsChecked(M("tmpfs", "/running", "tmpfs")));  // not below /run
}

TEST(MountsTest, IdentityOnlyForRealDevices) {
  EXPECT_EQ(MountIdentity(M("/dev/md0", "/data", "xfs")), "/dev/md0");
  EXPECT_EQ(MountIdentity(M("nas01:/export/a", "/a", "nfs4")), "nas01:/export/a");
  EXPECT_EQ(MountIdentity(M("//srv/share", "/s", "cifs")), "//srv/share");
  EXPECT_EQ(MountIdentity(M("tmpfs", "/dev/shm", "tmpfs")), "");
  EXPECT_EQ(MountIdentity(M("overlay", "/", "overlay")), "");
  EXPECT_EQ(MountIdentity(M("none", "/x", "ext4")), "");
}

TEST(MountsTest, SelectDedupesBindMountsAndKeepsVisibleMount) {
  std::vector<MountEntry> all = {
      M("/dev/md0", "/data/sub", "xfs"),  // bind mount seen before the real one
      M("/dev/nvme0n1p2", "/", "ext4"),
      M("/dev/md0", "/data", "xfs"),
      M("tmpfs", "/dev/shm", "tmpfs"),
      M("tmpfs", "/tmp", "tmpfs"),  // two tmpfs are two filesystems
      M("/dev/nvme0n1p2", "/srv/bind", "ext4"),
      M("proc", "/proc", "proc"),
      M("/dev/sdb1", "/mnt/x", "ext4"),
      M("/dev/sdc1", "/mnt/x", "ext4"),  // over-mounted: only /dev/sdc1 is visible
  };
  auto sel = SelectMountsToCheck(all);
  EXPECT_EQ(Points(sel), (std::vector<std::string>{"/data", "/", "/dev/shm", "/tmp", "/mnt/x"}));
  EXPECT_EQ(sel.back().device, "/dev/sdc1");
}

}  // namespace
}  // namespace gpudoctor
