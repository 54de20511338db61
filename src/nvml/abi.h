// NVML ABI as gpudoctor uses it: our own declarations of the handful of NVML types, constants
// and structs we touch, written from ../shared/reference/nvml.md (NVML API 13, x86_64 layouts
// measured against the 13.3.29 header). No NVIDIA header is needed to build.
//
// Every struct carries static_asserts on size and offsets: a build on a new platform that lays
// them out differently fails here instead of misreading driver memory. The fake NVML
// (tests/fake_nvml) includes this header too, so both sides agree by construction; a session
// with a real GPU can check the same sizes against the driver's header.
// Plain data; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "facts/gpu_codes.h"

namespace gpudoctor::nvml {

using nvmlReturn_t = int;  // all NVML enums are 4-byte ints; kept as int so unknown codes survive
typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

// nvmlReturn_t values (nvml.md §4.1).
enum : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
  NVML_ERROR_UNKNOWN = 999,
};

// Buffer sizes (nvml.md §3).
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned kSystemNvmlVersionBufferSize = 80;
inline constexpr unsigned kDeviceNameBufferSize = 96;
inline constexpr unsigned kDeviceUuidBufferSize = 96;
inline constexpr unsigned kDeviceSerialBufferSize = 30;
inline constexpr unsigned kDeviceVbiosVersionBufferSize = 32;
inline constexpr unsigned kNvLinkMaxLinks = 36;

