// Driver-reported codes that GPU facts carry as plain numbers, named for the rules. The values
// are NVML's ABI (../shared/reference/nvml.md): src/nvml/abi.h static_asserts that its own
// declarations equal these, so rules can judge GPU facts without including any NVML header.
#pragma once

#include <cstdint>

namespace gpudoctor::gpu_codes {

// nvmlReturn_t values kept in NvmlStatus::init_return and NvmlCallError::code.
inline constexpr int kNotSupported = 3;
inline constexpr int kNoPermission = 4;
inline constexpr int kInsufficientPower = 8;
inline constexpr int kDriverNotLoaded = 9;
inline constexpr int kIrqIssue = 11;
inline constexpr int kFunctionNotFound = 13;
inline constexpr int kCorruptedInforom = 14;
inline constexpr int kGpuIsLost = 15;
inline constexpr int kResetRequired = 16;
inline constexpr int kOperatingSystem = 17;
inline constexpr int kLibRmVersionMismatch = 18;
inline constexpr int kUnknownError = 999;

// Bits of GpuCounterRead::clock_event_reasons (clocks-event / throttle reasons).
inline constexpr uint64_t kReasonGpuIdle = 0x1;
inline constexpr uint64_t kReasonApplicationsClocks = 0x2;
inline constexpr uint64_t kReasonSwPowerCap = 0x4;
inline constexpr uint64_t kReasonHwSlowdown = 0x8;
inline constexpr uint64_t kReasonSyncBoost = 0x10;
inline constexpr uint64_t kReasonSwThermal = 0x20;
inline constexpr uint64_t kReasonHwThermal = 0x40;
inline constexpr uint64_t kReasonHwPowerBrake = 0x80;
inline constexpr uint64_t kReasonDisplayClock = 0x100;

}  // namespace gpudoctor::gpu_codes
