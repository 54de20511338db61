#include "probes/kept_proc_files.h"

namespace gpudoctor {

KeptProcFiles::KeptProcFiles(const RootFs& fs, std::initializer_list<std::string_view> names,
                             bool keep) {
  files_.reserve(names.size());
  for (std::string_view name : names) files_.emplace_back(fs.ProcPath(name), keep);
}

std::shared_ptr<KeptProcFiles> KeptProcFiles::ForRun(
    const ProbeContext& ctx, std::initializer_list<std::string_view> names) {
  if (auto* carry = dynamic_cast<const CarriesKeptFiles*>(ctx.previous.get())) {
    if (carry->kept_files != nullptr && carry->kept_files->size() == names.size()) {
      return carry->kept_files;
    }
  }
  return std::make_shared<KeptProcFiles>(ctx.fs(), names, ctx.continuous);
}

Result<std::string_view> KeptProcFiles::Read(size_t i, size_t max_bytes) {
  if (Status s = files_[i].Read(&text_, max_bytes); !s.ok()) return s;
  return std::string_view(text_);
}

}  // namespace gpudoctor
