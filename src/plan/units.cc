#include "plan/units.h"

#include <cctype>
#include <cmath>
#include <string>

#include "core/strings.h"

namespace gpudoctor::plan {

double BytesPerElement(DType t) {
  switch (t) {
    case DType::kFp32:
      return 4;
    case DType::kFp16:
    case DType::kBf16:
      return 2;
    case DType::kFp8:
    case DType::kInt8:
      return 1;
    case DType::kInt4:
      return 0.5;
  }
  return 2;
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFp32:
      return "fp32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
    case DType::kInt8:
      return "int8";
    case DType::kInt4:
      return "int4";
  }
  return "?";
}

Result<DType> ParseDType(std::string_view s) {
  std::string v(Trim(s));
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "fp32" || v == "float32") return DType::kFp32;
  if (v == "fp16" || v == "float16" || v == "half") return DType::kFp16;
  if (v == "bf16" || v == "bfloat16") return DType::kBf16;
  if (v == "fp8" || v == "fp8_e4m3" || v == "fp8_e5m2" || v == "e4m3" || v == "e5m2") {
    return DType::kFp8;
  }
  if (v == "int8") return DType::kInt8;
  if (v == "int4") return DType::kInt4;
  return InvalidArgument("unknown data type '" + Sanitize(s, 40) +
                         "' (expected fp32, fp16, bf16, fp8, int8 or int4)");
}

Result<uint64_t> ParseByteSize(std::string_view s) {
  std::string_view t = Trim(s);
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.' ||
                          t[i] == '-' || t[i] == '+' || t[i] == 'e')) {
    // 'e' only as an exponent (digits on both sides); a unit never starts with 'e'.
    ++i;
  }
  auto number = ParseDouble(t.substr(0, i));
  std::string unit(Trim(t.substr(i)));
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mult = 0;
  if (unit.empty() || unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kib") {
    mult = 1024.0;
  } else if (unit == "kb") {
    mult = 1e3;
  } else if (unit == "m" || unit == "mib") {
    mult = 1024.0 * 1024;
  } else if (unit == "mb") {
    mult = 1e6;
  } else if (unit == "g" || unit == "gib") {
    mult = 1024.0 * 1024 * 1024;
  } else if (unit == "gb") {
    mult = 1e9;
  } else if (unit == "t" || unit == "tib") {
    mult = 1024.0 * 1024 * 1024 * 1024;
  } else if (unit == "tb") {
    mult = 1e12;
  }
  if (!number || mult == 0) {
    return InvalidArgument("expected a size like 80GiB, 40GB or 512MiB, got '" + Sanitize(s, 40) +
                           "'");
  }
  double bytes = *number * mult;
  if (!(bytes >= 1) || bytes > 1e18) {
    return InvalidArgument("size must be positive and below 1 EB, got '" + Sanitize(s, 40) + "'");
  }
  return static_cast<uint64_t>(std::llround(bytes));
}

std::string FormatGiB(double bytes) {
  return FormatDouble(bytes / (1024.0 * 1024 * 1024), 1) + " GiB";
}

}  // namespace gpudoctor::plan
