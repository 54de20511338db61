// libFuzzer: redaction of config text and explicit secrets (bundle/redact.h). Must not crash,
// and a given secret never survives.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "bundle/redact.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string secret = "S3CRET-t0ken";
  std::string text(in);
  text.insert(text.size() / 2, secret);
  std::string out = gpudoctor::RedactText(text, {secret});
  if (out.find(secret) != std::string::npos) std::abort();
  (void)gpudoctor::RedactText(in, {}, false);
  (void)gpudoctor::SecretLookingName(in.substr(0, 64));
  return 0;
}
