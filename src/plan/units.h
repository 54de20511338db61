// Units of the planner: data types (bytes per element) and byte sizes written by people
// ("80GiB", "40 GB"). Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace gpudoctor::plan {

enum class DType { kFp32, kFp16, kBf16, kFp8, kInt8, kInt4 };

double BytesPerElement(DType t);  // int4: 0.5
const char* DTypeName(DType t);   // "fp16"
// fp32, fp16, bf16, fp8 (also e4m3/e5m2), int8, int4. Error names the value.
Result<DType> ParseDType(std::string_view s);

// "80GiB", "80G" (= GiB), "80GB" (10^9), "512MiB", "1.5TiB", "123456" (bytes). Must be > 0.
Result<uint64_t> ParseByteSize(std::string_view s);

// "12.3 GiB" (IEC, one decimal).
std::string FormatGiB(double bytes);

}  // namespace gpudoctor::plan
