// ftracetest trigger/inter-event/trigger-synthetic-event-syntax.tc: the
// forms synthetic_events takes (spacing around ';', every field type) and
// what it lists for each, the refusals (no fields, a name already used),
// and removal and replacement. Each accepted form is also checked in the
// event's format file: the fields the kernel made are the fields written.
#include <cerrno>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/decode/event_format.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/testing/tracefs_fixture.h"
#include "suites/synthetic/synthetic_raw.h"

namespace tracebed::suites {
namespace {

// The stacktrace type (6.10+, README "long[] stack").
const Feature kSynthStack = Feature::readme("synthetic stacktrace fields", "long[]");

struct Form {
  const char* name;
  std::string fields;  // after the event name
  std::string listed;  // synthetic_events' line after "<name>\t"
  std::vector<std::string> format_fields;
  bool needs_stack = false;
};

void PrintTo(const Form& f, std::ostream* os) { *os << f.fields; }

const std::vector<Form> kForms = {
    {"one_field", "u64 var1", "u64 var1", {"var1"}},
    // The original form (histogram.rst's wakeup_latency): fields between
    // spaces, no semicolons, taken while no field needs the newer syntax.
    {"fields_without_semicolons", "u64 lat pid_t pid int prio", "u64 lat; pid_t pid; int prio", {"lat", "pid", "prio"}},
    {"trailing_semicolon", "u64 var1; u64 var2;", "u64 var1; u64 var2", {"var1", "var2"}},
    {"spaced_semicolons", "u64 var1 ; u64 var2 ;", "u64 var1; u64 var2", {"var1", "var2"}},
    {"semicolon_before_type", "u64 var1 ;u64 var2", "u64 var1; u64 var2", {"var1", "var2"}},
    {"u32", "u32 var", "u32 var", {"var"}},
    {"u16", "u16 var", "u16 var", {"var"}},
    {"u8", "u8 var", "u8 var", {"var"}},
    {"s64", "s64 var", "s64 var", {"var"}},
    {"s32", "s32 var", "s32 var", {"var"}},
    {"s16", "s16 var", "s16 var", {"var"}},
    {"s8", "s8 var", "s8 var", {"var"}},
    {"char", "char var", "char var", {"var"}},
    {"int", "int var", "int var", {"var"}},
    {"long", "long var", "long var", {"var"}},
    {"pid_t", "pid_t var", "pid_t var", {"var"}},
    {"unsigned_char", "unsigned char var", "unsigned char var", {"var"}},
    {"unsigned_int", "unsigned int var", "unsigned int var", {"var"}},
    {"unsigned_long", "unsigned long var", "unsigned long var", {"var"}},
    {"char_array", "char var[10]", "char[10] var", {"var"}},
    {"stacktrace", "unsigned long[] var", "unsigned long[] var", {"var"}, true},
};

class SyntheticForm : public TracefsTest, public ::testing::WithParamInterface<Form> {
 protected:
  SyntheticForm() : TracefsTest({features::synthetic_events}) {}
};

// The line synthetic_events lists for `name`, without the name.
std::string listed_fields(const std::string& text, const std::string& name) {
  for (std::string_view line : tracefs::split_lines(text))
    if (line.starts_with(name + "\t")) return std::string(line.substr(name.size() + 1));
  return "(not listed)";
}

TEST_P(SyntheticForm, IsListedInItsCanonicalForm) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic-event-syntax.tc");
  const Form& f = GetParam();
  if (f.needs_stack) TRACEBED_REQUIRE(kSynthStack);
  const tracefs::Files top = fs().top().files();
  std::string name = unique("myevent");
  RemoveSynthAtEnd cleanup{top, name};
  ASSERT_OK(top.append("synthetic_events", name + " " + f.fields));
  auto text = top.read("synthetic_events");
  ASSERT_OK(text);
  EXPECT_EQ(listed_fields(*text, name), f.listed) << *text;
  auto format_text = top.read("events/synthetic/" + name + "/format");
  ASSERT_OK(format_text);
  auto format = decode::parse_event_format(*format_text, "synthetic", name);
  ASSERT_OK(format);
  std::vector<std::string> fields;
  for (const decode::Field& field : (*format)->fields)
    if (!field.name.starts_with("common_")) fields.push_back(field.name);
  EXPECT_EQ(fields, f.format_fields) << *format_text;
}

INSTANTIATE_TEST_SUITE_P(Synthetic, SyntheticForm, ::testing::ValuesIn(kForms),
                         [](const ::testing::TestParamInfo<Form>& p) { return std::string(p.param.name); });

TRACEBED_SUITE_REQUIRES(SyntheticSyntax, features::synthetic_events);

// No fields, or a name already taken, is refused and changes nothing;
// "!name" removes; a truncating write replaces every event with the new one.
TEST_F(SyntheticSyntax, RefusalsRemovalAndReplacement) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic-event-syntax.tc");
  const tracefs::Files top = fs().top().files();
  std::string name = unique("myevent");
  RemoveSynthAtEnd cleanup{top, name};
  auto listed = [&] {
    auto text = top.read("synthetic_events");
    EXPECT_OK(text);
    return text ? listed_fields(*text, name) : std::string();
  };
  auto err = top.try_write("synthetic_events", name, true);
  ASSERT_OK(err);
  EXPECT_NE(*err, 0) << "an event without fields was accepted";
  EXPECT_EQ(listed(), "(not listed)");

  ASSERT_OK(top.append("synthetic_events", name + " u64 var1"));
  err = top.try_write("synthetic_events", name + " u64 var2", true);
  ASSERT_OK(err);
  EXPECT_NE(*err, 0) << "a second event of the same name was accepted";
  EXPECT_EQ(listed(), "u64 var1") << "the refused write changed the event";
  if (features().has(features::error_log)) {
    auto log = fs().top().error_log();
    ASSERT_OK(log);
    ASSERT_THAT(*log, Not(IsEmpty()));
    EXPECT_THAT(log->back().error, HasSubstr("already exists")) << log->back().str();
  }

  ASSERT_OK(top.append("synthetic_events", "!" + name));
  EXPECT_EQ(listed(), "(not listed)");
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/synthetic/" + name));
  ASSERT_OK(top.append("synthetic_events", name + " u64 var1"));
  EXPECT_EQ(listed(), "u64 var1");

  // `>`: the old definition goes, the new one is the only one.
  std::string other = unique("myevent");
  RemoveSynthAtEnd cleanup_other{top, other};
  ASSERT_OK(top.append("synthetic_events", other + " u8 x"));
  ASSERT_OK(top.write("synthetic_events", name + " u64 var2"));
  EXPECT_EQ(listed(), "u64 var2");
  auto text = top.read("synthetic_events");
  ASSERT_OK(text);
  EXPECT_THAT(*text, Not(HasSubstr(other))) << "a truncating write kept another event";
}

}  // namespace
}  // namespace tracebed::suites
