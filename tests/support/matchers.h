// Matchers several tests share.
#pragma once

#include <gmock/gmock.h>

#include <string>
#include <utility>
#include <vector>

namespace gpuscope::testing {

// Matches a string that contains every one of `parts`: the HasSubstr of each, all of them. A
// mismatch shows every part expected and the text.
inline ::testing::Matcher<const std::string&> HasAllSubstrs(std::vector<std::string> parts) {
  std::vector<::testing::Matcher<const std::string&>> each;
  for (std::string& part : parts) each.push_back(::testing::HasSubstr(std::move(part)));
  return ::testing::AllOfArray(each);
}

}  // namespace gpuscope::testing
