// ftracetest kprobe/kprobe_syntax_errors.tc: every kprobe definition the
// parser refuses, with the kernel's error_log text and the caret where the
// kernel puts it. A row is written as ftracetest writes it: `^` marks the
// caret column and is not part of the definition. The texts are the
// kernel's (kernel/trace/trace_probe.h, ERRORS); rows whose syntax came
// with a feature are gated on the README line that announces it, as the
// .tc does.
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

struct SyntaxError {
  const char* name;        // the kernel's error id (TP_ERR_<name>) and a suffix when it repeats
  std::string marked;      // the definition with `^` at the caret
  std::string error;       // as error_log prints it after "error: "
  std::optional<Feature> needs = std::nullopt;
  // The error instead when the kernel resolves arguments through BTF
  // (README "<argname>"): $argN is looked up there first.
  std::string with_btf = "";
  // What kernels before the wording changed print (5.10), also accepted.
  std::string older = "";

  std::string command() const { return unmark(marked).command; }
  size_t caret() const { return unmark(marked).caret; }
};

RawDefinition RawKprobe(std::string text, std::string event = "tb_never") {
  return {DynEventKind::kprobe, std::move(text), "kprobes", std::move(event)};
}

void PrintTo(const SyntaxError& e, std::ostream* os) { *os << e.marked; }

const Feature kMaxactive = features::kretprobe_maxactive;
const Feature kArgN = features::fetcharg_argn;
const Feature kImm = features::fetcharg_immediate;
const Feature kImmStr = features::fetcharg_immediate_string;
const Feature kComm = features::fetcharg_comm;
const Feature kArray = features::type_array;
const Feature kPercentReturn = features::kprobe_percent_return;
const Feature kBtf = features::btf_args;

