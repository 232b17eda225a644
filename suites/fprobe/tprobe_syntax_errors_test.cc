// ftracetest dynevent/tprobe_syntax_errors.tc: tracepoint probes (`t`) on
// kfree that the parser refuses, with the kernel's error_log text and caret
// (framework/testing/syntax_errors.h has the rows tprobes share with
// kprobes and fprobes). The appending rows need an existing event and are
// a test of their own.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/syntax_errors.h"

namespace tracebed::suites {
namespace {

const std::vector<SyntaxErrorRow> kTprobeRows = {
    // 7.2's trace_fprobe.c takes no maxactive: any character after `t` but
    // ':' is BAD_MAXACT there; 6.12 still says BAD_MAXACT_TYPE.
    {.name = "BAD_MAXACT_TYPE", .marked = "t^100 kfree", .error = "Maxactive is only for function exit",
     .also = {"Invalid maxactive number"}},
    {"RETVAL_ON_PROBE", "t kfree ^$retval", "$retval is not available on probe"},
    // The .tc's BAD_VAR: registers are not fetchable at a tracepoint; 6.12
    // and 7.2 called it an invalid fetch argument.
    {.name = "BAD_VAR_register", .marked = "t kfree ^%rax", .error = "Invalid $-variable specified",
     .also = {"Invalid fetch argument"}},
};

class TprobeSyntaxError : public SyntaxErrorTest {
 protected:
  TprobeSyntaxError() : SyntaxErrorTest(kTprobeTable, {features::tprobes, features::error_log}) {}
};

TEST_P(TprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: dynevent/tprobe_syntax_errors.tc");
  ExpectRowRefused();
}

INSTANTIATE_TEST_SUITE_P(Tprobe, TprobeSyntaxError,
                         ValuesIn(join({kTprobeRows, name_rows("t", "kfree"), fetch_arg_rows("t kfree")})),
                         SyntaxErrorRow::test_name);

class TprobeAppendErrors : public SyntaxErrorTest {
 protected:
  TprobeAppendErrors()
      : SyntaxErrorTest(kTprobeTable, {features::tprobes, features::error_log, features::probe_append,
                                       features::fetcharg_immediate}) {}
};

// The .tc's appending rows: another probe type (an fprobe) cannot join a
// tprobe event, nor can other argument names or types; the same probe
// twice is refused.
TEST_F(TprobeAppendErrors, AppendedPointMustMatchTheEvent) {
  TRACEBED_COVERS("ftracetest: dynevent/tprobe_syntax_errors.tc");
  auto refusals =
      argument_appends("t:NAME kfree", "t:NAME kfree", features().has(features::fetcharg_immediate_string));
  if (features().has(features::fprobes))
    refusals.insert(refusals.begin(), {"^f:NAME kfree", "Probe type is different from existing probe"});
  ExpectAppendsRefused("t:NAME kfree", refusals);
}

}  // namespace
}  // namespace tracebed::suites
