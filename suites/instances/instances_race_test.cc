// instance.tc and instance-event.tc: instances made and removed by
// several shells at once, while others enable events in them and read
// their trace. Nothing may crash, hang or be left behind, and an instance
// made afterwards with the same name works: its marker comes back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

// Seen on debian-5.10 (5.10.223) and debian-6.1 (6.1.192), now and then:
// an enable write reaches an event file whose instance is being removed,
// and faults on what it reads through it, or the file's reference count
// reaches 0 before it is freed (event_file_put's WARNING; the instance then
// stays busy). Both kernels carry the reference counts that were to fix
// this race (tracing_open_file_tr, EVENT_FILE_FL_FREED). Never seen on 6.12
// or later, whose eventfs (6.6-6.8) gives each file its own lifetime.
const KnownKernelBug kEventFileRace{
    "an enable write racing the instance's removal uses a freed event file (a fault in "
    "__ftrace_event_enable_disable, or event_file_put's WARNING on a count gone to 0)",
    // Where the fault or WARNING is (its RIP line), not a frame of any oops on the enable path.
    {"RIP: 0010:__ftrace_event_enable_disable", "RIP: 0010:event_file_put"}, {6, 12},
    "not seen from 6.12 on, after eventfs"};

class InstanceRace : public TracefsTest {
 public:
  InstanceRace() : TracefsTest({features::instances}) {}

 protected:
  // Runs each loop body in its own background shell for a second, then
  // stops them all and waits; prints "done" when every one is gone.
  std::string slam(const std::vector<std::string>& bodies) { return sh(slam_script(bodies)); }
  static std::string slam_script(const std::vector<std::string>& bodies) {
    std::string script = "cd " + fs().root() + "/instances\n";
    for (const std::string& b : bodies) script += "( while :; do " + b + "; done ) >/dev/null 2>&1 & p=\"$p $!\"\n";
    // A mkdir the loop had started runs on after its shell is killed:
    // a second for those to end, as instance-event.tc waits.
    script += "ls -lR > /dev/null 2>&1; sleep 1; kill -1 $p; wait; sleep 1; echo done\n";
    return script;
  }
  // After the races: the names are gone, and made again they work.
  void ExpectCleanAndUsable(const std::vector<std::string>& names) {
    auto listed = fs().instance_names();
    ASSERT_OK(listed);
    for (const std::string& n : names) {
      SCOPED_TRACE(n);
      if (std::find(listed->begin(), listed->end(), n) != listed->end()) ASSERT_OK(fs().remove_instance(n));
      auto again = fs().create_instance(n);
      ASSERT_OK(again);
      ASSERT_OK(again->write_marker("tracebed-after-race"));
      EXPECT_THAT(trace_lines(*again), ElementsAre(HasSubstr("tracebed-after-race")));
      ASSERT_OK(again->destroy());
      EXPECT_THAT(fs().instance_names().value(), Not(Contains(n)));
    }
  }
};

TEST_F(InstanceRace, ConcurrentCreateAndRemoveLeavesNothingBroken) {
  TRACEBED_COVERS("ftracetest: instances/instance.tc");
  std::string x = unique("tbx"), y = unique("tby"), z = unique("tbz");
  std::string body = fmt::format("mkdir {0}; mkdir {1}; mkdir {2}; rmdir {0}; rmdir {1}; rmdir {2}", x, y, z);
  EXPECT_EQ(slam({body, body, body, body, body}), "done\n");
  ExpectCleanAndUsable({x, y, z});
}

TEST_F(InstanceRace, RemovingWhileEventsAreSetAndReadIsSafe) {
  TRACEBED_COVERS("ftracetest: instances/instance-event.tc");
  TRACEBED_REQUIRE(features::sched_events);
  std::string foo = unique("tbfoo");
  auto raced = guest().sh(slam_script({fmt::format("mkdir {0}; rmdir {0}", foo),
                                       fmt::format("echo 1 > {}/events/sched/sched_switch/enable", foo),
                                       fmt::format("cat {}/trace", foo)}));
  if (!raced) TRACEBED_SKIP_IF_KNOWN_BUG(kEventFileRace, raced.error().message);
  ASSERT_OK(raced);
  EXPECT_EQ(raced->out, "done\n") << raced->err;
  // A WARNING leaves the guest running with a count it cannot trust: end
  // it (the next test gets a new one) and judge what the console said.
  if (Status console = guest().check_console(); !console) {
    guest().kill();
    TRACEBED_SKIP_IF_KNOWN_BUG(kEventFileRace, console.error().message);
    FAIL() << console.error().message;
  }
  ExpectCleanAndUsable({foo});

  // An instance with a function probe in it can be removed, and the probe
  // goes with it. Kernels without function probes per instance put it in
  // the top level's list, where it stays (instance-event.tc cleans it up).
  if (features().has(features::function_triggers)) {
    const std::string probe = "schedule:enable_event:sched:sched_switch";
    auto made = fs().create_instance(foo);
    ASSERT_OK(made);
    ASSERT_OK(made->add_ftrace_filter(probe));
    bool shared = fs().top().files().read("set_ftrace_filter").value().find(probe) != std::string::npos;
    ASSERT_OK(made->destroy());
    EXPECT_THAT(fs().instance_names().value(), Not(Contains(foo)));
    if (shared) ASSERT_OK(fs().top().add_ftrace_filter("!" + probe));
    EXPECT_THAT(fs().top().files().read("set_ftrace_filter").value(), Not(HasSubstr(probe)));
  }

  std::string x = unique("tbx"), y = unique("tby"), z = unique("tbz");
  std::string body = fmt::format("mkdir {0}; mkdir {1}; mkdir {2}; rmdir {0}; rmdir {1}; rmdir {2}", x, y, z);
  EXPECT_EQ(slam({body, body, body, body, body}), "done\n");
  ExpectCleanAndUsable({x, y, z});
}

}  // namespace
}  // namespace tracebed::suites
