// ftracetest dynevent/fprobe_syntax_errors.tc: fprobe (`f`) and tprobe
// (`t`) definitions the parser refuses, with the kernel's error_log text
// (kernel/trace/trace_probe.h, ERRORS; location trace_fprobe) and caret
// (`^` in the row, as in the .tc; %ax is the .tc's x86 register). Rows the
// .tc runs only on kernels without BTF arguments are marked `without_btf`.
// The appending rows need an existing event and are a test of their own.
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

struct FprobeError {
  const char* name;
  std::string marked;
  std::string error;
  std::optional<Feature> needs = std::nullopt;
  bool without_btf = false;  // the .tc's `else` of its "<argname>" check
  std::string alt = "";      // what other kernels print (see the row)
};

void PrintTo(const FprobeError& e, std::ostream* os) { *os << e.marked; }

const Feature kImm = features::fetcharg_immediate;
const Feature kImmStr = features::fetcharg_immediate_string;
const Feature kComm = features::fetcharg_comm;
const Feature kArray = features::type_array;
const Feature kBtf = features::btf_args;
const Feature kBtfFields = features::btf_fields;

const std::vector<FprobeError> kErrors = {
    // 6.12 still parsed a maxactive for fprobes and said BAD_MAXACT_TYPE.
    {"BAD_MAXACT", "f^100 vfs_read", "Invalid maxactive number", std::nullopt, false,
     "Maxactive is only for function exit"},
    // 7.2 checks the symbol while parsing; 6.12 found out only when the
    // fprobe failed to register (FAIL_REG_PROBE, same caret).
    {"BAD_PROBE_ADDR", "f ^non_exist_func", "Invalid probed address or symbol", std::nullopt, false,
     "Failed to register probe event"},
    {"BAD_PROBE_ADDR_offset", "f ^vfs_read+10", "Invalid probed address or symbol", std::nullopt, false,
     "Failed to register probe event"},
    {"NO_GROUP_NAME", "f:^/bar vfs_read", "Group name is not specified"},
    {"GROUP_TOO_LONG", "f:^12345678901234567890123456789012345678901234567890123456789012345/bar vfs_read", "Group name is too long"},
    {"BAD_GROUP_NAME", "f:^foo.1/bar vfs_read", "Group name must follow the same rules as C identifiers"},
    {"NO_EVENT_NAME", "f:^ vfs_read", "Event name is not specified"},
    {"EVENT_TOO_LONG", "f:foo/^12345678901234567890123456789012345678901234567890123456789012345 vfs_read", "Event name is too long"},
    {"BAD_EVENT_NAME", "f:foo/^bar.1 vfs_read", "Event name must follow the same rules as C identifiers"},
    {"BAD_TP_NAME", "t kmem^/kfree", "Invalid character in tracepoint name"},
    {"BAD_STACK_NUM", "f vfs_read ^$stack10000", "Invalid stack number"},
    // With BTF (6.12, 7.2) $argN is looked up in the function's BTF first.
    {"BAD_ARG_NUM", "f vfs_read ^$arg10000", "This variable is not found at this probe point", std::nullopt, false,
     "Invalid argument number"},
    {"BAD_VAR", "f vfs_read ^$none_var", "Invalid $-variable specified"},
    // The .tc says BAD_VAR; an fprobe cannot fetch registers and the
    // kernel says so (6.12, 7.2).
    {"BAD_FETCH_ARG_register", "f vfs_read ^%ax", "Invalid fetch argument"},
    {"BAD_MEM_ADDR", "f vfs_read ^@12345678abcde", "Invalid memory address"},
    {"FILE_ON_KPROBE", "f vfs_read ^@+10", "File offset is not available with kprobe"},
    {"BAD_IMM", "f vfs_read arg1=\\^x", "Invalid immediate value", kImm},
    {"IMMSTR_NO_CLOSE", "f vfs_read arg1=\\\"abcd^", "String is not closed with '\"'", kImmStr},
    {"DEREF_NEED_BRACE", "f vfs_read ^+0@0)", "Dereference needs a brace"},
    {"BAD_DEREF_OFFS", "f vfs_read ^+0ab1(@0)", "Invalid dereference offset"},
    {"DEREF_OPEN_BRACE", "f vfs_read +0(+0(@0^)", "Dereference brace is not closed"},
    {"COMM_CANT_DEREF", "f vfs_read +0(^$comm)", "$comm can not be dereferenced", kComm},
    {"BAD_FETCH_ARG", "f vfs_read ^&1", "Invalid fetch argument"},
    {"TOO_MANY_OPS", "f vfs_read +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))", "Dereference is too much nested", kArray},
    {"ARRAY_NO_CLOSE", "f vfs_read +0(@11):u8[10^", "Array is not closed", kArray},
    {"BAD_ARRAY_SUFFIX", "f vfs_read +0(@11):u8[10]^a", "Array has wrong suffix", kArray},
    {"BAD_ARRAY_NUM", "f vfs_read +0(@11):u8[^10a]", "Invalid array size", kArray},
    {"ARRAY_TOO_BIG", "f vfs_read +0(@11):u8[^256]", "Array number is too big", kArray},
    {"BAD_TYPE", "f vfs_read @11:^unknown_type", "Unknown type is specified"},
    {"BAD_STRING", "f vfs_read $stack0:^string", "String accepts only memory argument"},
    {"BAD_BITFIELD", "f vfs_read @11:^b10@a/16", "Invalid bitfield"},
    {"ARG_NAME_TOO_LONG", "f vfs_read ^arg123456789012345678901234567890=@11", "Argument name is too long"},
    {"NO_ARG_NAME", "f vfs_read ^=@11", "Argument name is not specified"},
    {"BAD_ARG_NAME", "f vfs_read ^var.1=@11", "Argument name must follow the same rules as C identifiers"},
    {"USED_ARG_NAME", "f vfs_read var1=@11 ^var1=@12", "This argument name is already used"},
    {"ARG_TOO_LONG", "f vfs_read ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))", "Argument expression is too long"},
    {"NO_ARG_BODY", "f vfs_read arg1=^", "No argument expression"},
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
    {"NOSUP_BTFARG", "f vfs_read ^$arg*", "BTF is not available or not supported", std::nullopt, true},
    {"NOSUP_BTFARG_2", "t kfree ^$arg*", "BTF is not available or not supported", std::nullopt, true},
};

