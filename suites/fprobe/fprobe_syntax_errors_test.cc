// ftracetest dynevent/fprobe_syntax_errors.tc: fprobe (`f`) and tprobe
// (`t`) definitions the parser refuses, with the kernel's error_log text
// and caret (framework/testing/syntax_errors.h has the rows fprobes share
// with kprobes and tprobes; %ax is the .tc's x86 register). The rows the
// .tc runs only on kernels without BTF arguments are `unless` BTF args.
// The appending rows need an existing event and are a test of their own.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/syntax_errors.h"

namespace tracebed::suites {
namespace {

const Feature kBtf = features::btf_args;
const Feature kBtfFields = features::btf_fields;
// 6.12 found a bad symbol only when the fprobe failed to register
// (FAIL_REG_PROBE, same caret); 7.2 checks it while parsing.
const std::string kFailedToRegister = "Failed to register probe event";

const std::vector<SyntaxErrorRow> kFprobeRows = {
    // 6.12 still parsed a maxactive for fprobes and said BAD_MAXACT_TYPE.
    {.name = "BAD_MAXACT", .marked = "f^100 vfs_read", .error = "Invalid maxactive number",
     .also = {"Maxactive is only for function exit"}},
    {.name = "BAD_PROBE_ADDR", .marked = "f ^non_exist_func", .error = "Invalid probed address or symbol",
     .also = {kFailedToRegister}},
    {.name = "BAD_PROBE_ADDR_offset", .marked = "f ^vfs_read+10", .error = "Invalid probed address or symbol",
     .also = {kFailedToRegister}},
    {"BAD_TP_NAME", "t kmem^/kfree", "Invalid character in tracepoint name"},
    // The .tc's BAD_VAR: an fprobe cannot fetch registers; 6.12 and 7.2
    // called it an invalid fetch argument.
    {.name = "BAD_VAR_register", .marked = "f vfs_read ^%ax", .error = "Invalid $-variable specified",
     .also = {"Invalid fetch argument"}},
    {"BAD_ADDR_SUFFIX", "f vfs_read^%hoge", "Invalid probed address suffix"},
    // BAD_VAR_ARGS in the .tc: trace_probe.h defines it, trace_probe.c no
    // longer reports it; $arg* inside an expression is an unknown $-variable.
    {"BAD_VAR_named_args", "f vfs_read args=^$arg*", "Invalid $-variable specified", kBtf},
    {"BAD_VAR_deref_args", "f vfs_read +0(^$arg*)", "Invalid $-variable specified", kBtf},
    {"DOUBLE_ARGS", "f vfs_read $arg* ^$arg*", "$arg* can be used only once in the parameters", kBtf},
    {"NO_BTFARG", "f vfs_read ^hoge", "This variable is not found at this probe point", kBtf},
    {"NO_BTFARG_2", "f kfree ^$arg10", "This variable is not found at this probe point", kBtf},
    {"NO_RETVAL", "f kfree%return ^$retval", "This function returns 'void' type", kBtf},
    {"NO_PTR_STRCT", "f vfs_read%return $retval->^foo", "This is not a pointer to union/structure.", kBtfFields},
    {"NO_BTF_FIELD", "f vfs_read file->^foo", "This field is not found.", kBtfFields},
    {"BAD_HYPHEN", "f vfs_read file^-.foo", "Failed to parse single hyphen. Forgot '>'?", kBtfFields},
    {"BAD_TYPE4STR", "f vfs_read ^file:string", "This type does not fit for string.", kBtfFields},
    {.name = "NOSUP_BTFARG", .marked = "f vfs_read ^$arg*", .error = "BTF is not available or not supported",
     .unless = kBtf},
    {.name = "NOSUP_BTFARG_2", .marked = "t kfree ^$arg*", .error = "BTF is not available or not supported",
     .unless = kBtf},
};

class FprobeSyntaxError : public SyntaxErrorTest {
 protected:
  FprobeSyntaxError() : SyntaxErrorTest(kFprobeTable, {features::fprobes, features::error_log}) {}
};

TEST_P(FprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: dynevent/fprobe_syntax_errors.tc");
  ExpectRowRefused();
}

INSTANTIATE_TEST_SUITE_P(Fprobe, FprobeSyntaxError,
                         ValuesIn(join({kFprobeRows, name_rows("f", "vfs_read"), fetch_arg_rows("f vfs_read"),
                                        typecast_rows("f")})),
                         SyntaxErrorRow::test_name);

class FprobeAppendErrors : public SyntaxErrorTest {
 protected:
  FprobeAppendErrors()
      : SyntaxErrorTest(kFprobeTable, {features::fprobes, features::error_log, features::probe_append,
                                       features::fetcharg_immediate}) {}
};

// The .tc's appending rows: an exit probe cannot join an entry probe's
// event, nor can other argument names or types; the same probe twice is
// refused.
TEST_F(FprobeAppendErrors, AppendedPointMustMatchTheEvent) {
  TRACEBED_COVERS("ftracetest: dynevent/fprobe_syntax_errors.tc");
  auto refusals = argument_appends("f:NAME vfs_read", "f:NAME vfs_write",
                                   features().has(features::fetcharg_immediate_string));
  refusals.insert(refusals.begin(), {"^f:NAME vfs_write%return", "Probe type is different from existing probe"});
  ExpectAppendsRefused("f:NAME vfs_read", refusals);
}

}  // namespace
}  // namespace tracebed::suites
