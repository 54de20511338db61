// The job label a `check --json` report carries ("job"), so `gpudoctor fleet` can group GPUs of
// one multi-node job (a straggler's victims across nodes, docs/fleet.md). Taken from the
// environment `check` runs in: GPUDOCTOR_JOB (set by whoever launches check, e.g. a Kubernetes
// Job's name), else SLURM_JOB_ID ("slurm:<id>", when check runs in a Slurm prolog, epilog or
// job step). "" when neither is set. Printable ASCII only, at most 128 characters (other text is
// dropped, not escaped). Reads the environment; thread-safe as getenv is.
#pragma once

#include <string>

namespace gpudoctor {

std::string JobLabelFromEnvironment();

}  // namespace gpudoctor