// In the .tc's order; BAD_INSN_BNDRY and the multiprobe rows need an
// existing probe and are tests of their own below.
const std::vector<SyntaxError> kErrors = {
    {"BAD_MAXACT_TYPE", "p^100 vfs_read", "Maxactive is only for function exit", kMaxactive, "",
     "Maxactive is not for kprobe"},
    {"BAD_MAXACT", "r^1a111 vfs_read", "Invalid maxactive number", kMaxactive},
    {"MAXACT_TOO_BIG", "r^100000 vfs_read", "Maxactive is too big", kMaxactive},
    {"BAD_PROBE_ADDR_enoent", "p ^non_exist_func", "Invalid probed address or symbol"},
    {"BAD_PROBE_ADDR_syntax", "p ^hoge-fuga", "Invalid probed address or symbol"},
    {"BAD_PROBE_ADDR_offset", "p ^hoge+1000-1000", "Invalid probed address or symbol"},
    {"BAD_RETPROBE", "r ^vfs_read+10", "Retprobe address must be an function entry"},
    {"NO_GROUP_NAME", "p:^/bar vfs_read", "Group name is not specified"},
    {"GROUP_TOO_LONG", "p:^12345678901234567890123456789012345678901234567890123456789012345/bar vfs_read",
     "Group name is too long"},
    {"BAD_GROUP_NAME", "p:^foo.1/bar vfs_read", "Group name must follow the same rules as C identifiers"},
    {"NO_EVENT_NAME", "p:^ vfs_read", "Event name is not specified"},
    {"EVENT_TOO_LONG", "p:foo/^12345678901234567890123456789012345678901234567890123456789012345 vfs_read",
     "Event name is too long"},
    {"BAD_EVENT_NAME", "p:foo/^bar.1 vfs_read", "Event name must follow the same rules as C identifiers"},
    {"RETVAL_ON_PROBE", "p vfs_read ^$retval", "$retval is not available on probe"},
    {"BAD_STACK_NUM", "p vfs_read ^$stack10000", "Invalid stack number"},
    {"BAD_ARG_NUM", "p vfs_read ^$arg10000", "Invalid argument number", kArgN,
     "This variable is not found at this probe point"},
    {"BAD_VAR", "p vfs_read ^$none_var", "Invalid $-variable specified", std::nullopt, "",
     "Invalid $-valiable specified"},  // sic, before 5.16
    {"BAD_REG_NAME", "p vfs_read ^%none_reg", "Invalid register name"},
    {"BAD_MEM_ADDR", "p vfs_read ^@12345678abcde", "Invalid memory address"},
    {"FILE_ON_KPROBE", "p vfs_read ^@+10", "File offset is not available with kprobe"},
    {"BAD_IMM", "p vfs_read arg1=\\^x", "Invalid immediate value", kImm},
    {"IMMSTR_NO_CLOSE", "p vfs_read arg1=\\\"abcd^", "String is not closed with '\"'", kImmStr},
    {"DEREF_NEED_BRACE", "p vfs_read ^+0@0)", "Dereference needs a brace"},
    {"BAD_DEREF_OFFS", "p vfs_read ^+0ab1(@0)", "Invalid dereference offset"},
    {"DEREF_OPEN_BRACE", "p vfs_read +0(+0(@0^)", "Dereference brace is not closed"},
    {"COMM_CANT_DEREF", "p vfs_read +0(^$comm)", "$comm can not be dereferenced", kComm},
    {"BAD_FETCH_ARG", "p vfs_read ^&1", "Invalid fetch argument"},
    {"TOO_MANY_OPS", "p vfs_read +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))",
     "Dereference is too much nested", kArray},
    {"ARRAY_NO_CLOSE", "p vfs_read +0(@11):u8[10^", "Array is not closed", kArray},
    {"BAD_ARRAY_SUFFIX", "p vfs_read +0(@11):u8[10]^a", "Array has wrong suffix", kArray},
    {"BAD_ARRAY_NUM", "p vfs_read +0(@11):u8[^10a]", "Invalid array size", kArray},
    {"ARRAY_TOO_BIG", "p vfs_read +0(@11):u8[^256]", "Array number is too big", kArray},
    {"BAD_TYPE", "p vfs_read @11:^unknown_type", "Unknown type is specified"},
    {"BAD_STRING", "p vfs_read $stack0:^string", "String accepts only memory argument"},
    {"BAD_BITFIELD", "p vfs_read @11:^b10@a/16", "Invalid bitfield"},
    {"ARG_NAME_TOO_LONG", "p vfs_read ^arg123456789012345678901234567890=@11", "Argument name is too long"},
    {"NO_ARG_NAME", "p vfs_read ^=@11", "Argument name is not specified"},
    {"BAD_ARG_NAME", "p vfs_read ^var.1=@11", "Argument name must follow the same rules as C identifiers"},
    {"USED_ARG_NAME", "p vfs_read var1=@11 ^var1=@12", "This argument name is already used"},
    {"ARG_TOO_LONG", "p vfs_read ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))",
     "Argument expression is too long"},
    {"NO_ARG_BODY", "p vfs_read arg1=^", "No argument expression"},
    {"BAD_ADDR_SUFFIX", "p vfs_read^%hoge", "Invalid probed address suffix", kPercentReturn},
    {"BAD_RETPROBE_return", "p ^vfs_read+10%return", "Retprobe address must be an function entry", kPercentReturn},
    // The .tc calls these BAD_VAR_ARGS, which trace_probe.h still defines but
    // trace_probe.c no longer reports (6.12, 7.2): $arg* inside an
    // expression is an unknown $-variable.
    {"BAD_VAR_named_args", "p vfs_read args=^$arg*", "Invalid $-variable specified", kBtf},
    {"BAD_VAR_deref_args", "p vfs_read +0(^$arg*)", "Invalid $-variable specified", kBtf},
    {"DOUBLE_ARGS", "p vfs_read $arg* ^$arg*", "$arg* can be used only once in the parameters", kBtf},
    {"NOFENTRY_ARGS", "p vfs_read+20 ^$arg*", "$arg* can be used only on function entry or exit", kBtf},
    {"NO_BTFARG", "p vfs_read ^hoge", "This variable is not found at this probe point", kBtf},
    {"NO_BTFARG_index", "p kfree ^$arg10", "This variable is not found at this probe point", kBtf},
    {"NO_RETVAL", "r kfree ^$retval", "This function returns 'void' type", kBtf},
};

