// Fuzzes the request head the watch server reads before authentication (serve/http_request.h):
// the scanner fed in random-sized pieces, the head parser, the query string, the bearer scheme.
// Invariants: the scanner never asks for more than the head limit, agrees with itself whatever
// the split, never reports a head longer than the data; a parsed request has a path that starts
// with '/'; decoded query values hold no NUL; bearer credentials are non-empty.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "serve/http_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor;
  if (size < 1) return 0;
  size_t step = 1 + data[0] % 64;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  HeadScanner whole;
  HeadScanner::State all = whole.Feed(text);
  HeadScanner pieces;
  HeadScanner::State st = HeadScanner::State::kNeedMore;
  for (size_t n = std::min(step, text.size()); st == HeadScanner::State::kNeedMore;
       n = std::min(n + step, text.size())) {
    st = pieces.Feed(text.substr(0, n));
    if (n == text.size()) break;
  }
  if (st != all) __builtin_trap();
  if (all == HeadScanner::State::kNeedMore && text.size() > kMaxHeadBytes) __builtin_trap();
  if (all == HeadScanner::State::kComplete) {
    if (whole.head_size() > text.size() || whole.head_size() > kMaxHeadBytes ||
        pieces.head_size() != whole.head_size()) {
      __builtin_trap();
    }
    if (auto r = ParseRequestHead(text.substr(0, whole.head_size()), nullptr); r.ok()) {
      if (r->path.empty() || r->path[0] != '/') __builtin_trap();
      if (auto q = ParseQueryString(r->query); q.ok()) {
        for (const auto& [k, v] : *q) {
          if (k.find('\0') != std::string::npos || v.find('\0') != std::string::npos) {
            __builtin_trap();
          }
        }
      }
      if (auto a = r->Header("authorization")) {
        if (auto c = BearerCredentials(*a); c && c->empty()) __builtin_trap();
      }
    }
  }
  if (all == HeadScanner::State::kError) {
    int s = whole.error_status();
    if (s != 400 && s != 414 && s != 431) __builtin_trap();
  }
  (void)ParseQueryString(text);
  if (auto c = BearerCredentials(text); c && c->empty()) __builtin_trap();
  return 0;
}
