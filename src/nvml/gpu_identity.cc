// GpuSampler: the handle, identity and per-boot constants of a GPU (name, UUID, serial, PCI,
// VBIOS, persistence mode, ECC mode, maximum clocks and PCIe link, temperature limits), read
// once per enumeration in a session and once per check.
#include <cstring>

#include "core/strings.h"
#include "facts/pci_bus_id.h"
#include "nvml/gpu_sampler.h"

namespace gpudoctor::nvml_internal {

bool GpuSampler::Handle() {
  nvmlReturn_t r = NVML_CALL(calls_, DeviceGetHandleByIndex, static_cast<unsigned>(index_), &dev_);
  if (!Ok(r, names().DeviceGetHandleByIndex)) {
    dev_ = nullptr;
    return false;
  }
  return true;
}

void GpuSampler::CopyConstants(const GpuFacts& c) {
  f_.name = c.name;
  f_.uuid = c.uuid;
  f_.serial = c.serial;
  f_.vbios = c.vbios;
  f_.pci_bus_id = c.pci_bus_id;
  f_.pci_device_id = c.pci_device_id;
  f_.max_sm_clock_mhz = c.max_sm_clock_mhz;
  f_.max_memory_clock_mhz = c.max_memory_clock_mhz;
  f_.max_graphics_clock_mhz = c.max_graphics_clock_mhz;
  f_.pcie_max_gen = c.pcie_max_gen;
  f_.pcie_max_width = c.pcie_max_width;
  f_.temp_slowdown_c = c.temp_slowdown_c;
  f_.temp_shutdown_c = c.temp_shutdown_c;
  f_.temp_memory_max_c = c.temp_memory_max_c;
  f_.persistence_on = c.persistence_on;            // per boot: read with the identity
  if (NoFields()) f_.ecc_enabled = c.ecc_enabled;  // nvmlDeviceGetEccMode, per boot
}

std::string GpuSampler::ReadString(nvmlReturn_t (*fn)(nvmlDevice_t, char*, unsigned),
                                   const std::string& symbol, unsigned size) {
  char buf[128];
  std::memset(buf, 0, sizeof buf);
  if (size >= sizeof buf) size = sizeof buf - 1;
  if (!Ok(calls_.Make(symbol, fn, dev_, buf, size), symbol)) return "";
  return TerminatedString(buf, size);
}

void GpuSampler::Identity(bool with_vbios) {
  f_.name = ReadString(api().DeviceGetName, names().DeviceGetName, nvml::kDeviceNameBufferSize);
  if (Stop()) return;
  f_.uuid = ReadString(api().DeviceGetUuid, names().DeviceGetUuid, nvml::kDeviceUuidBufferSize);
  if (Stop()) return;
  f_.serial = SerialOrEmpty(
      ReadString(api().DeviceGetSerial, names().DeviceGetSerial, nvml::kDeviceSerialBufferSize));
  if (Stop()) return;
  nvml::nvmlPciInfo_t pci;
  std::memset(&pci, 0, sizeof pci);
  if (Ok(NVML_CALL(calls_, DeviceGetPciInfo, dev_, &pci), names().DeviceGetPciInfo)) {
    f_.pci_bus_id = NormalizePciBusId(TerminatedString(pci.busId, sizeof pci.busId));
    if (f_.pci_bus_id.empty() && pci.bus <= 0xff && pci.device <= 0x1f) {
      f_.pci_bus_id = FormatPciBusId({pci.domain, pci.bus, pci.device, 0});
    }
    if ((pci.pciDeviceId & 0xffff) == 0x10de) f_.pci_device_id = pci.pciDeviceId;
  }
  if (Stop()) return;
  PublishIdentity();
  if (with_vbios) Vbios();
}

void GpuSampler::Vbios() {
  f_.vbios = ReadString(api().DeviceGetVbiosVersion, names().DeviceGetVbiosVersion,
                        nvml::kDeviceVbiosVersionBufferSize);
}

// The maximum PCIe link, which the degradation rule compares a busy GPU's current link with.
void GpuSampler::MaxPcieLink() {
  if (auto g =
          ReadUint(api().DeviceGetMaxPcieLinkGeneration, names().DeviceGetMaxPcieLinkGeneration)) {
    f_.pcie_max_gen = InRange(*g, 1, 7);
  }
  if (Stop()) return;
  if (auto w = ReadUint(api().DeviceGetMaxPcieLinkWidth, names().DeviceGetMaxPcieLinkWidth);
      w && ValidPcieWidth(*w)) {
    f_.pcie_max_width = *w;
  }
}

std::optional<int> GpuSampler::Threshold(int which) {
  auto v = ReadUintArg(api().DeviceGetTemperatureThreshold, names().DeviceGetTemperatureThreshold,
                       which);
  if (!v || *v < 1 || *v > static_cast<uint32_t>(kMaxTempC) + 50) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<uint32_t> GpuSampler::MaxClock(int type) {
  auto v = ReadUintArg(api().DeviceGetMaxClockInfo, names().DeviceGetMaxClockInfo, type);
  return v ? InRange(*v, 1, kMaxClockMhz) : std::nullopt;
}

// Temperature limits (absolute degrees C) from nvmlDeviceGetTemperatureThreshold. Fields
// 193-195 are not used: they report the distance to the limit (nvidia-smi's "T.Limit"), not
// the limit itself.
// The memory limit only matters with the memory temperature, a batched field.
void GpuSampler::TemperatureLimits() {
  f_.temp_shutdown_c = Threshold(nvml::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
  if (Stop()) return;
  f_.temp_slowdown_c = Threshold(nvml::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
  if (Stop() || NoFields()) return;
  f_.temp_memory_max_c = Threshold(nvml::NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
}

// nvmlDeviceGetEccMode: the current mode (the pending one takes effect at the next reboot).
void GpuSampler::EccMode() {
  int current = -1, pending = -1;
  if (Ok(NVML_CALL(calls_, DeviceGetEccMode, dev_, &current, &pending), names().DeviceGetEccMode) &&
      (current == 0 || current == 1)) {
    f_.ecc_enabled = current == 1;
  }
}

// A check reads the maximum link only for a busy GPU (FirstSample): an idle one is not judged.
void GpuSampler::Limits(bool with_max_link) {
  f_.max_sm_clock_mhz = MaxClock(nvml::NVML_CLOCK_SM);
  if (Stop()) return;
  // ECC mode comes with the batch otherwise. The memory and graphics maxima, which no rule
  // judges, are left to the end of a check (and to the identity of a session).
  if (NoFields()) EccMode();
  if (Stop()) return;
  int mode = -1;
  if (Ok(NVML_CALL(calls_, DeviceGetPersistenceMode, dev_, &mode),
         names().DeviceGetPersistenceMode) &&
      (mode == 0 || mode == 1)) {
    f_.persistence_on = mode == 1;
  }
  if (Stop()) return;
  if (with_max_link) MaxPcieLink();
}

}  // namespace gpudoctor::nvml_internal
