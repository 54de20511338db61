// MakeFinding: the one way rules build a Finding, so every id comes from the catalogue.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "facts/gpu_facts.h"
#include "findings/finding.h"

namespace gpudoctor {

// Builds a finding with layer and default next steps taken from the catalogue entry `id`.
// Aborts on an id that is not in the catalogue (a bug, caught by tests).
Finding MakeFinding(std::string_view id, Severity severity, std::string summary);

struct CatalogueEntry;
// The action a finding of `entry` takes at `severity`: `action` at the entry's worst severity;
// below it, an action that takes the node out becomes "watch" (a warm GPU is watched, a hot one
// inspected). MakeFinding and a site's action override both go through it.
Action ActionAtSeverity(Action action, Severity severity, const CatalogueEntry& entry);

// Catalogue steps labelled with a case ("`local`: ...", "`tls`: ...") apply only to that case.
// Keeps the unlabelled steps and those labelled with one of `labels` (without their label), in
// catalogue order, so the advice fits the conclusion reached. A rule selects steps by label,
// never by position.
void KeepStepsFor(Finding& f, std::initializer_list<std::string_view> labels);
inline void KeepStepsFor(Finding& f, std::string_view label) { KeepStepsFor(f, {label}); }

// The GPU a finding is about, from its facts (index, UUID, bus id, serial, name).
GpuRef RefOf(const GpuFacts& g);
// MakeFinding about one GPU: summary prefixed "GPU N: ", gpu set, serial and bus id in evidence.
Finding GpuFinding(std::string_view id, Severity sev, const GpuFacts& g, std::string summary);

}  // namespace gpudoctor