// Enums (nvml.md §4.2), as plain ints.
enum : int { NVML_TEMPERATURE_GPU = 0 };
enum : int {
  NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
  NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3,
};
enum : int { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
enum : int { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum : int { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
// nvmlNvLinkErrorCounter_t (per-link counters of nvmlDeviceGetNvLinkErrorCounter).
enum : int {
  NVML_NVLINK_ERROR_DL_REPLAY = 0,
  NVML_NVLINK_ERROR_DL_RECOVERY = 1,
  NVML_NVLINK_ERROR_DL_CRC_FLIT = 2,
  NVML_NVLINK_ERROR_DL_CRC_DATA = 3,
};
enum : int { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum : int { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
enum : int {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
};

// Field ids for nvmlDeviceGetFieldValues (nvml.md §3; NVML_FI_DEV_ prefix dropped).
enum : unsigned {
  kFieldEccCurrent = 1,
  kFieldEccSbeVolatileTotal = 3,
  kFieldEccDbeVolatileTotal = 4,
  kFieldEccSbeAggregateTotal = 5,
  kFieldEccDbeAggregateTotal = 6,
  kFieldRetiredSbe = 29,
  kFieldRetiredDbe = 30,
  kFieldRetiredPending = 31,
  kFieldNvLinkCrcFlitErrorTotal = 38,
  kFieldNvLinkCrcDataErrorTotal = 45,
  kFieldNvLinkReplayErrorTotal = 52,
  kFieldNvLinkRecoveryErrorTotal = 59,
  kFieldMemoryTemp = 82,
  kFieldTotalEnergyConsumption = 83,  // mJ since the driver loaded
  kFieldNvLinkLinkCount = 91,
  kFieldPcieReplayCounter = 94,
  // NVLink data (payload) throughput counters, cumulative KiB since the driver loaded; scopeId a
  // link, or kScopeAllLinks for the sum over every link (nvml.h, NVML_FI_DEV_NVLINK_THROUGHPUT_*).
  kFieldNvLinkThroughputDataTx = 138,
  kFieldNvLinkThroughputDataRx = 139,
  kFieldRemappedCorrectable = 142,
  kFieldRemappedUncorrectable = 143,
  kFieldRemappedPending = 144,
  kFieldRemappedFailure = 145,
  kFieldNvLinkGetState = 165,  // scopeId = link
  kFieldPowerInstant = 186,    // mW, scopeId 0 = GPU
  kFieldPowerCurrentLimit = 190,
  // 193-196 (*_TLIMIT) are distances to the temperature limits, not limits: unused, see sampler.
};

// scopeId of a per-link field that asks for the sum over all links (nvml.h: UINT_MAX).
inline constexpr unsigned kScopeAllLinks = 0xFFFFFFFFu;

// Event type bits (nvml.md §4.3).
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;

// Clock event ("throttle") reason bits (nvml.md §4.4).
inline constexpr unsigned long long kClocksReasonGpuIdle = 0x1ULL;
inline constexpr unsigned long long kClocksReasonApplicationsClocks = 0x2ULL;
inline constexpr unsigned long long kClocksReasonSwPowerCap = 0x4ULL;
inline constexpr unsigned long long kClocksReasonHwSlowdown = 0x8ULL;
inline constexpr unsigned long long kClocksReasonSyncBoost = 0x10ULL;
inline constexpr unsigned long long kClocksReasonSwThermal = 0x20ULL;
inline constexpr unsigned long long kClocksReasonHwThermal = 0x40ULL;
inline constexpr unsigned long long kClocksReasonHwPowerBrake = 0x80ULL;
inline constexpr unsigned long long kClocksReasonDisplayClock = 0x100ULL;
inline constexpr unsigned long long kClocksReasonAllKnown = 0x1FFULL;

// "Value not available" sentinel (e.g. usedGpuMemory): all ones.
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

struct nvmlPciInfo_t {
  char busIdLegacy[16];  // "%04X:%02X:%02X.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // device id << 16 | vendor id
  unsigned int pciSubSystemId;
  char busId[32];  // "%08X:%02X:%02X.0"
};
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(alignof(nvmlPciInfo_t) == 4);
static_assert(offsetof(nvmlPciInfo_t, domain) == 16);
static_assert(offsetof(nvmlPciInfo_t, bus) == 20);
static_assert(offsetof(nvmlPciInfo_t, device) == 24);
static_assert(offsetof(nvmlPciInfo_t, pciDeviceId) == 28);
static_assert(offsetof(nvmlPciInfo_t, pciSubSystemId) == 32);
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);

struct nvmlUtilization_t {
  unsigned int gpu;     // percent
  unsigned int memory;  // percent
};
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(offsetof(nvmlUtilization_t, memory) == 4);

struct nvmlMemory_t {  // v1
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(offsetof(nvmlMemory_t, free) == 8);
static_assert(offsetof(nvmlMemory_t, used) == 16);

struct nvmlMemory_v2_t {
  unsigned int version;  // kMemoryV2Version
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(offsetof(nvmlMemory_v2_t, total) == 8);
static_assert(offsetof(nvmlMemory_v2_t, reserved) == 16);
static_assert(offsetof(nvmlMemory_v2_t, free) == 24);
static_assert(offsetof(nvmlMemory_v2_t, used) == 32);
// NVML_STRUCT_VERSION(Memory, 2) = sizeof | 2 << 24.
inline constexpr unsigned kMemoryV2Version = sizeof(nvmlMemory_v2_t) | (2u << 24);
static_assert(kMemoryV2Version == 0x02000028u);

struct nvmlProcessInfo_t {  // = nvmlProcessInfo_v2_t, used by the _v2 and _v3 calls
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes, or kValueNotAvailable
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(nvmlProcessInfo_t) == 24);
static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16);
static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20);

struct nvmlProcessInfo_v1_t {  // plain (unversioned) process calls
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(offsetof(nvmlProcessInfo_v1_t, usedGpuMemory) == 8);

struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // Xid for kEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(nvmlEventData_t) == 32);
static_assert(offsetof(nvmlEventData_t, eventType) == 8);
static_assert(offsetof(nvmlEventData_t, eventData) == 16);
static_assert(offsetof(nvmlEventData_t, gpuInstanceId) == 24);
static_assert(offsetof(nvmlEventData_t, computeInstanceId) == 28);

struct nvmlTemperature_t {  // v1, for nvmlDeviceGetTemperatureV
  unsigned int version;     // kTemperatureV1Version
  int sensorType;
  int temperature;
};
static_assert(sizeof(nvmlTemperature_t) == 12);
static_assert(offsetof(nvmlTemperature_t, temperature) == 8);
inline constexpr unsigned kTemperatureV1Version = sizeof(nvmlTemperature_t) | (1u << 24);
static_assert(kTemperatureV1Version == 0x0100000Cu);

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
};
static_assert(sizeof(nvmlValue_t) == 8);

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;  // link id for NVLink fields
  long long timestamp;   // µs since epoch
  long long latencyUsec;
  int valueType;   // NVML_VALUE_TYPE_*
  int nvmlReturn;  // per-entry status: check before reading value
  nvmlValue_t value;
};
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(offsetof(nvmlFieldValue_t, scopeId) == 4);
static_assert(offsetof(nvmlFieldValue_t, timestamp) == 8);
static_assert(offsetof(nvmlFieldValue_t, latencyUsec) == 16);
static_assert(offsetof(nvmlFieldValue_t, valueType) == 24);
static_assert(offsetof(nvmlFieldValue_t, nvmlReturn) == 28);
static_assert(offsetof(nvmlFieldValue_t, value) == 32);

static_assert(sizeof(nvmlDevice_t) == 8 && sizeof(nvmlEventSet_t) == 8, "x86_64/aarch64 LP64 only");

// The rules judge these codes through facts/gpu_codes.h; both must stay equal.
static_assert(NVML_ERROR_NOT_SUPPORTED == gpu_codes::kNotSupported);
static_assert(NVML_ERROR_NO_PERMISSION == gpu_codes::kNoPermission);
static_assert(NVML_ERROR_INSUFFICIENT_POWER == gpu_codes::kInsufficientPower);
static_assert(NVML_ERROR_DRIVER_NOT_LOADED == gpu_codes::kDriverNotLoaded);
static_assert(NVML_ERROR_IRQ_ISSUE == gpu_codes::kIrqIssue);
static_assert(NVML_ERROR_FUNCTION_NOT_FOUND == gpu_codes::kFunctionNotFound);
static_assert(NVML_ERROR_CORRUPTED_INFOROM == gpu_codes::kCorruptedInforom);
static_assert(NVML_ERROR_GPU_IS_LOST == gpu_codes::kGpuIsLost);
static_assert(NVML_ERROR_RESET_REQUIRED == gpu_codes::kResetRequired);
static_assert(NVML_ERROR_OPERATING_SYSTEM == gpu_codes::kOperatingSystem);
static_assert(NVML_ERROR_LIB_RM_VERSION_MISMATCH == gpu_codes::kLibRmVersionMismatch);
static_assert(NVML_ERROR_UNKNOWN == gpu_codes::kUnknownError);
static_assert(kClocksReasonSwPowerCap == gpu_codes::kReasonSwPowerCap);
static_assert(kClocksReasonHwSlowdown == gpu_codes::kReasonHwSlowdown);
static_assert(kClocksReasonSwThermal == gpu_codes::kReasonSwThermal);
static_assert(kClocksReasonHwThermal == gpu_codes::kReasonHwThermal);
static_assert(kClocksReasonHwPowerBrake == gpu_codes::kReasonHwPowerBrake);
static_assert(kClocksReasonDisplayClock == gpu_codes::kReasonDisplayClock);

}  // namespace gpudoctor::nvml
