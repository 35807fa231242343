#include "report/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpuscope::report {
namespace {

TEST(DisplayWidth, CountsCodePointsNotBytes) {
  EXPECT_EQ(display_width(""), 0u);
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("72 °C"), 5u);  // "°" is two bytes in UTF-8
  EXPECT_EQ(display_width("±5 µs"), 5u);
}

TEST(TextTable, AlignsColumnsHoldingMultiByteCharacters) {
  TextTable table({"gpu", "temp", "power"});
  table.add_row({"0", "72 °C", "350 W"});
  table.add_row({"1", "8 °C", "1 W"});
  std::ostringstream out;
  table.print(out, 2);
  EXPECT_EQ(out.str(),
            "  gpu  temp   power\n"
            "  0    72 °C  350 W\n"
            "  1    8 °C   1 W\n");
}

TEST(TextTable, LeavesNoTrailingBlanks) {
  TextTable table({"name", "note"});
  table.add_row({"a", ""});
  std::ostringstream out;
  table.print(out);
  EXPECT_EQ(out.str(), "name  note\na\n");
}

}  // namespace
}  // namespace gpuscope::report
