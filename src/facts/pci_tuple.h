// PciTuple: the kernel log's name for a PCI device address. One implementation serves every
// layer (facts/pci_bus_id.h): all textual forms are parsed to integers and compared as such,
// never as strings (xid.md section 7). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "facts/pci_bus_id.h"

namespace gpudoctor {

using PciTuple = PciAddress;

// As ParsePciBusId, also accepting the Xid line's "PCI:" prefix ("PCI:0000:3b:00").
std::optional<PciTuple> ParsePciTuple(std::string_view text);

}  // namespace gpudoctor
