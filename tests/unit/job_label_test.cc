// check --json's "job" label (report/job_label.h): GPUDOCTOR_JOB first, then SLURM_JOB_ID as
// "slurm:<id>", nothing when neither is set or the value is not printable.
#include "report/job_label.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

namespace gpudoctor {
namespace {

// Sets (or unsets) a variable for one scope, restoring the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(JobLabelTest, FromGpudoctorJobThenSlurm) {
  {
    ScopedEnv a("GPUDOCTOR_JOB", nullptr), b("SLURM_JOB_ID", nullptr);
    EXPECT_EQ(JobLabelFromEnvironment(), "");
  }
  {
    ScopedEnv a("GPUDOCTOR_JOB", nullptr), b("SLURM_JOB_ID", "812345");
    EXPECT_EQ(JobLabelFromEnvironment(), "slurm:812345");
  }
  {
    ScopedEnv a("GPUDOCTOR_JOB", "llama-pretrain-7"), b("SLURM_JOB_ID", "812345");
    EXPECT_EQ(JobLabelFromEnvironment(), "llama-pretrain-7");
  }
  {
    ScopedEnv a("GPUDOCTOR_JOB", "bad\nlabel"), b("SLURM_JOB_ID", "");
    EXPECT_EQ(JobLabelFromEnvironment(), "");
  }
}

}  // namespace
}  // namespace gpudoctor
