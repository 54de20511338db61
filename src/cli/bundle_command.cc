// `gpudoctor bundle [-o FILE|-] [--tool-timeout S]`: one tar.gz for a support case (bundle/bundle.h
// lists the members). Takes the same flags as check and watch (--config, --db, --nvml-lib,
// --path.*,
// --kmsg-file, ...). Needs no running daemon: the history database is read read-only when it
// exists. Exit 0 when the archive was written (whatever the verdict), 3 when it could not be.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "bundle/bundle.h"
#include "bundle/tar_writer.h"
#include "check/run_check.h"
#include "cli/bundle_tools.h"
#include "cli/commands.h"
#include "config/config.h"
#include "core/hostname.h"
#include "core/input_file.h"
#include "core/version.h"
#include "report/report.h"
#include "serve/http_server.h"

namespace gpudoctor {

int BundleCommand(const CliOptions& o) {
  if (!o.positional.empty())
    return CouldNotRun("bundle takes no arguments: '" + o.positional[0] + "' (use -o FILE)");
  TimePoint start = SteadyClock::now();
  auto built = BuildSettings(o);
  if (!built.ok()) return CouldNotRun(built.status().message());
  std::shared_ptr<const Settings> settings = *built;

  BundleInputs in;
  in.settings = settings.get();
  in.version = GpudoctorVersion();
  in.now_unix_s = static_cast<int64_t>(std::time(nullptr));
  in.db_path = settings->db_path;
  // The config that BuildSettings applied (it already validated it).
  std::string config_path = o.config_path.value_or(kDefaultConfigPath);
  if (o.config_path || RootFs::Exists(config_path)) {
    auto text = ReadInputFile(config_path, kMaxConfigBytes, InputDeadline(o));
    if (text.ok()) {
      in.config_path = config_path;
      in.config_text = *text;
    } else {
      in.notes.push_back("config.toml: " + text.status().message());
    }
  }
  // Secrets replaced in every member: the bearer token (never read into a member otherwise).
  if (!settings->watch_token_file.empty()) {
    auto token = ReadTokenFile(settings->watch_token_file);
    if (token.ok()) {
      in.secrets.push_back(*token);
    } else {
      // Unreadable or refused (too open): take its first line anyway, only to redact it.
      auto raw = RootFs::ReadFile(settings->watch_token_file, 64 * 1024);
      if (raw.ok()) {
        if (auto t = ParseTokenFileContent(*raw); t.ok()) in.secrets.push_back(*t);
      }
      in.notes.push_back("token file: " + token.status().message());
    }
  }
  if (const char* env = std::getenv("GPUDOCTOR_TOKEN"); env != nullptr && *env != '\0') {
    in.secrets.emplace_back(env);
  }

  Report report = RunCheck(settings, start);
  in.report = &report;

  std::string host = report.snapshot.hostname.empty() ? LocalHostname() : report.snapshot.hostname;
  std::string path = o.Value("--output").value_or(DefaultBundleName(host, in.now_unix_s));
  bool to_stdout = path == "-";
  if (to_stdout && ::isatty(STDOUT_FILENO)) {
    return CouldNotRun("bundle -o -: standard output is a terminal; redirect it to a file or pipe");
  }
  BundleToolOptions tools;
  if (auto t = o.Value("--tool-timeout")) tools.tool_timeout_s = std::stod(*t);
  CollectBundleAttachments(*settings, tools, in.attachments, in.notes);
  std::vector<BundleMember> members = BuildBundleMembers(in);
  auto writer = to_stdout ? TarGzWriter::CreateOnFd(STDOUT_FILENO, in.now_unix_s)
                          : TarGzWriter::Create(path, in.now_unix_s);
  if (!writer.ok()) return CouldNotRun("bundle: " + writer.status().message());
  for (const BundleMember& m : members) {
    if (Status s = (*writer)->Add(m.name, m.content); !s.ok()) {
      return CouldNotRun("bundle: " + s.message());
    }
  }
  if (Status s = (*writer)->Close(); !s.ok()) return CouldNotRun("bundle: " + s.message());
  if (!to_stdout) std::printf("%s\n", path.c_str());
  std::fprintf(stderr, "gpudoctor: bundle written: %s (%zu members, verdict %s)\n",
               to_stdout ? "standard output" : path.c_str(), members.size(),
               Verdict(report.findings));
  return 0;
}

}  // namespace gpudoctor
