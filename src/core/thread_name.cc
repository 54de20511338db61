#include "core/thread_name.h"

#include <pthread.h>

#include <string>

namespace gpudoctor {

void NameThisThread(std::string_view name) {
  std::string cut(name.substr(0, kMaxThreadNameBytes));
  static_cast<void>(pthread_setname_np(pthread_self(), cut.c_str()));
}

}  // namespace gpudoctor