class FprobeSyntaxError : public TracefsTest, public ::testing::WithParamInterface<FprobeError> {
 protected:
  FprobeSyntaxError() : TracefsTest({features::fprobes, features::error_log}) {}
};

TEST_P(FprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: dynevent/fprobe_syntax_errors.tc");
  const FprobeError& e = GetParam();
  if (e.needs) TRACEBED_REQUIRE(*e.needs);
  if (e.without_btf && features().has(features::btf_args))
    GTEST_SKIP() << "the row is for kernels without BTF args; this one has them";
  Marked m = unmark(e.marked);
  DynEventKind kind = m.command.starts_with("t") ? DynEventKind::tprobe : DynEventKind::fprobe;
  ::testing::Matcher<const std::string&> error = ::testing::HasSubstr(e.error);
  if (!e.alt.empty()) error = ::testing::AnyOf(::testing::HasSubstr(e.error), ::testing::HasSubstr(e.alt));
  auto entry = ExpectRefused(RawDefinition{kind, m.command, "fprobes"}, error, m.caret);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->location, "trace_fprobe");
}

INSTANTIATE_TEST_SUITE_P(Fprobe, FprobeSyntaxError, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<FprobeError>& p) { return std::string(p.param.name); });

TRACEBED_SUITE_REQUIRES(FprobeAppendErrors, features::fprobes, features::error_log, features::probe_append,
                        features::fetcharg_immediate);

// The .tc's appending rows: an exit probe cannot join an entry probe's
// event, nor can other argument names or types; the same probe twice is
// refused.
TEST_F(FprobeAppendErrors, AppendedPointMustMatchTheEvent) {
  TRACEBED_COVERS("ftracetest: dynevent/fprobe_syntax_errors.tc");
  const std::string event = unique("testevent");
  const std::string name = "fprobes/" + event;
  auto existing = create(RawDefinition{DynEventKind::fprobe, "f:" + name + " vfs_read abcd=\\1", "fprobes", event}.def());
  ASSERT_OK(existing);
  auto refused = [&](const std::string& marked, const char* error) {
    SCOPED_TRACE(marked);
    Marked m = unmark(marked);
    ExpectRefused(RawDefinition{DynEventKind::fprobe, m.command, "fprobes"}, error, m.caret);
  };
  refused("^f:" + name + " vfs_write%return", "Probe type is different from existing probe");
  refused("f:" + name + " vfs_write ^bcd=\\1", "Argument type or name is different from existing probe");
  refused("f:" + name + " vfs_write ^abcd=\\1:u8", "Argument type or name is different from existing probe");
  if (features().has(features::fetcharg_immediate_string))
    refused("f:" + name + " vfs_write ^abcd=\\\"foo\"", "Argument type or name is different from existing probe");
  refused("^f:" + name + " vfs_read abcd=\\1", "There is already the exact same probe event");
}

}  // namespace
}  // namespace tracebed::suites
