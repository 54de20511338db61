// The sampler's shared helpers (sampler_internal.h).
#include "nvml/sampler_internal.h"

#include <cmath>
#include <cstring>

#include "core/strings.h"

namespace gpudoctor::nvml_internal {

std::string TerminatedString(const char* buf, size_t size) {
  size_t len = strnlen(buf, size);
  if (len == size) return "";
  return Sanitize(std::string_view(buf, len), size);
}

std::optional<uint64_t> FieldUnsigned(const nvmlFieldValue_t& f) {
  if (f.nvmlReturn != nvml::NVML_SUCCESS) return std::nullopt;
  switch (f.valueType) {
    case nvml::NVML_VALUE_TYPE_UNSIGNED_INT:
      return f.value.uiVal;
    case nvml::NVML_VALUE_TYPE_UNSIGNED_LONG:
      return f.value.ulVal;
    case nvml::NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      if (f.value.ullVal == nvml::kValueNotAvailable) return std::nullopt;
      return f.value.ullVal;
    case nvml::NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      if (f.value.sllVal < 0) return std::nullopt;
      return static_cast<uint64_t>(f.value.sllVal);
    case nvml::NVML_VALUE_TYPE_SIGNED_INT:
      if (f.value.siVal < 0) return std::nullopt;
      return static_cast<uint64_t>(f.value.siVal);
    case nvml::NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return f.value.usVal;
    case nvml::NVML_VALUE_TYPE_DOUBLE:
      if (!std::isfinite(f.value.dVal) || f.value.dVal < 0 || f.value.dVal > 1.8e19) {
        return std::nullopt;
      }
      return static_cast<uint64_t>(f.value.dVal);
    default:
      return std::nullopt;
  }
}

double MsSince(TimePoint t) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t).count();
}

void NameFromCrumb(Breadcrumb& crumb, GpuFacts& f, NvmlHang& hang) {
  std::lock_guard<std::mutex> lock(crumb.mu);
  if (f.uuid.empty()) f.uuid = crumb.uuid;
  if (f.pci_bus_id.empty()) f.pci_bus_id = crumb.pci_bus_id;
  if (f.serial.empty()) f.serial = crumb.serial;
  if (f.name.empty()) f.name = crumb.name;
  hang.uuid = f.uuid;
  hang.pci_bus_id = f.pci_bus_id;
  hang.serial = f.serial;
  hang.name = f.name;
}

}  // namespace gpudoctor::nvml_internal
