// ftracetest dynevent/eprobes_syntax_errors.tc: event probes (`e`) the
// parser refuses, with the kernel's error_log text and caret
// (framework/testing/syntax_errors.h; location event_probe). Attached to
// syscalls/sys_enter_openat, as the .tc is.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/syntax_errors.h"

namespace tracebed::suites {
namespace {

const Feature kOpenat = Feature::event("syscalls", "sys_enter_openat");
// README: "e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>] [if <filter>]".
const Feature kFilter = Feature::readme("eprobe filters", "<attached-group>.<attached-event> [<args>] [if <filter>]");
const Feature kBtf = features::btf_args;

// A bare name in an eprobe's arguments: 7.3 looks it up among the attached
// event's fields (NO_EVENT_FIELD, as the 7.3 .tc says); 6.12 and 7.2 took
// it for a BTF argument name, which an eprobe cannot have. Kernels without
// BTF arguments (6.1) take it for a field and call it an invalid fetch
// argument: these rows are for kernels that parse BTF arguments.
const std::string kNoField = "This event field is not found.";
const std::string kNoBtf = "BTF is not available or not supported";

const std::vector<SyntaxErrorRow> kEprobeRows = {
    {"NO_EVENT_INFO_no_event", "e ^a.", "This requires both group and event name to attach"},
    {"NO_EVENT_INFO_no_group", "e ^.b", "This requires both group and event name to attach"},
    {"BAD_ATTACH_EVENT", "e ^a.b", "Attached event does not exist"},
    {.name = "NO_EVENT_FIELD_bare_name", .marked = "e syscalls/sys_enter_openat ^foo", .error = kNoField,
     .needs = kBtf, .also = {kNoBtf}},
    {.name = "NO_EVENT_FIELD_named", .marked = "e:foo/bar syscalls/sys_enter_openat arg=^COMM", .error = kNoField,
     .needs = kBtf, .also = {kNoBtf}},
    {"NO_EVENT_FIELD_current", "e:foo/bar syscalls/sys_enter_openat arg=^current", kNoField,
     features::fetcharg_current},
    // `$foo` is an unknown $-variable (6.12 to 7.3).
    {"BAD_VAR", "e:foo/bar syscalls/sys_enter_openat arg=^$foo", "Invalid $-variable specified", kBtf},
    {"NO_EP_FILTER", "e:foo/bar syscalls/sys_enter_openat if ^", "No filter rule after 'if'", kFilter},
};

class EprobeSyntaxError : public SyntaxErrorTest {
 protected:
  EprobeSyntaxError() : SyntaxErrorTest(kEprobeTable, {features::eprobes, features::error_log, kOpenat}) {}
};

TEST_P(EprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: dynevent/eprobes_syntax_errors.tc");
  ExpectRowRefused();
}

INSTANTIATE_TEST_SUITE_P(Eprobe, EprobeSyntaxError,
                         ValuesIn(join({kEprobeRows, name_rows("e", "syscalls/sys_enter_openat")})),
                         SyntaxErrorRow::test_name);

}  // namespace
}  // namespace tracebed::suites
