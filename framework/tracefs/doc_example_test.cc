// The example of docs/tracefs.md, compiled and run as a test, so the doc
// cannot drift from the API. Runs against the local tracefs; skips without
// a writable one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/features.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {
namespace {

using ::testing::HasSubstr;

// [doc-example]
TEST(DocExample, FilterAMarkerAndReadTheKernelsComplaint) {
  auto fs = Tracefs::local();  // or Tracefs(std::make_shared<GuestFileOps>(...), ...)
  if (!fs) GTEST_SKIP() << "needs a local tracefs: " << fs.error().message;
  auto have = Features::probe(*fs);
  ASSERT_TRUE(have.ok()) << have.error().message;
  if (auto why = have->missing(features::instances)) GTEST_SKIP() << *why;

  // A fresh instance, removed when `inst` goes out of scope, pass or fail.
  auto inst = fs->create_instance(unique_instance_name("doc-example"));
  if (!inst) GTEST_SKIP() << "needs a writable tracefs: " << inst.error().message;

  ASSERT_TRUE(inst->write_marker("hello from the docs").ok());
  auto trace = inst->read_trace();
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_THAT(*trace, HasSubstr("tracing_mark_write: hello from the docs"));

  // A rejected write says what, where, the errno and the kernel's words.
  Event sw = inst->event("sched", "sched_switch");
  Status s = sw.set_filter("no_such_field == 1");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("event filter parse error: error: Field not found"));

  // Triggers are built, and show exactly what they write.
  Trigger off = Trigger::traceoff().count(1).filter("prev_pid == 0");
  EXPECT_EQ(off.command(), "traceoff:1 if prev_pid == 0");
  ASSERT_TRUE(sw.add_trigger(off).ok());
}
// [doc-example]

}  // namespace
}  // namespace tracebed::tracefs
