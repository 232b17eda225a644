// docs/modules.md: testing the events of your own module.
#include <fmt/format.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

// Skips, naming the module, where the guest has no hello_events.ko.
TRACEBED_SUITE_REQUIRES(HelloModule, Feature::module("hello_events"));

// Events enabled by ":mod:" before the module exists are on when it loads,
// so the events its init emits are recorded.
TEST_F(HelloModule, InitEmitsCountEvents) {
  ASSERT_OK(inst().add_set_event(":mod:hello_events"));
  sh("modprobe hello_events count=50");
  auto events = decoded({"hello", "hello"});
  sh("rmmod hello_events");
  ASSERT_THAT(events, SizeIs(50));
  for (int i = 0; i < 50; ++i)
    EXPECT_THAT(events[i], HasEvent("hello", FieldEq("n", i), FieldEq("msg", fmt::format("hello {}", i))));
}

}  // namespace
}  // namespace tracebed::suites
