// ftracetest dynevent/eprobes_syntax_errors.tc: event probes (`e`) the
// parser refuses, with the kernel's error_log text (kernel/trace/
// trace_probe.h, ERRORS; location event_probe) and caret (`^` in the row,
// as in the .tc). Attached to syscalls/sys_enter_openat, as the .tc is.
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

struct EprobeError {
  const char* name;
  std::string marked;
  std::string error;
  std::optional<Feature> needs = std::nullopt;
};

void PrintTo(const EprobeError& e, std::ostream* os) { *os << e.marked; }

const Feature kOpenat = Feature::event("syscalls", "sys_enter_openat");
// README: "e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>] [if <filter>]".
const Feature kFilter = Feature::readme("eprobe filters", "<attached-group>.<attached-event> [<args>] [if <filter>]");

const std::vector<EprobeError> kErrors = {
    {"NO_EVENT_INFO_no_event", "e ^a.", "This requires both group and event name to attach"},
    {"NO_EVENT_INFO_no_group", "e ^.b", "This requires both group and event name to attach"},
    {"BAD_ATTACH_EVENT", "e ^a.b", "Attached event does not exist"},
    // The .tc's labels for the next three are older than BTF arguments: a
    // bare name is a BTF argument name, which an eprobe cannot have, and
    // `$foo` is an unknown $-variable (6.12, 7.2).
    {"NOSUP_BTFARG_bare_name", "e syscalls/sys_enter_openat ^foo", "BTF is not available or not supported",
     features::btf_args},
    {"NO_GROUP_NAME", "e:^/bar syscalls/sys_enter_openat", "Group name is not specified"},
    {"GROUP_TOO_LONG", "e:^12345678901234567890123456789012345678901234567890123456789012345/bar syscalls/sys_enter_openat", "Group name is too long"},
    {"BAD_GROUP_NAME", "e:^foo.1/bar syscalls/sys_enter_openat", "Group name must follow the same rules as C identifiers"},
    {"NO_EVENT_NAME", "e:^ syscalls/sys_enter_openat", "Event name is not specified"},
    {"EVENT_TOO_LONG", "e:foo/^12345678901234567890123456789012345678901234567890123456789012345 syscalls/sys_enter_openat", "Event name is too long"},
    {"BAD_EVENT_NAME", "e:foo/^bar.1 syscalls/sys_enter_openat", "Event name must follow the same rules as C identifiers"},
    // Kernels without BTF arguments (6.1) take a bare name for a field of
    // the attached event and refuse it as an invalid fetch argument; those
    // rows are for kernels that parse BTF arguments.
    {"NOSUP_BTFARG_named", "e:foo/bar syscalls/sys_enter_openat arg=^dfd", "BTF is not available or not supported",
     features::btf_args},
    {"BAD_VAR", "e:foo/bar syscalls/sys_enter_openat arg=^$foo", "Invalid $-variable specified", features::btf_args},
    {"NO_EP_FILTER", "e:foo/bar syscalls/sys_enter_openat if ^", "No filter rule after 'if'", kFilter},
};

class EprobeSyntaxError : public TracefsTest, public ::testing::WithParamInterface<EprobeError> {
 protected:
  EprobeSyntaxError() : TracefsTest({features::eprobes, features::error_log, kOpenat}) {}
};

TEST_P(EprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: dynevent/eprobes_syntax_errors.tc");
  const EprobeError& e = GetParam();
  if (e.needs) TRACEBED_REQUIRE(*e.needs);
  Marked m = unmark(e.marked);
  // The kernel logs its argv joined by blanks: "if " is logged as "if",
  // the caret one past it.
  while (m.command.ends_with(' ')) m.command.pop_back();
  auto entry = ExpectRefused(RawDefinition{DynEventKind::eprobe, m.command, "foo", "bar"}, e.error, m.caret);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->location, "event_probe");
}

INSTANTIATE_TEST_SUITE_P(Eprobe, EprobeSyntaxError, ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<EprobeError>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace tracebed::suites
