// report_parse.h's functions for the binary: forwarders into gpudoctor_fleet_json.so
// (fleet_json_module.h), loaded with dlopen on first use. Not built into fuzz builds, which
// link report_parse.cc and simdjson directly (CMakeLists.txt).
#include "fleet/report_parse_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <sys/auxv.h>

#include <cstdlib>
#include <cstring>

#include "core/version.h"
#include "fleet/fleet_json_module.h"
#include "fleet/report_parse.h"

namespace gpudoctor::fleet {
namespace {

struct Loaded {
  const FleetJsonModule* module = nullptr;
  Status status;
};

// Why a module found at `path` is not this build's, or "" when it is.
std::string Mismatch(const FleetJsonModule* m) {
  if (m == nullptr) return "its entry point returned no table";
  if (m->abi != kFleetJsonModuleAbi) {
    return "module ABI " + std::to_string(m->abi) + ", this binary's " +
           std::to_string(kFleetJsonModuleAbi);
  }
  if (m->sizeof_report != sizeof(ParsedReport) || m->sizeof_gpu != sizeof(ParsedGpu) ||
      m->sizeof_result != sizeof(Result<ParsedReport>)) {
    return "its report types differ from this binary's (another build)";
  }
  const char* rev = GpudoctorRevision();
  if (m->revision == nullptr || std::strcmp(m->revision, rev) != 0) {
    return std::string("built from revision ") + (m->revision ? m->revision : "?") +
           ", this binary from " + rev;
  }
  return "";
}

Loaded Load() {
  Loaded out;
  std::string tried;
  for (const std::string& path : FleetJsonModuleCandidates()) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      tried +=
          std::string(tried.empty() ? " " : "; ") + (e != nullptr ? e : path + ": dlopen failed");
      continue;
    }
    auto fn = reinterpret_cast<GpudoctorFleetJsonModuleFn>(dlsym(h, kFleetJsonModuleSymbol));
    std::string why =
        fn == nullptr ? std::string("no symbol ") + kFleetJsonModuleSymbol : Mismatch(fn());
    if (why.empty()) {
      out.module = fn();
      return out;  // kept loaded for the life of the process
    }
    dlclose(h);
    tried += std::string(tried.empty() ? " " : "; ") + path + ": " + why;
  }
  const std::string origin = ExecutableDirForMessages();
  out.status = NotFound(std::string("cannot load ") + kFleetJsonModuleFile +
                        " (the fleet report parser, with libsimdjson.so.14): install it with "
                        "the binary (make install puts it in <prefix>/lib/gpudoctor/) or set "
                        "GPUDOCTOR_MODULE_DIR to its directory; tried" +
                        (origin.empty() ? "" : " ($ORIGIN is " + origin + ")") + ":" + tried);
  return out;
}

const Loaded& Module() {
  static const Loaded loaded = Load();  // thread-safe initialisation
  return loaded;
}

}  // namespace

std::vector<std::string> FleetJsonModuleCandidates() {
  std::vector<std::string> paths;
  const std::string file = kFleetJsonModuleFile;
  const char* dir = std::getenv("GPUDOCTOR_MODULE_DIR");
  if (dir != nullptr && *dir != '\0') paths.push_back(std::string(dir) + "/" + file);
  paths.push_back("$ORIGIN/" + file);
  paths.push_back("$ORIGIN/../lib/gpudoctor/" + file);
  return paths;
}

std::string ExecutableDirForMessages() {
  // The path the program was started by (execve's), resolved now; the process has not changed
  // its directory before fleet runs. Only for messages: dlopen resolves "$ORIGIN" itself.
  const char* exe = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
  if (exe == nullptr) return "";
  char buf[PATH_MAX + 1] = {};
  if (realpath(exe, buf) == nullptr) return "";
  std::string path = buf;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
}

Status LoadFleetJsonModule() { return Module().status; }

Result<ParsedReport> ParseReportJson(std::string_view json_text) {
  const Loaded& l = Module();
  if (l.module == nullptr) return l.status;
  return l.module->parse(json_text);
}

Result<ParsedReport> ParseReportJsonPadded(std::string_view json_text) {
  const Loaded& l = Module();
  if (l.module == nullptr) return l.status;
  return l.module->parse_padded(json_text);
}

// Every ParsedReport comes from the module (parsed or decoded), so it is loaded by the time one
// is encoded; without it nothing is appended (the index record is then short and its reader
// rejects it).
void EncodeParsedReport(const ParsedReport& r, std::string& out) {
  const Loaded& l = Module();
  if (l.module != nullptr) l.module->encode(r, out);
}

bool DecodeParsedReport(std::string_view& in, ParsedReport& r) {
  const Loaded& l = Module();
  return l.module != nullptr && l.module->decode(in, r);
}

}  // namespace gpudoctor::fleet
