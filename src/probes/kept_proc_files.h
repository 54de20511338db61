// KeptProcFiles: the procfs files one probe reads on every run (/proc/stat, /proc/meminfo,
// /proc/pressure/*), kept open from run to run under `watch` and opened afresh on every read
// under `check`. Each file is a KeptFile (core/kept_file.h), so a file outside procfs and sysfs
// (a fixture tree under --path.procfs, replaced by rename between samples) is opened afresh on
// every read whatever `keep` says, and a kept one reads the kernel's current content each time.
//
// A probe gets its set with KeptProcFiles::ForRun: the set its previous run handed on (in a
// carry deriving from CarriesKeptFiles: KeptSampleCarry<Sample> or KeptFilesCarry), else a new
// one that keeps its files when the run is continuous. For the files to stay open the probe
// hands the set on again in its next carry; under `check` it hands on a plain SampleCarry and the
// set (holding no descriptor) goes with the run.
// Thread-safety: none; the runner never runs a probe while its previous run is in flight
// (probes/probe.h), so one run at a time uses a set.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/kept_file.h"
#include "core/root_fs.h"
#include "core/status.h"
#include "probes/probe.h"

namespace gpudoctor {

class KeptProcFiles {
 public:
  // names: paths under the procfs root ("stat", "pressure/io"), read by index in this order.
  // keep = false: every read opens and closes (a `check`).
  KeptProcFiles(const RootFs& fs, std::initializer_list<std::string_view> names, bool keep);

  // The set the previous run carried (ctx.previous deriving from CarriesKeptFiles, with as many
  // files), else a new one over `names` that keeps its files when ctx.continuous.
  static std::shared_ptr<KeptProcFiles> ForRun(const ProbeContext& ctx,
                                               std::initializer_list<std::string_view> names);

  // File i's whole content, at most max_bytes; the view is valid until the next Read of any
  // file of the set (one buffer serves them all, reused from read to read). Errors: as
  // KeptFile::Read (not_found, permission_denied, io_error), naming the path.
  Result<std::string_view> Read(size_t i, size_t max_bytes = 64 << 10);
  // File i's full path (the procfs root prefixed), for error messages.
  const std::string& path(size_t i) const { return files_[i].path(); }
  // Whether file i holds a descriptor between reads (procfs or sysfs, kept, read at least once).
  bool is_open(size_t i) const { return files_[i].is_open(); }
  size_t size() const { return files_.size(); }

 private:
  std::vector<KeptFile> files_;
  std::string text_;
};

// The part of a carry that hands a KeptProcFiles set to the probe's next run.
struct CarriesKeptFiles {
  explicit CarriesKeptFiles(std::shared_ptr<KeptProcFiles> f) : kept_files(std::move(f)) {}
  virtual ~CarriesKeptFiles() = default;
  std::shared_ptr<KeptProcFiles> kept_files;
};

// A sample (read by TakeFirstSample like any SampleCarry) and the files it was read from.
template <typename Sample>
struct KeptSampleCarry : SampleCarry<Sample>, CarriesKeptFiles {
  KeptSampleCarry(Sample s, TimePoint at, std::shared_ptr<KeptProcFiles> f)
      : SampleCarry<Sample>(std::move(s), at), CarriesKeptFiles(std::move(f)) {}
};

// The files alone, for a probe that carries no sample.
struct KeptFilesCarry : ProbeCarry, CarriesKeptFiles {
  using CarriesKeptFiles::CarriesKeptFiles;
};

// The carry for the next run: under `watch` the sample with the files (kept open), under `check`
// the sample alone.
template <typename Sample>
std::shared_ptr<ProbeCarry> CarrySample(const ProbeContext& ctx, Sample sample, TimePoint at,
                                        std::shared_ptr<KeptProcFiles> files) {
  if (ctx.continuous) {
    return std::make_shared<KeptSampleCarry<Sample>>(std::move(sample), at, std::move(files));
  }
  return std::make_shared<SampleCarry<Sample>>(std::move(sample), at);
}

}  // namespace gpudoctor
