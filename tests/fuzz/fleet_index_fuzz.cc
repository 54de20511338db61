// Fuzzes the two fleet cache files read from the user's cache directory: the query index
// (query_index.h: header, serial and slot tables, record offsets, records; then the card or
// slot verdict from what decodes) and the report index (report_index.h: files, documents,
// parsed reports; each decoded report applied). The checksum in the file header is not what
// keeps a bad file out (a file can be written with a valid checksum), so the payload decoders
// get the input directly, after the framing check on the same bytes.
// Input: byte 0 bit 0 = card (else slot), bit 1 = the report index (else the query index);
// byte 1 = subject length n; n bytes of subject; the rest is the payload.
// Must never crash, hang, throw or read outside the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fleet/analysis.h"
#include "fleet/index_file.h"
#include "fleet/ledger.h"
#include "fleet/onsets.h"
#include "fleet/query_index.h"
#include "fleet/report_index.h"
#include "fleet/report_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpudoctor::fleet;
  if (size < 2) return 0;
  const bool card = (data[0] & 1) != 0;
  const bool report_index = (data[0] & 2) != 0;
  const size_t n = data[1];
  if (size < 2 + n) return 0;
  const std::string subject(reinterpret_cast<const char*>(data + 2), n);
  // A copy the size of the payload, so reading past it is caught by the sanitizer.
  const std::string payload(reinterpret_cast<const char*>(data + 2 + n), size - 2 - n);
  std::string why;
  if (report_index) {
    ReportIndex index = ReportIndex::FromPayload(payload, &why);
    FleetData d;
    std::vector<std::pair<std::string, std::pair<uint64_t, int64_t>>> entries;
    for (const auto& [path, file] : index.files()) {
      entries.push_back({path, {file.size, file.mtime_ns}});
    }
    std::vector<IndexedDoc> docs;
    for (const auto& [path, key] : entries) {
      if (!index.Has(path, key.first, key.second)) __builtin_trap();
      if (!index.Decode(path, key.first, key.second, docs)) continue;
      for (auto& doc : docs) {
        if (doc.ok) (void)AddParsedReport(std::move(doc.report), doc.source, 1900000000, d);
      }
    }
    auto ledger = BuildLedger(d);
    auto faults = HardwareFaults(d, FindOnsets(d));
    std::string out = RenderVerdictJson(card ? JudgeCard(subject, ledger, faults)
                                             : JudgeSlot(subject, ledger, faults));
  } else {
    ReadStats st;
    auto answer = AnswerFromQueryPayload(payload, card, subject, &st);
    if (answer) {
      std::string out = RenderVerdictJson(answer->verdict);
      (void)out;
    }
  }
  // The framing: any bytes are refused or give a payload inside them.
  const IndexFileKind kind{"GDFLEETQRY", 1, "fleet query index"};
  auto checked = CheckIndexBytes(payload, kind, &why);
  if (checked && (checked->data() < payload.data() ||
                  checked->data() + checked->size() > payload.data() + payload.size())) {
    __builtin_trap();
  }
  return 0;
}
