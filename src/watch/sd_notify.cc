#include "watch/sd_notify.h"

#include <dlfcn.h>

#include <cstdlib>

namespace gpudoctor {
namespace {

using SdNotifyFn = int (*)(int unset_environment, const char* state);

SdNotifyFn LoadSdNotify() {
  void* lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return nullptr;
  return reinterpret_cast<SdNotifyFn>(dlsym(lib, "sd_notify"));
}

}  // namespace

void SdNotify(const std::string& state) {
  if (std::getenv("NOTIFY_SOCKET") == nullptr) return;
  static SdNotifyFn fn = LoadSdNotify();
  if (fn != nullptr) fn(0, state.c_str());
}

}  // namespace gpudoctor
