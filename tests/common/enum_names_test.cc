// EnumName tables: one list of an enum's names read both ways, and its completeness check.
#include "common/enum_names.h"

#include <gtest/gtest.h>

namespace gpuscope::detail {
namespace {

enum class Colour { red, green, blue };

constexpr EnumName<Colour> kColours[] = {
    {Colour::red, "red"}, {Colour::green, "green"}, {Colour::blue, "blue"}};

TEST(EnumNames, NamesAValueAndFindsTheValueOfAName) {
  EXPECT_STREQ(name_in(kColours, Colour::green), "green");
  EXPECT_EQ(value_named(kColours, "blue"), Colour::blue);
  EXPECT_FALSE(value_named(kColours, "Blue").has_value());
  EXPECT_FALSE(value_named(kColours, "").has_value());
  for (const EnumName<Colour>& c : kColours) EXPECT_EQ(value_named(kColours, c.name), c.value);
}

TEST(EnumNames, AValueWithoutANameReadsAsTheFallback) {
  constexpr EnumName<Colour> kWarm[] = {{Colour::red, "red"}};
  EXPECT_STREQ(name_in(kWarm, Colour::blue), "unknown");
  EXPECT_STREQ(name_in(kWarm, Colour::blue, ""), "");
}

TEST(EnumNames, ATableNamesEveryValueOnlyWhenItListsThemAllInOrder) {
  static_assert(names_every_value(kColours, Colour::blue));
  constexpr EnumName<Colour> kMissing[] = {{Colour::red, "red"}, {Colour::green, "green"}};
  static_assert(!names_every_value(kMissing, Colour::blue));
  constexpr EnumName<Colour> kOutOfOrder[] = {
      {Colour::green, "green"}, {Colour::red, "red"}, {Colour::blue, "blue"}};
  static_assert(!names_every_value(kOutOfOrder, Colour::blue));
  SUCCEED();
}

}  // namespace
}  // namespace gpuscope::detail
