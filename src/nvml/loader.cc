#include "nvml/loader.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <mutex>

#include "core/strings.h"

namespace gpudoctor::nvml {
namespace {

std::string DlError() {
  const char* e = dlerror();
  return e == nullptr ? "unknown dlerror" : Sanitize(e, 300);
}

// Resolves the first existing symbol of `candidates` into *slot (a function-pointer member).
template <typename Fn>
void Resolve(void* handle, const char* member, Requirement requirement,
             std::initializer_list<const char*> candidates, Fn* slot, std::string* name,
             std::vector<ResolvedSymbol>& out) {
  ResolvedSymbol rs{member, requirement, ""};
  *name = *candidates.begin();
  for (const char* candidate : candidates) {
    dlerror();
    void* sym = dlsym(handle, candidate);
    if (sym != nullptr) {
      static_assert(sizeof(Fn) == sizeof(void*));
      std::memcpy(slot, &sym, sizeof sym);
      rs.symbol = candidate;
      *name = candidate;
      break;
    }
  }
  out.push_back(std::move(rs));
}

}  // namespace

const std::vector<std::string>& DefaultLibraryCandidates() {
  static const std::vector<std::string> candidates = {
      "libnvidia-ml.so.1",
      "/usr/lib64/libnvidia-ml.so.1",
      "/usr/lib64/nvidia/libnvidia-ml.so.1",
      "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
      "/usr/lib/aarch64-linux-gnu/libnvidia-ml.so.1",
      "/usr/lib/libnvidia-ml.so.1",
      "/usr/lib/nvidia/libnvidia-ml.so.1",
  };
  return candidates;
}

Result<std::shared_ptr<const Library>> LoadNvml(const std::string& override_path) {
  // dlerror() is per thread, dlopen itself is thread-safe; serialise anyway so the error text
  // belongs to our call.
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);

  std::vector<std::string> candidates;
  if (!override_path.empty()) {
    candidates.push_back(override_path);
  } else {
    candidates = DefaultLibraryCandidates();
  }
  void* handle = nullptr;
  std::string opened, errors;
  bool all_absent = true;  // every failure was "No such file": simply no driver installed
  for (const auto& c : candidates) {
    dlerror();
    handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      opened = c;
      break;
    }
    std::string e = DlError();
    if (e.find("No such file") == std::string::npos) {
      all_absent = false;
      if (!errors.empty()) errors += "; ";
      errors += e;
    }
  }
  if (handle == nullptr) {
    if (all_absent) {
      return NotFound(candidates.size() == 1
                          ? candidates[0] + " does not exist"
                          : "libnvidia-ml.so.1 not found (dynamic linker path and " +
                                std::to_string(candidates.size() - 1) + " driver directories)");
    }
    return NotFound("cannot load the NVML library: " + errors);
  }

  auto lib = std::make_shared<Library>();
  lib->path = opened;
#define NVML_FUNCTION(member, requirement, ret, params, ...)                          \
  Resolve(handle, #member, Requirement::requirement, {__VA_ARGS__}, &lib->api.member, \
          &lib->names.member, lib->symbols);
#include "nvml/functions.def"
#undef NVML_FUNCTION

  Dl_info info;
  void* init_sym = nullptr;
  std::memcpy(&init_sym, &lib->api.Init, sizeof init_sym);
  if (init_sym != nullptr && dladdr(init_sym, &info) != 0 && info.dli_fname != nullptr) {
    char real[4096];
    if (realpath(info.dli_fname, real) != nullptr) {
      std::string base = real;
      base = base.substr(base.rfind('/') + 1);
      const std::string prefix = "libnvidia-ml.so.";
      if (StartsWith(base, prefix) && base.find('.', prefix.size()) != std::string::npos) {
        lib->file_version = Sanitize(base.substr(prefix.size()), 64);
      }
    }
  }

  for (const auto& s : lib->symbols) {
    if (s.requirement == Requirement::kRequired && s.symbol.empty()) {
      // Leave the handle open: dlclose of a library with running constructors is not worth it.
      return Unsupported(opened + " lacks the required NVML function '" + s.member +
                         "' (driver too old or not an NVML library)");
    }
  }
  return std::shared_ptr<const Library>(std::move(lib));
}

std::string ReturnCodeName(nvmlReturn_t code) {
  switch (code) {
    case NVML_SUCCESS:
      return "NVML_SUCCESS";
    case NVML_ERROR_UNINITIALIZED:
      return "NVML_ERROR_UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED:
      return "NVML_ERROR_NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION:
      return "NVML_ERROR_NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "NVML_ERROR_ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND:
      return "NVML_ERROR_NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "NVML_ERROR_INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "NVML_ERROR_INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT:
      return "NVML_ERROR_TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE:
      return "NVML_ERROR_IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM:
      return "NVML_ERROR_CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST:
      return "NVML_ERROR_GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED:
      return "NVML_ERROR_RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM:
      return "NVML_ERROR_OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE:
      return "NVML_ERROR_IN_USE";
    case NVML_ERROR_MEMORY:
      return "NVML_ERROR_MEMORY";
    case NVML_ERROR_NO_DATA:
      return "NVML_ERROR_NO_DATA";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
      return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case NVML_ERROR_FREQ_NOT_SUPPORTED:
      return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case NVML_ERROR_DEPRECATED:
      return "NVML_ERROR_DEPRECATED";
    case NVML_ERROR_NOT_READY:
      return "NVML_ERROR_NOT_READY";
    case NVML_ERROR_GPU_NOT_FOUND:
      return "NVML_ERROR_GPU_NOT_FOUND";
    case NVML_ERROR_INVALID_STATE:
      return "NVML_ERROR_INVALID_STATE";
    case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED:
      return "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED";
    case NVML_ERROR_UNKNOWN:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "unknown NVML error " + std::to_string(code);
  }
}

std::string DescribeReturn(const Library* lib, nvmlReturn_t code) {
  std::string s = ReturnCodeName(code);
  if (lib != nullptr && lib->api.ErrorString != nullptr) {
    const char* text = lib->api.ErrorString(code);
    if (text != nullptr) {
      std::string clean = Sanitize(std::string_view(text, strnlen(text, 200)), 200);
      if (!clean.empty()) s += " (" + clean + ")";
    }
  }
  return s;
}

}  // namespace gpudoctor::nvml
