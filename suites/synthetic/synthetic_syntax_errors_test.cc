// ftracetest trigger/inter-event/trigger-synthetic_event_syntax_errors.tc:
// synthetic event definitions the parser refuses, with the kernel's
// error_log text (kernel/trace/trace_events_synth.c, ERRORS) and caret
// (`^` in the row, as in the .tc). Each refusal must also leave no event
// behind: a half-made event in events/synthetic/ would be a leak.
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

// The .tc's requires: the README example of the reworked parser (5.12+),
// whose errors and carets the rows describe.
const Feature kSynthErrors =
    Feature::readme("synthetic_events parser errors", "' >> synthetic_events");
const Feature kSynthDynamic =
    Feature::readme("s: in dynamic_events", "s:[synthetic/]<event> <field> [<field>]");

struct SynthError {
  const char* name;
  std::string marked;
  const char* error;
  const char* file = "synthetic_events";
};

void PrintTo(const SynthError& e, std::ostream* os) { *os << e.marked; }

const std::vector<SynthError> kErrors = {
    {"INVALID_TYPE", "myevent ^chr arg", "Invalid type"},
    {"INCOMPLETE_TYPE", "myevent ^unsigned arg", "Incomplete type"},
    {"BAD_NAME_bracket", "myevent char ^str]; int v", "Illegal name"},
    {"BAD_NAME_event", "^mye-vent char str[]", "Illegal name"},
    {"BAD_NAME_field", "myevent char ^st-r[]", "Illegal name"},
    {"INVALID_FIELD_bracket", "myevent char str;^[]", "Invalid field"},
    {"INVALID_FIELD_type_only", "myevent char str; ^int", "Invalid field"},
    {"INVALID_ARRAY_SPEC_open", "myevent char ^str[; int v", "Invalid array specification"},
    {"INVALID_ARRAY_SPEC_letters", "myevent char ^str[kdjdk]", "Invalid array specification"},
    {"INVALID_ARRAY_SPEC_too_big", "myevent char ^str[257]", "Invalid array specification"},
    {"INVALID_CMD_semicolon_in_name", "^mye;vent char str[]", "Command must be of the form: <name> field[;field] ..."},
    {"INVALID_CMD_spaced_semicolon", "^myevent ; char str[]", "Command must be of the form: <name> field[;field] ..."},
    {"INVALID_CMD_semicolon_after_name", "^myevent; char str[]", "Command must be of the form: <name> field[;field] ..."},
    {"INVALID_CMD_semicolon_before_field", "^myevent ;char str[]", "Command must be of the form: <name> field[;field] ..."},
    {"INVALID_CMD_no_name", "^; char str[]", "Command must be of the form: <name> field[;field] ..."},
    {"INVALID_CMD_semicolon_first", "^;myevent char str[]", "Command must be of the form: <name> field[;field] ..."},
    {"INVALID_CMD_no_fields", "^myevent", "Command must be of the form: <name> field[;field] ..."},
    {"INVALID_DYN_CMD", "^s:junk/myevent char str[",
     "Command must be of the form: s or -:[synthetic/]<name> field[;field] ...", "dynamic_events"},
};

class SyntheticSyntaxError : public TracefsTest, public ::testing::WithParamInterface<SynthError> {
 protected:
  SyntheticSyntaxError() : TracefsTest({features::synthetic_events, features::error_log, kSynthErrors}) {}
};

// Written by hand (no builder makes these), so error_log is read directly:
// the entry's location is "synthetic_events" whichever file took the write.
TEST_P(SyntheticSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: trigger/inter-event/trigger-synthetic_event_syntax_errors.tc");
  const SynthError& e = GetParam();
  if (std::string_view(e.file) == "dynamic_events") {
    TRACEBED_REQUIRE(features::dynamic_events);
    TRACEBED_REQUIRE(kSynthDynamic);
  }
  Marked m = unmark(e.marked);
  const tracefs::Files top = fs().top().files();
  ASSERT_OK(fs().top().clear_error_log());
  auto err = top.try_write(e.file, m.command, true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL) << "writing \"" << m.command << "\" to " << e.file;
  auto log = fs().top().error_log();
  ASSERT_OK(log);
  ASSERT_THAT(*log, SizeIs(1)) << "one refusal, one entry";
  const ErrorLogEntry& entry = log->back();
  SCOPED_TRACE(entry.str());
  EXPECT_EQ(entry.location, "synthetic_events");
  EXPECT_EQ(entry.error, e.error);
  EXPECT_EQ(entry.command, m.command);
  EXPECT_EQ(entry.caret, m.caret) << "the caret is under \"" << m.command.substr(std::min(entry.caret, m.command.size()))
                                  << "\"";
  // Nothing half-made stays: no event directory, nothing listed.
  auto listed = top.read("synthetic_events");
  ASSERT_OK(listed);
  EXPECT_THAT(*listed, Not(HasSubstr("myevent")));
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/synthetic/myevent"));
}

INSTANTIATE_TEST_SUITE_P(Synthetic, SyntheticSyntaxError, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<SynthError>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace tracebed::suites
