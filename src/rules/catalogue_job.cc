// Catalogue section: the jobs' own speed ([[job]] tables: a training log, pushed step marks).
#include "rules/catalogue.h"

namespace gpudoctor {

const std::vector<CatalogueEntry>& JobCatalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"job.slowdown",
       Layer::kSoftware,
       Severity::kWarn,
       Action::kWatch,
       "Job steps slower than its baseline",
       "The job's step time (the median of its newest steps, from its log or from pushed step "
       "marks) is above its baseline by the configured factor. The baseline is the median of the "
       "job's first steps (baseline_steps in its [[job]] table) or a known good step time "
       "(baseline_s). A job that became slow on the same code and data is slowed by something "
       "that changed around it: a throttled or failing GPU, a link that trained down, a "
       "neighbour taking the host's CPU, memory or I/O, the network to its storage or peers. "
       "The finding says how much slower and since when; `gpudoctor why` ranks what changed "
       "then.",
       {"Ask what changed when it slowed down: `gpudoctor why --job NAME` ranks the findings, "
        "events and metric changes of the history around the onset.",
        "Read the findings that opened shortly before the time in `since`: a thermal or power "
        "slowdown, a PCIe/NVLink link that trained down, Xids, host pressure.",
        "If nothing on the node changed, compare with the job's other nodes (a straggler in a "
        "collective slows every rank): `gpudoctor fleet`; and check the job itself (data "
        "loader, a changed batch size or sequence length, checkpointing)."},
       {{"factor", 1.5, "step time at or above this many times the baseline is a slowdown"}},
       {.pace = Pace::kSustained}},
  };
  return entries;
}

}  // namespace gpudoctor
