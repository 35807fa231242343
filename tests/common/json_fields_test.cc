// JsonFields: typed fields of a JSON object, the first problem named by its path.
#include "common/json_fields.h"

#include <gtest/gtest.h>

namespace gpuscope::detail {
namespace {

using nlohmann::json;

TEST(JsonFields, ReadsFieldsAndNamesTheFirstProblemByItsPath) {
  const json j = {{"name", "H100"}, {"sm_count", 132}, {"tags", {"a", "b"}}, {"power", "high"}};
  JsonFields f(j, "gpus[0]");
  EXPECT_EQ(f.text("name"), "H100");
  EXPECT_EQ(f.opt_int("sm_count"), 132);
  EXPECT_EQ(f.texts("tags"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(f.texts("absent").empty());
  EXPECT_TRUE(f.list("absent").empty());
  EXPECT_TRUE(f.status().ok());
  EXPECT_FALSE(f.opt_number("power").has_value());
  (void)f.text("missing");  // a second problem: the first is kept
  EXPECT_EQ(f.status().code(), Code::data_error);
  EXPECT_EQ(f.status().message(), "gpus[0].power: expected a number");
}

TEST(JsonFields, EachTypedReaderReadsItsTypeNullAsAbsentAndNamesAnyOtherType) {
  const json j = {
      {"text", "a"}, {"number", 1.5}, {"integer", 7}, {"flag", true}, {"none", nullptr}};
  JsonFields f(j, "x");
  EXPECT_EQ(f.opt_text("text"), "a");
  EXPECT_EQ(f.opt_number("number"), 1.5);
  EXPECT_EQ(f.opt_number("integer"), 7.0);
  EXPECT_EQ(f.opt_int("integer"), 7);
  EXPECT_EQ(f.opt_bool("flag"), true);
  EXPECT_FALSE(f.opt_text("none").has_value());
  EXPECT_FALSE(f.opt_number("none").has_value());
  EXPECT_FALSE(f.opt_int("none").has_value());
  EXPECT_FALSE(f.opt_bool("none").has_value());
  EXPECT_TRUE(f.status().ok());

  JsonFields text(j, "x");
  EXPECT_FALSE(text.opt_text("number").has_value());
  EXPECT_EQ(text.status().message(), "x.number: expected a string");
  JsonFields integer(j, "x");
  EXPECT_FALSE(integer.opt_int("number").has_value());
  EXPECT_EQ(integer.status().message(), "x.number: expected an integer");
  JsonFields flag(j, "x");
  EXPECT_FALSE(flag.opt_bool("integer").has_value());
  EXPECT_EQ(flag.status().message(), "x.integer: expected true or false");
}

TEST(JsonFields, ListsAndTheDocumentsTopLevel) {
  const json j = {{"rows", 3}, {"warnings", {"ok", 1}}};
  JsonFields top(j, "");  // a document's top level: paths are the keys alone
  EXPECT_TRUE(top.list("rows").empty());
  EXPECT_EQ(top.status().message(), "rows: expected a list");
  JsonFields warnings(j, "bench");
  EXPECT_TRUE(warnings.texts("warnings").empty());
  EXPECT_EQ(warnings.status().message(), "bench.warnings: expected a list of strings");
  JsonFields not_object(json::array(), "targets[2]");
  EXPECT_EQ(not_object.status().message(), "targets[2]: expected an object");
}

}  // namespace
}  // namespace gpuscope::detail
