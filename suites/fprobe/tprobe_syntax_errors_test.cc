// ftracetest dynevent/tprobe_syntax_errors.tc: tracepoint probes (`t`) on
// kfree that the parser refuses, with the kernel's error_log text
// (kernel/trace/trace_probe.h, ERRORS; location trace_fprobe) and caret
// (`^` in the row, as in the .tc). The appending rows need an existing
// event and are a test of their own.
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

struct TprobeError {
  const char* name;
  std::string marked;
  std::string error;
  std::optional<Feature> needs = std::nullopt;
  // What other kernels print for the same row (see the row), also accepted.
  std::string alt = "";
};

void PrintTo(const TprobeError& e, std::ostream* os) { *os << e.marked; }

RawDefinition RawTprobe(std::string text, std::string group = "tracepoints", std::string event = "tb_never") {
  return {DynEventKind::tprobe, std::move(text), std::move(group), std::move(event)};
}

const Feature kImm = features::fetcharg_immediate;
const Feature kImmStr = features::fetcharg_immediate_string;
const Feature kComm = features::fetcharg_comm;
const Feature kArray = features::type_array;

const std::vector<TprobeError> kErrors = {
    // 7.2's trace_fprobe.c takes no maxactive: any character after `t` but
    // ':' is BAD_MAXACT there; 6.12 still says BAD_MAXACT_TYPE.
    {"BAD_MAXACT_TYPE", "t^100 kfree", "Maxactive is only for function exit", std::nullopt,
     "Invalid maxactive number"},
    {"NO_GROUP_NAME", "t:^/bar kfree", "Group name is not specified"},
    {"GROUP_TOO_LONG", "t:^12345678901234567890123456789012345678901234567890123456789012345/bar kfree", "Group name is too long"},
    {"BAD_GROUP_NAME", "t:^foo.1/bar kfree", "Group name must follow the same rules as C identifiers"},
    {"NO_EVENT_NAME", "t:^ kfree", "Event name is not specified"},
    {"EVENT_TOO_LONG", "t:foo/^12345678901234567890123456789012345678901234567890123456789012345 kfree", "Event name is too long"},
    {"BAD_EVENT_NAME", "t:foo/^bar.1 kfree", "Event name must follow the same rules as C identifiers"},
    {"RETVAL_ON_PROBE", "t kfree ^$retval", "$retval is not available on probe"},
    {"BAD_STACK_NUM", "t kfree ^$stack10000", "Invalid stack number"},
    // A tprobe's $argN is looked up in the tracepoint's BTF where there is
    // BTF (every catalogue kernel with tprobes): not found there.
    {"BAD_ARG_NUM", "t kfree ^$arg10000", "This variable is not found at this probe point", std::nullopt,
     "Invalid argument number"},
    {"BAD_VAR", "t kfree ^$none_var", "Invalid $-variable specified"},
    // The .tc calls this BAD_VAR; registers are not fetchable at a
    // tracepoint, and the kernel says so (6.12, 7.2).
    {"BAD_FETCH_ARG_register", "t kfree ^%rax", "Invalid fetch argument"},
    {"BAD_MEM_ADDR", "t kfree ^@12345678abcde", "Invalid memory address"},
    {"FILE_ON_KPROBE", "t kfree ^@+10", "File offset is not available with kprobe"},
    {"BAD_IMM", "t kfree arg1=\\^x", "Invalid immediate value", kImm},
    {"IMMSTR_NO_CLOSE", "t kfree arg1=\\\"abcd^", "String is not closed with '\"'", kImmStr},
    {"DEREF_NEED_BRACE", "t kfree ^+0@0)", "Dereference needs a brace"},
    {"BAD_DEREF_OFFS", "t kfree ^+0ab1(@0)", "Invalid dereference offset"},
    {"DEREF_OPEN_BRACE", "t kfree +0(+0(@0^)", "Dereference brace is not closed"},
    {"COMM_CANT_DEREF", "t kfree +0(^$comm)", "$comm can not be dereferenced", kComm},
    {"BAD_FETCH_ARG", "t kfree ^&1", "Invalid fetch argument"},
    {"TOO_MANY_OPS", "t kfree +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))", "Dereference is too much nested", kArray},
    {"ARRAY_NO_CLOSE", "t kfree +0(@11):u8[10^", "Array is not closed", kArray},
    {"BAD_ARRAY_SUFFIX", "t kfree +0(@11):u8[10]^a", "Array has wrong suffix", kArray},
    {"BAD_ARRAY_NUM", "t kfree +0(@11):u8[^10a]", "Invalid array size", kArray},
    {"ARRAY_TOO_BIG", "t kfree +0(@11):u8[^256]", "Array number is too big", kArray},
    {"BAD_TYPE", "t kfree @11:^unknown_type", "Unknown type is specified"},
    {"BAD_STRING", "t kfree $stack0:^string", "String accepts only memory argument"},
    {"BAD_BITFIELD", "t kfree @11:^b10@a/16", "Invalid bitfield"},
    {"ARG_NAME_TOO_LONG", "t kfree ^arg123456789012345678901234567890=@11", "Argument name is too long"},
    {"NO_ARG_NAME", "t kfree ^=@11", "Argument name is not specified"},
    {"BAD_ARG_NAME", "t kfree ^var.1=@11", "Argument name must follow the same rules as C identifiers"},
    {"USED_ARG_NAME", "t kfree var1=@11 ^var1=@12", "This argument name is already used"},
    {"ARG_TOO_LONG", "t kfree ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))", "Argument expression is too long"},
    {"NO_ARG_BODY", "t kfree arg1=^", "No argument expression"},
};

