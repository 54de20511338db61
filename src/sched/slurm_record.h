// The record of a drain that `gpudoctor check --slurm` set, kept in the state directory
// (default /var/lib/gpudoctor, the systemd unit's StateDirectory) so that only a drain that
// gpudoctor itself set is ever resumed: an admin drain whose reason happens to start with
// "gpudoctor:" has no record with that exact reason and is left alone.
//
// File: <state_dir>/slurm-drain-<node>.txt (node name characters other than [A-Za-z0-9._-]
// become '_'; the node is also inside the file, so two names that map to one file never pass
// for each other). Text, one field a line:
//   gpudoctor-slurm-drain 1
//   node=<Slurm NodeName>
//   reason=<the reason exactly as given to scontrol>
//   drained_at=<unix seconds>
// Writes are atomic (a temporary in the same directory, fsync, rename): a reader sees the old
// record or the new one, never half of one. A missing record means "not ours"; so does a corrupt
// one (ParseSlurmDrainRecord's error says why). Not thread-safe against itself (one health check
// runs at a time on a node; slurmd never overlaps them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor {

inline constexpr const char* kDefaultStateDir = "/var/lib/gpudoctor";
// A record larger than this is corrupt (a real one is under 400 bytes).
inline constexpr size_t kMaxSlurmRecordBytes = 4096;

struct SlurmDrainRecord {
  std::string node;
  std::string reason;
  int64_t drained_at_unix_s = 0;
};

std::string SlurmDrainRecordPath(const std::string& state_dir, const std::string& node);

// "gpudoctor-slurm-drain 1\nnode=...\n..." (reason and node must hold no newline: the caller's
// reason is already cleaned; a newline would be replaced by a space).
std::string FormatSlurmDrainRecord(const SlurmDrainRecord& record);

// Errors: parse_error naming the line and what is wrong (unknown header or version, a missing
// or repeated field, a bad number, text after the fields). Pure; the fuzz target's subject.
Result<SlurmDrainRecord> ParseSlurmDrainRecord(std::string_view text);

// Creates state_dir (one level, mode 0755) when missing, then writes atomically (mode 0644).
// Errors: io_error / permission_denied naming the path.
Status WriteSlurmDrainRecord(const std::string& state_dir, const SlurmDrainRecord& record);

// Errors: not_found (no record: not ours), parse_error "PATH: ..." (corrupt: not ours), other
// read errors as RootFs::ReadFile.
Result<SlurmDrainRecord> ReadSlurmDrainRecord(const std::string& state_dir,
                                              const std::string& node);

// Removes the record; a missing one is fine. Errors: io_error naming the path.
Status RemoveSlurmDrainRecord(const std::string& state_dir, const std::string& node);

}  // namespace gpudoctor
