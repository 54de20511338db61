// Symptoms as users report them ("nvidia-smi hangs", "training got slow") mapped to the findings
// that decide them and the commands to run. Data only (src/rules/symptoms.cc); `gpudoctor explain
// --symptoms` lists them and `explain --symptom TEXT` prints one. A test checks that every
// finding id named here exists in the catalogue.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpudoctor {

struct Symptom {
  std::string_view key;    // "nvidia-smi-hangs"
  std::string_view title;  // "nvidia-smi is slow or hangs"
  // Lower-case phrases; a query containing one of them (or equal to key) selects the symptom.
  std::vector<std::string_view> phrases;
  std::string_view reasoning;                 // what usually causes it, in the order to check
  std::vector<std::string_view> finding_ids;  // catalogue ids that decide it
  std::vector<std::string_view> commands;     // gpudoctor and system commands to run
};

const std::vector<Symptom>& Symptoms();
// The first symptom whose key equals the query or whose phrase it contains (case-insensitive);
// nullptr when none does.
const Symptom* FindSymptom(std::string_view query);

}  // namespace gpudoctor
