// ftracetest kprobe/kprobe_syntax_errors.tc: every kprobe definition the
// parser refuses, with the kernel's error_log text and the caret where the
// kernel puts it (framework/testing/syntax_errors.h has the rows kprobes
// share with fprobes and tprobes). Rows whose syntax came with a feature
// are gated on the README line that announces it, as the .tc does.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/syntax_errors.h"

namespace tracebed::suites {
namespace {

const Feature kMaxactive = features::kretprobe_maxactive;
const Feature kPercentReturn = features::kprobe_percent_return;
const Feature kBtf = features::btf_args;
// Where $arg* on a function without parameters is NOSUP_BTFARG: 7.2 says
// so, 6.12 did not (the version between is not looked up).
const Feature kNoParamsIsNosupBtfarg =
    Feature::since_release("$arg* without parameters refused as NOSUP_BTFARG (7.2)", 7, 2);

// The kprobe-only rows, in the .tc's order; BAD_INSN_BNDRY and the
// appending rows need an existing probe and are tests of their own below.
const std::vector<SyntaxErrorRow> kKprobeRows = {
    {.name = "BAD_MAXACT_TYPE", .marked = "p^100 vfs_read", .error = "Maxactive is only for function exit",
     .needs = kMaxactive, .also = {"Maxactive is not for kprobe"}},  // 5.10
    {"BAD_MAXACT", "r^1a111 vfs_read", "Invalid maxactive number", kMaxactive},
    {"MAXACT_TOO_BIG", "r^100000 vfs_read", "Maxactive is too big", kMaxactive},
    {"BAD_PROBE_ADDR_enoent", "p ^non_exist_func", "Invalid probed address or symbol"},
    {"BAD_PROBE_ADDR_syntax", "p ^hoge-fuga", "Invalid probed address or symbol"},
    {"BAD_PROBE_ADDR_offset", "p ^hoge+1000-1000", "Invalid probed address or symbol"},
    {"BAD_RETPROBE", "r ^vfs_read+10", "Retprobe address must be an function entry"},
    {"RETVAL_ON_PROBE", "p vfs_read ^$retval", "$retval is not available on probe"},
    {"BAD_REG_NAME", "p vfs_read ^%none_reg", "Invalid register name"},
    {"BAD_ADDR_SUFFIX", "p vfs_read^%hoge", "Invalid probed address suffix", kPercentReturn},
    {"BAD_RETPROBE_return", "p ^vfs_read+10%return", "Retprobe address must be an function entry", kPercentReturn},
    // The .tc calls these BAD_VAR_ARGS, which trace_probe.h still defines but
    // trace_probe.c no longer reports (6.12 to 7.3): $arg* inside an
    // expression is an unknown $-variable.
    {"BAD_VAR_named_args", "p vfs_read args=^$arg*", "Invalid $-variable specified", kBtf},
    {"BAD_VAR_deref_args", "p vfs_read +0(^$arg*)", "Invalid $-variable specified", kBtf},
    {"DOUBLE_ARGS", "p vfs_read $arg* ^$arg*", "$arg* can be used only once in the parameters", kBtf},
    {"NOFENTRY_ARGS", "p vfs_read+20 ^$arg*", "$arg* can be used only on function entry or exit", kBtf},
    {"NO_BTFARG", "p vfs_read ^hoge", "This variable is not found at this probe point", kBtf},
    {"NO_BTFARG_index", "p kfree ^$arg10", "This variable is not found at this probe point", kBtf},
    {"NO_RETVAL", "r kfree ^$retval", "This function returns 'void' type", kBtf},
    // schedule(void) has no parameters for $arg* to stand for: 7.2 says
    // so (NOSUP_BTFARG), 6.12 left $arg* to the fetch-argument parser.
    {.name = "NOSUP_BTFARG_no_params",
     .marked = "p schedule ^$arg*",
     .error = "BTF is not available or not supported",
     .needs = kNoParamsIsNosupBtfarg},
    {.name = "NOSUP_BTFARG_no_params_before_7_2",
     .marked = "p schedule ^$arg*",
     .error = "Invalid $-variable specified",
     .needs = kBtf,
     .unless = kNoParamsIsNosupBtfarg},
};

class KprobeSyntaxError : public SyntaxErrorTest {
 protected:
  KprobeSyntaxError() : SyntaxErrorTest(kKprobeTable, {features::kprobes, features::error_log}) {}
};

TEST_P(KprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  ExpectRowRefused();
}

INSTANTIATE_TEST_SUITE_P(Kprobe, KprobeSyntaxError,
                         ValuesIn(join({kKprobeRows, name_rows("p", "vfs_read"), fetch_arg_rows("p vfs_read"),
                                        typecast_rows("p")})),
                         SyntaxErrorRow::test_name);

class KprobeAppendErrors : public SyntaxErrorTest {
 protected:
  KprobeAppendErrors()
      : SyntaxErrorTest(kKprobeTable, {features::kprobes, features::error_log, features::probe_append,
                                       features::fetcharg_immediate}) {}
};

// The .tc's multiprobe rows: appending a probe point to an existing event
// must keep its type and its arguments, and the same point twice is refused.
TEST_F(KprobeAppendErrors, AppendedPointMustMatchTheEvent) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  auto refusals = argument_appends("p:NAME vfs_read", "p:NAME vfs_write",
                                   features().has(features::fetcharg_immediate_string));
  refusals.insert(refusals.begin(), {"^r:NAME vfs_write", "Probe type is different from existing probe"});
  ExpectAppendsRefused("p:NAME vfs_read", refusals);
}

// BAD_INSN_BNDRY: on x86, where vfs_read's kprobe sits on its ftrace call
// site (debugfs kprobes/list says FTRACE), vfs_read+3 is inside that
// instruction.
TEST_F(KprobeAppendErrors, OffsetInsideTheFtraceCallIsRefused) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  const std::string event = unique("bndry");
  auto probe = create(RawDefinition{DynEventKind::kprobe, "p:kprobes/" + event + " vfs_read", "kprobes", event}.def());
  ASSERT_OK(probe);
  std::string list = sh("cat /sys/kernel/debug/kprobes/list 2>/dev/null || true");
  if (list.find("[FTRACE]") == std::string::npos)
    GTEST_SKIP() << "needs a kprobe on an ftrace site: no [FTRACE] in debugfs kprobes/list (KPROBES_ON_FTRACE)";
  ExpectRefused(RawDefinition{DynEventKind::kprobe, "p vfs_read+3", "kprobes"},
                "Probe point is not an instruction boundary", 2);
}

TRACEBED_SUITE_REQUIRES(KprobeArgStar, features::kprobes, features::error_log);

// Without BTF the $arg* form is refused as unsupported: the row ftracetest
// runs on kernels whose README lacks "<argname>". Kernels from before BTF
// arguments (6.6) know no $arg* and call it an unknown $-variable.
TEST_F(KprobeArgStar, WithoutBtfIsUnsupported) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_syntax_errors.tc");
  if (features().has(features::btf_args)) GTEST_SKIP() << "the kernel has BTF args: the rows above check $arg*";
  TRACEBED_REQUIRE(features::fetcharg_argn);
  ExpectRefused(RawDefinition{DynEventKind::kprobe, "p vfs_read $arg*", "kprobes"},
                AnyOf(HasSubstr("BTF is not available or not supported"), HasSubstr("Invalid $-variable specified"),
                      HasSubstr("Invalid $-valiable specified")),
                11);
}

}  // namespace
}  // namespace tracebed::suites
