// Looking things up in a built report Document, for the report's tests.
#pragma once

#include <string>
#include <variant>

#include "gpuscope/report.h"

namespace gpuscope::report::testing {

// The first block of type Block with this key in any section, or null.
template <typename Block>
const Block* find_block(const Document& doc, const std::string& key) {
  for (const Section& s : doc.sections) {
    for (const auto& block : s.blocks) {
      if (const auto* b = std::get_if<Block>(&block); b && b->key == key) return b;
    }
  }
  return nullptr;
}

}  // namespace gpuscope::report::testing
