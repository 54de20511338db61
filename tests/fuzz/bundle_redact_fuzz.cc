// libFuzzer: redaction of the bundle's config (bundle/redact.h). The input drives a generator of
// TOML documents with one secret planted in a random shape (key spelling, quoting, dotting, table
// header style, string form, inline table, array, URL userinfo, Authorization header, argv); the
// secret must never survive RedactConfigToml nor RedactText. The raw input is also redacted as
// is (must not crash; a planted explicit secret never survives).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "bundle/redact.h"

namespace {

constexpr std::string_view kSecret = "Zq7SECRETxk";

class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  unsigned Pick(unsigned n) { return n == 0 ? 0 : (i_ < n_ ? d_[i_++] : 0) % n; }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

// A TOML string holding `v`, in one of the forms that spell the same value.
std::string Str(Bytes& b, std::string_view v) {
  std::string s(v);
  switch (b.Pick(6)) {
    case 0:
      return "\"" + s + "\"";
    case 1:
      return "'" + s + "'";
    case 2:
      return "\"\"\"" + s + "\"\"\"";
    case 3:
      return "'''\n" + s + "'''";
    case 4: {  // a line continuation splitting the value
      size_t cut = s.size() / 2;
      return "\"\"\"" + s.substr(0, cut) + "\\\n    " + s.substr(cut) + "\"\"\"";
    }
    default: {  // an escape inside the value
      std::string e;
      for (char c : s) e += c == 'S' ? std::string("\\u0053") : std::string(1, c);
      return "\"" + e + "\"";
    }
  }
}

std::string Key(Bytes& b, std::string_view k) {
  switch (b.Pick(3)) {
    case 0:
      return std::string(k);
    case 1:
      return "\"" + std::string(k) + "\"";
    default:
      return "'" + std::string(k) + "'";
  }
}

std::string NotifyHeader(Bytes& b, std::string_view kind) {
  const char* forms[] = {"[[notify.%s]]", "[[ notify . %s ]]", "[[\"notify\".%s]]",
                         "[['notify'.\"%s\"]]", "[[Notify.%s]]"};
  std::string f = forms[b.Pick(5)];
  return f.replace(f.find("%s"), 2, kind);
}

// The planted value: the secret itself, or inside a URL, header or JSON text.
std::string Planted(Bytes& b) {
  std::string s(kSecret);
  switch (b.Pick(6)) {
    case 0:
      return s;
    case 1:
      return "https://bob:" + s + "@h.example/x";
    case 2:
      return "https://bob:a/" + s + "@h.example/x";
    case 3:
      return "Authorization: token " + s;
    case 4:
      return "https://h.example/services/T/B/" + s;
    default:
      return "{\"password\":\"" + s + "\"}";
  }
}

std::string Generate(Bytes& b) {
  std::string doc = "[watch]\nlisten = \"off\"\n";
  const char* secret_keys[] = {"token",         "password",   "api_key",   "secret",      "auth",
                               "Authorization", "credential", "x-api-key", "private_key", "pass"};
  std::string sk = secret_keys[b.Pick(10)];
  std::string v = Planted(b);
  switch (b.Pick(9)) {
    case 0:  // a secret key in a plain table
      doc += "[probes]\n" + Key(b, sk) + " = " + Str(b, v) + "\n";
      break;
    case 1:  // dotted key
      doc += "[a]\nb." + Key(b, sk) + ".c = " + Str(b, v) + "\n";
      break;
    case 2:  // inline table
      doc += "[a]\nh = { x = 1, " + Key(b, sk) + " = " + Str(b, v) + " }\n";
      break;
    case 3:  // multi-line array under a secret key
      doc += "[a]\n" + Key(b, sk) + " = [\n  \"x\",\n  " + Str(b, v) + ",\n]\n";
      break;
    case 4:  // a notifier URL
      doc += NotifyHeader(b, b.Pick(2) ? "webhook" : "alertmanager") + "\nurl = " +
             Str(b, "https://u:" + std::string(kSecret) + "@h.example/p/" + std::string(kSecret)) +
             "\n";
      break;
    case 5:  // an exec argv element
      doc += NotifyHeader(b, "exec") + "\nargv = [\n  \"/bin/x\",\n  " +
             Str(b, b.Pick(2) ? "-p" + std::string(kSecret) : v) + ",\n]\n";
      break;
    case 6:  // any key of a notifier table
      doc += NotifyHeader(b, "webhook") + "\nurl = \"https://h.example/\"\n" + Key(b, "note") +
             " = " + Str(b, v) + "\n";
      break;
    case 7:  // the whole notifier as inline tables
      doc +=
          "notify = { webhook = [ { url = " + Str(b, "https://h.example/" + std::string(kSecret)) +
          " } ] }\n";
      break;
    default:  // a URL or header in an ordinary string
      doc += "[probes]\ntarget = " +
             Str(b, b.Pick(2) ? "https://bob:" + std::string(kSecret) + "@m/x"
                              : "Authorization: token " + std::string(kSecret)) +
             "\n";
      break;
  }
  return doc;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes b(data, size);
  std::string doc = Generate(b);
  std::string out = gpudoctor::RedactConfigToml(doc, {});
  if (out.find(kSecret) != std::string::npos) std::abort();
  if (gpudoctor::RedactText(out, {}).find(kSecret) != std::string::npos) std::abort();

  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string text(in);
  text.insert(text.size() / 2, kSecret);
  std::string secret(kSecret);
  if (gpudoctor::RedactConfigToml(text, {secret}).find(kSecret) != std::string::npos) std::abort();
  if (gpudoctor::RedactText(text, {secret}).find(kSecret) != std::string::npos) std::abort();
  (void)gpudoctor::SecretLookingName(in.substr(0, 64));
  return 0;
}
