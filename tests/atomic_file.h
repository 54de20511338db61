// Write-then-rename for the files a running process re-reads while a test changes them (the fake
// NVML's live scenario, a stand-in server's state file): the reader sees the old content or the
// new, never half a file. A failed rename fails the test (ADD_FAILURE). For tests only.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "test_util.h"

namespace gpudoctor::testing {

// Writes `text` to PATH.tmp, then renames it over `path`.
inline void WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) ADD_FAILURE() << "rename to " << path;
}

// The fake NVML's live scenario: tests/fixtures/nvml/`fixture` included, then `extra` lines.
inline void WriteScenario(const std::string& path, const std::string& fixture,
                          const std::string& extra = "") {
  WriteAtomically(path, "include=" + FixturePath("nvml/" + fixture) + "\n" + extra);
}

}  // namespace gpudoctor::testing