class KprobeSyntaxError : public TracefsTest, public ::testing::WithParamInterface<SyntaxError> {
 protected:
  KprobeSyntaxError() : TracefsTest({features::kprobes, features::error_log}) {}
};

// The kernel refuses the definition, and its error_log entry names the
// error and points at the column ftracetest expects.
TEST_P(KprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  const SyntaxError& e = GetParam();
  if (e.needs) TRACEBED_REQUIRE(*e.needs);
  bool btf = !e.with_btf.empty() && features().has(features::btf_args);
  const std::string& error = btf ? e.with_btf : e.error;
  ::testing::Matcher<const std::string&> m = HasSubstr(error);
  if (!e.older.empty()) m = AnyOf(HasSubstr(error), HasSubstr(e.older));
  auto entry = ExpectRefused(RawKprobe(e.command()), m, e.caret());
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->location, "trace_kprobe") << e.marked;
}

INSTANTIATE_TEST_SUITE_P(Kprobe, KprobeSyntaxError, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<SyntaxError>& p) { return std::string(p.param.name); });

TRACEBED_SUITE_REQUIRES(KprobeAppendErrors, features::kprobes, features::error_log, features::probe_append,
                        features::fetcharg_immediate);

// The .tc's multiprobe rows: appending a probe point to an existing event
// must keep its type and its arguments, and the same point twice is refused.
TEST_F(KprobeAppendErrors, AppendedPointMustMatchTheEvent) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  const std::string event = unique("testevent");
  const std::string name = "kprobes/" + event;
  auto existing = create(RawKprobe("p:" + name + " vfs_read abcd=\\1", event).def());
  ASSERT_OK(existing);
  auto refused = [&](const std::string& marked, const char* error) {
    SCOPED_TRACE(marked);
    Marked m = unmark(marked);
    ExpectRefused(RawKprobe(m.command), error, m.caret);
  };
  refused("^r:" + name + " vfs_write", "Probe type is different from existing probe");
  refused("p:" + name + " vfs_write ^bcd=\\1", "Argument type or name is different from existing probe");
  refused("p:" + name + " vfs_write ^abcd=\\1:u8", "Argument type or name is different from existing probe");
  if (features().has(features::fetcharg_immediate_string))
    refused("p:" + name + " vfs_write ^abcd=\\\"foo\"", "Argument type or name is different from existing probe");
  refused("^p:" + name + " vfs_read abcd=\\1", "There is already the exact same probe event");
}

// BAD_INSN_BNDRY: on x86, where vfs_read's kprobe sits on its ftrace call
// site (debugfs kprobes/list says FTRACE), vfs_read+3 is inside that
// instruction.
TEST_F(KprobeAppendErrors, OffsetInsideTheFtraceCallIsRefused) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  const std::string event = unique("bndry");
  auto probe = create(RawKprobe("p:kprobes/" + event + " vfs_read", event).def());
  ASSERT_OK(probe);
  std::string list = sh("cat /sys/kernel/debug/kprobes/list 2>/dev/null || true");
  if (list.find("[FTRACE]") == std::string::npos)
    GTEST_SKIP() << "needs a kprobe on an ftrace site: no [FTRACE] in debugfs kprobes/list (KPROBES_ON_FTRACE)";
  ExpectRefused(RawKprobe("p vfs_read+3"), "Probe point is not an instruction boundary", 2);
}

TRACEBED_SUITE_REQUIRES(KprobeArgStar, features::kprobes, features::error_log);

// Without BTF the $arg* form is refused as unsupported: the row ftracetest
// runs on kernels whose README lacks "<argname>". Kernels from before BTF
// arguments (6.6) know no $arg* and call it an unknown $-variable.
TEST_F(KprobeArgStar, WithoutBtfIsUnsupported) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  if (features().has(features::btf_args)) GTEST_SKIP() << "the kernel has BTF args: the rows above check $arg*";
  TRACEBED_REQUIRE(features::fetcharg_argn);
  ExpectRefused(RawKprobe("p vfs_read $arg*"),
                AnyOf(HasSubstr("BTF is not available or not supported"), HasSubstr("Invalid $-variable specified"),
                      HasSubstr("Invalid $-valiable specified")),
                11);
}

}  // namespace
}  // namespace tracebed::suites
