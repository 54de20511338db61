// The libcurl entry points gpudoctor uses, forwarded to libcurl.so.4 loaded on first use
// (lazy_curl.h).
#include "net/lazy_curl.h"

#include <curl/curl.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdarg>
#include <mutex>

namespace gpudoctor {
namespace {

using CurlFn = void (*)();

struct Curl {
  CURLcode (*global_init)(long) = nullptr;
  CURL* (*easy_init)() = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
  CURLM* (*multi_init)() = nullptr;
  CURLMcode (*multi_add_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*) = nullptr;
  CURLMcode (*multi_perform)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_cleanup)(CURLM*) = nullptr;
  CURLMsg* (*multi_info_read)(CURLM*, int*) = nullptr;
  CURLMcode (*multi_poll)(CURLM*, curl_waitfd[], unsigned, int, int*) = nullptr;
};

std::atomic<bool> g_loaded{false};

template <typename Fn>
bool Bind(void* lib, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  return out != nullptr;
}

// The library, loaded on the first call; null members when it could not be loaded (or lacks
// one of the functions: then none is used).
const Curl& Lib() {
  static Curl curl;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen(kLibcurlName, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return;
    Curl c;
    bool ok = Bind(lib, "curl_global_init", c.global_init) &&
              Bind(lib, "curl_easy_init", c.easy_init) &&
              Bind(lib, "curl_easy_setopt", c.easy_setopt) &&
              Bind(lib, "curl_easy_perform", c.easy_perform) &&
              Bind(lib, "curl_easy_cleanup", c.easy_cleanup) &&
              Bind(lib, "curl_easy_getinfo", c.easy_getinfo) &&
              Bind(lib, "curl_easy_strerror", c.easy_strerror) &&
              Bind(lib, "curl_slist_append", c.slist_append) &&
              Bind(lib, "curl_slist_free_all", c.slist_free_all) &&
              Bind(lib, "curl_multi_init", c.multi_init) &&
              Bind(lib, "curl_multi_add_handle", c.multi_add_handle) &&
              Bind(lib, "curl_multi_remove_handle", c.multi_remove_handle) &&
              Bind(lib, "curl_multi_perform", c.multi_perform) &&
              Bind(lib, "curl_multi_cleanup", c.multi_cleanup) &&
              Bind(lib, "curl_multi_info_read", c.multi_info_read) &&
              Bind(lib, "curl_multi_poll", c.multi_poll);
    if (!ok) return;  // kept mapped: unloading a half-used library is not safe
    curl = c;
    g_loaded.store(true);
  });
  return curl;
}

}  // namespace

bool LibcurlLoaded() { return g_loaded.load(); }

}  // namespace gpudoctor

using gpudoctor::Lib;

extern "C" {

CURLcode curl_global_init(long flags) {
  return Lib().global_init ? Lib().global_init(flags) : CURLE_FAILED_INIT;
}

CURL* curl_easy_init() { return Lib().easy_init ? Lib().easy_init() : nullptr; }

// The one variadic argument is passed on with the type the option number says it has.
CURLcode curl_easy_setopt(CURL* curl, CURLoption option, ...) {
  if (Lib().easy_setopt == nullptr) return CURLE_FAILED_INIT;
  va_list ap;
  va_start(ap, option);
  CURLcode r;
  switch (static_cast<int>(option) / 10000 * 10000) {
    case CURLOPTTYPE_LONG:
      r = Lib().easy_setopt(curl, option, va_arg(ap, long));
      break;
    case CURLOPTTYPE_FUNCTIONPOINT:
      r = Lib().easy_setopt(curl, option, va_arg(ap, gpudoctor::CurlFn));
      break;
    case CURLOPTTYPE_OFF_T:
      r = Lib().easy_setopt(curl, option, va_arg(ap, curl_off_t));
      break;
    default:  // object, string, list and callback-data pointers, blobs
      r = Lib().easy_setopt(curl, option, va_arg(ap, void*));
      break;
  }
  va_end(ap);
  return r;
}

CURLcode curl_easy_perform(CURL* curl) {
  return Lib().easy_perform ? Lib().easy_perform(curl) : CURLE_FAILED_INIT;
}

void curl_easy_cleanup(CURL* curl) {
  if (Lib().easy_cleanup) Lib().easy_cleanup(curl);
}

// Every CURLINFO takes a pointer to where the answer goes.
CURLcode curl_easy_getinfo(CURL* curl, CURLINFO info, ...) {
  if (Lib().easy_getinfo == nullptr) return CURLE_FAILED_INIT;
  va_list ap;
  va_start(ap, info);
  void* out = va_arg(ap, void*);
  va_end(ap);
  return Lib().easy_getinfo(curl, info, out);
}

const char* curl_easy_strerror(CURLcode code) {
  return Lib().easy_strerror ? Lib().easy_strerror(code)
                             : "libcurl (libcurl.so.4) could not be loaded";
}

curl_slist* curl_slist_append(curl_slist* list, const char* data) {
  return Lib().slist_append ? Lib().slist_append(list, data) : nullptr;
}

void curl_slist_free_all(curl_slist* list) {
  if (Lib().slist_free_all) Lib().slist_free_all(list);
}

CURLM* curl_multi_init() { return Lib().multi_init ? Lib().multi_init() : nullptr; }

CURLMcode curl_multi_add_handle(CURLM* multi, CURL* easy) {
  return Lib().multi_add_handle ? Lib().multi_add_handle(multi, easy) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_remove_handle(CURLM* multi, CURL* easy) {
  return Lib().multi_remove_handle ? Lib().multi_remove_handle(multi, easy) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_perform(CURLM* multi, int* running) {
  return Lib().multi_perform ? Lib().multi_perform(multi, running) : CURLM_INTERNAL_ERROR;
}

CURLMcode curl_multi_cleanup(CURLM* multi) {
  return Lib().multi_cleanup ? Lib().multi_cleanup(multi) : CURLM_INTERNAL_ERROR;
}

CURLMsg* curl_multi_info_read(CURLM* multi, int* queued) {
  return Lib().multi_info_read ? Lib().multi_info_read(multi, queued) : nullptr;
}

CURLMcode curl_multi_poll(CURLM* multi, curl_waitfd extra_fds[], unsigned extra_nfds,
                          int timeout_ms, int* ret) {
  return Lib().multi_poll ? Lib().multi_poll(multi, extra_fds, extra_nfds, timeout_ms, ret)
                          : CURLM_INTERNAL_ERROR;
}

}  // extern "C"
