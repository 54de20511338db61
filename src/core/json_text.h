// JsonText: the one way gpudoctor turns a JSON value into text. Strings in it may hold bytes
// from outside (mount points, kernel-log words, process and job names, anything a user can
// name): nlohmann's default dump() throws on invalid UTF-8, which would turn a mount named with
// a 0xFF byte into a failed HTTP answer, a lost notification or, on the watch thread, a crash of
// the daemon. Here every invalid byte becomes U+FFFD instead; valid text is unchanged.
// `indent` < 0: one line; otherwise pretty-printed with that many spaces. No trailing newline.
// Never throws for encoding; thread-safe (pure).
#pragma once

#include <string>

namespace gpudoctor {

template <typename Json>
std::string JsonText(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace gpudoctor