class TprobeSyntaxError : public TracefsTest, public ::testing::WithParamInterface<TprobeError> {
 protected:
  TprobeSyntaxError() : TracefsTest({features::tprobes, features::error_log}) {}
};

TEST_P(TprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: dynevent/tprobe_syntax_errors.tc");
  const TprobeError& e = GetParam();
  if (e.needs) TRACEBED_REQUIRE(*e.needs);
  Marked m = unmark(e.marked);
  ::testing::Matcher<const std::string&> error = ::testing::HasSubstr(e.error);
  if (!e.alt.empty()) error = ::testing::AnyOf(::testing::HasSubstr(e.error), ::testing::HasSubstr(e.alt));
  auto entry = ExpectRefused(RawTprobe(m.command), error, m.caret);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->location, "trace_fprobe");
}

INSTANTIATE_TEST_SUITE_P(Tprobe, TprobeSyntaxError, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<TprobeError>& p) { return std::string(p.param.name); });

TRACEBED_SUITE_REQUIRES(TprobeAppendErrors, features::tprobes, features::error_log, features::probe_append,
                        features::fetcharg_immediate);

// The .tc's appending rows: another probe type (an fprobe) cannot join a
// tprobe event, nor can other argument names or types; the same probe
// twice is refused.
TEST_F(TprobeAppendErrors, AppendedPointMustMatchTheEvent) {
  TRACEBED_COVERS("ftracetest: dynevent/tprobe_syntax_errors.tc");
  const std::string event = unique("testevent");
  const std::string name = "tracepoints/" + event;
  auto existing = create(RawTprobe("t:" + name + " kfree abcd=\\1", "tracepoints", event).def());
  ASSERT_OK(existing);
  auto refused = [&](const std::string& marked, const char* error) {
    SCOPED_TRACE(marked);
    Marked m = unmark(marked);
    ExpectRefused(RawTprobe(m.command), error, m.caret);
  };
  if (features().has(features::fprobes))
    refused("^f:" + name + " kfree", "Probe type is different from existing probe");
  refused("t:" + name + " kfree ^bcd=\\1", "Argument type or name is different from existing probe");
  refused("t:" + name + " kfree ^abcd=\\1:u8", "Argument type or name is different from existing probe");
  if (features().has(features::fetcharg_immediate_string))
    refused("t:" + name + " kfree ^abcd=\\\"foo\"", "Argument type or name is different from existing probe");
  refused("^t:" + name + " kfree abcd=\\1", "There is already the exact same probe event");
}

}  // namespace
}  // namespace tracebed::suites
