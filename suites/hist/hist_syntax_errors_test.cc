// ftracetest trigger/trigger-hist-syntax-errors.tc (sort errors on
// kmem:kmalloc) and the error rows of trigger-hist-expressions.tc (on
// sched:sched_process_fork): hist triggers the parser refuses, with the
// kernel's error_log text (kernel/trace/trace_events_hist.c, ERRORS) and
// caret (`^` in the row, as in the .tc). A hist error is logged in the
// instance whose trigger file took the write, not at the top.
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/raw_definition.h"
#include "suites/hist/hist_fixture.h"

namespace tracebed::suites {
namespace {

struct HistError {
  const char* name;
  const char* system;
  const char* event;
  std::string marked;
  const char* error;
  std::optional<Feature> needs = std::nullopt;
  int errno_value = EINVAL;
};

void PrintTo(const HistError& e, std::ostream* os) { *os << e.marked; }

const std::vector<HistError> kErrors = {
    {"INVALID_SORT_FIELD", "kmem", "kmalloc", "hist:keys=common_pid:vals=bytes_req:sort=common_pid,^junk",
     "Sort field must be a key or a val"},
    {"EMPTY_ASSIGNMENT", "kmem", "kmalloc", "hist:keys=common_pid:vals=bytes_req:^sort=", "Empty assignment"},
    {"EMPTY_SORT_FIELD", "kmem", "kmalloc", "hist:keys=common_pid:vals=bytes_req:^sort=common_pid,",
     "Empty sort field"},
    {"INVALID_SORT_MODIFIER", "kmem", "kmalloc", "hist:keys=common_pid:vals=bytes_req:sort=common_pid.^junk",
     "Invalid sort modifier"},
    {"TOO_MANY_SORT_FIELDS", "kmem", "kmalloc",
     "hist:keys=common_pid:vals=bytes_req,bytes_alloc:^sort=common_pid,bytes_req,bytes_alloc",
     "Too many sort fields (Max = 2)"},
    {"TOO_MANY_SUBEXPR_nested", "sched", "sched_process_fork", "hist:keys=common_pid:x=32+^10*3/20-4",
     "Too many subexpressions (3 max)", hist_literals},
    {"TOO_MANY_SUBEXPR_flat", "sched", "sched_process_fork", "hist:keys=common_pid:x=^1+2+3+4+5",
     "Too many subexpressions (3 max)", hist_literals},
    {"UNARY_MINUS_SUBEXPR", "sched", "sched_process_fork", "hist:keys=common_pid:x=-(^1)+2",
     "Unary minus not supported in sub-expressions", hist_literals},
    // parse_expr returns -EDOM for this one.
    {"DIVISION_BY_ZERO", "sched", "sched_process_fork", "hist:keys=common_pid:x=3/^0", "Division by zero",
     hist_literals, EDOM},
};

class HistSyntaxError : public Hist, public ::testing::WithParamInterface<HistError> {};

TEST_P(HistSyntaxError, IsRefusedWithItsErrorAndCaret) {
  const HistError& e = GetParam();
  if (std::string_view(e.system) == "kmem") {
    TRACEBED_COVERS("ftracetest: trigger/trigger-hist-syntax-errors.tc");
  } else {
    TRACEBED_COVERS("ftracetest: trigger/trigger-hist-expressions.tc");
  }
  TRACEBED_REQUIRE(features::error_log);
  TRACEBED_REQUIRE(Feature::event(e.system, e.event));
  if (e.needs) TRACEBED_REQUIRE(*e.needs);
  Marked m = unmark(e.marked);
  Event ev = inst().event(e.system, e.event);
  ASSERT_OK(inst().clear_error_log());
  auto err = ev.files().try_write("trigger", m.command, true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, e.errno_value) << m.command;
  auto log = inst().error_log();
  ASSERT_OK(log);
  ASSERT_THAT(*log, SizeIs(1)) << "one refusal, one entry";
  const ErrorLogEntry& entry = log->back();
  SCOPED_TRACE(entry.str());
  EXPECT_EQ(entry.location, std::string("hist:") + e.system + ":" + e.event);
  EXPECT_EQ(entry.error, e.error);
  EXPECT_EQ(entry.command, m.command);
  EXPECT_EQ(entry.caret, m.caret) << "the caret is under \"" << m.command.substr(std::min(entry.caret, m.command.size()))
                                  << "\"";
  // Refused means no trigger was added.
  auto triggers = ev.triggers();
  ASSERT_OK(triggers);
  EXPECT_THAT(*triggers, IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Hist, HistSyntaxError, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<HistError>& p) { return std::string(p.param.name); });

// An "if" that ends the trigger, or has one character after it, cannot
// start a filter: event_hist_trigger_parse refuses it with EINVAL while it
// separates the filter, before any key is read, so error_log stays empty
// (reading "common_pid ifx" as a key would log "Couldn't find field"). An
// "if" with a filter after it is the trigger's filter.
TEST_F(Hist, IfAtTheEndIsRefusedBeforeTheKeysAreRead) {
  TRACEBED_REQUIRE(features::error_log);
  TRACEBED_REQUIRE(fork_event);
  Event fork = inst().event("sched", "sched_process_fork");
  for (std::string c : {"hist:keys=common_pid if", "hist:keys=common_pid ifx", "hist:keys=common_pid\tifx"}) {
    SCOPED_TRACE(c);
    ASSERT_OK(inst().clear_error_log());
    auto err = fork.files().try_write("trigger", c, true);
    ASSERT_OK(err);
    EXPECT_EQ(*err, EINVAL);
    EXPECT_THAT(inst().error_log().value(), IsEmpty());
    EXPECT_THAT(fork.triggers().value(), IsEmpty());
  }
  ASSERT_OK(fork.files().append("trigger", "hist:keys=common_pid if common_pid > 1"));
  auto triggers = fork.triggers();
  ASSERT_OK(triggers);
  ASSERT_THAT(*triggers, SizeIs(1));
  EXPECT_THAT(triggers->at(0).line, HasSubstr("if common_pid > 1"));
}

}  // namespace
}  // namespace tracebed::suites
