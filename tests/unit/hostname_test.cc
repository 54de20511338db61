#include "core/hostname.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gpudoctor {
namespace {

// GPUDOCTOR_HOSTNAME names the node in every label and alert (a pod passes spec.nodeName);
// empty or unset falls back to gethostname().
TEST(HostnameTest, EnvironmentOverridesGethostname) {
  char buf[256] = {};
  ASSERT_EQ(gethostname(buf, sizeof buf - 1), 0);
  ::unsetenv("GPUDOCTOR_HOSTNAME");
  std::string real = LocalHostname();
  EXPECT_EQ(real, buf);
  ::setenv("GPUDOCTOR_HOSTNAME", "gpu-node-17", 1);
  EXPECT_EQ(LocalHostname(), "gpu-node-17");
  ::setenv("GPUDOCTOR_HOSTNAME", "", 1);
  EXPECT_EQ(LocalHostname(), real);
  ::setenv("GPUDOCTOR_HOSTNAME", "bad\nname", 1);
  EXPECT_EQ(LocalHostname().find('\n'), std::string::npos);
  ::unsetenv("GPUDOCTOR_HOSTNAME");
}

}  // namespace
}  // namespace gpudoctor
