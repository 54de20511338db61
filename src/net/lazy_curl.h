// libcurl loaded on first use. src/net/lazy_curl.cc defines the libcurl entry points that
// gpudoctor calls (curl_global_init, curl_easy_*, curl_multi_*, curl_slist_*) as forwarders
// that dlopen libcurl.so.4 the first time any of them is called, so the binary is not linked
// against libcurl and a command that makes no HTTP request (a check without URL targets or
// notifiers) never maps libcurl or its dependency tree (TLS, Kerberos, LDAP, ...). Callers
// include <curl/curl.h> and call libcurl as usual.
//
// Without a loadable libcurl the forwarders answer as libcurl does when it cannot start:
// curl_global_init, curl_easy_setopt/perform/getinfo CURLE_FAILED_INIT, curl_easy_init and
// curl_multi_init nullptr, curl_multi_* CURLM_INTERNAL_ERROR, curl_slist_append nullptr,
// curl_easy_strerror a sentence naming the library; cleanup and free calls do nothing.
// Thread-safe: the library is loaded once, under std::call_once.
#pragma once

namespace gpudoctor {

// The file name dlopen is given.
inline constexpr const char* kLibcurlName = "libcurl.so.4";

// Whether libcurl is loaded in this process (false until a curl function was first called, and
// when it could not be loaded). Loads nothing.
bool LibcurlLoaded();

}  // namespace gpudoctor
