// docs/writing-tests.md: a new feature area, here kretprobes on openat(2).
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

TRACEBED_SUITE_REQUIRES(OpenReturn, features::kprobes, features::error_log);

// The probe target opens two files; each open's fd (or -ENOENT) is recorded.
TEST_F(OpenReturn, RetvalIsTheFdOrTheError) {
  auto ev = create_enabled(KprobeDef::on_return(unique("open"), "do_sys_openat2")
                             .arg(FetchArg::retval().name("fd").type(FetchType::s32())));
  ASSERT_OK(ev);
  ProbeRun run = run_target_only({"open", "/etc/tracebed/release", "/nonexistent"}, {.start_tracing = true});
  int fd = std::stoi(run.lines_of("open").at(0).at(1));
  EXPECT_THAT(of_pid(decoded(*ev), run.pid),
              ElementsAre(HasEvent(ev->name(), FieldEq("fd", fd)), HasEvent(ev->name(), FieldEq("fd", -2))));
}

// A symbol the kernel does not have: error_log points at it.
TEST_F(OpenReturn, UnknownSymbolIsRefused) {
  KprobeDef bad = KprobeDef::at(unique("bad"), "tracebed_no_such_function");
  ExpectRefused(bad, "Invalid probed address or symbol", bad.command().find("tracebed_no_such_function"));
}

}  // namespace
}  // namespace tracebed::suites
