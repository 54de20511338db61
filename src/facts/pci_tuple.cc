#include "facts/pci_tuple.h"

#include "core/strings.h"

namespace gpudoctor {

std::optional<PciTuple> ParsePciTuple(std::string_view text) {
  if (StartsWith(text, "PCI:")) text.remove_prefix(4);
  return ParsePciBusId(text);
}

}  // namespace gpudoctor
