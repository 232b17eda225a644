// Kprobe event names (kernel/trace/trace_kprobe.c, __trace_kprobe_create):
// without a name the kernel makes one, "p_<symbol>_<offset>" with the
// characters a C identifier cannot hold ('.', ':') turned into '_'; with a
// name, and with a group, the event is where the definition says.
#include <algorithm>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

class KprobeEventName : public TracefsTest {
 protected:
  KprobeEventName() : TracefsTest({tracefs::features::kprobes}) {}
  Result<tracefs::DynamicEvent> probe(const std::string& group, const std::string& event, const std::string& text) {
    return create(DynEventDef{DynEventKind::kprobe, group, event, text});
  }
  bool has_event_dir(const std::string& group, const std::string& event) {
    return fs().top().files().read("events/" + group + "/" + event + "/format").ok();
  }
  static std::string identifier(std::string s) {
    for (char& c : s)
      if (c == '.' || c == ':') c = '_';
    return s;
  }
};

// kprobe_eventname.tc: an unnamed probe on the last text symbol ending in
// vfs_read is kprobes/p_<symbol>_0; a named one kprobes/<name>; one with a
// group <group>/<name>; an unnamed probe on a compiler-made .isra. symbol
// gets a name without the dots, and its event directory exists.
TEST_F(KprobeEventName, AutoNamesGroupsAndDotSymbols) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_eventname.tc");
  std::string func(base::trim(sh("grep ' [tT] .*vfs_read$' /proc/kallsyms | tail -n 1 | cut -f 3 -d ' '")));
  ASSERT_FALSE(func.empty()) << "no text symbol ending in vfs_read in /proc/kallsyms";
  {
    std::string event = "p_" + identifier(func) + "_0";
    auto p = probe("kprobes", event, "p " + func);
    ASSERT_OK(p);
    EXPECT_TRUE(has_event_dir("kprobes", event)) << "no events/kprobes/" << event;
  }
  {
    std::string event = unique("event1");
    auto p = probe("kprobes", event, "p:" + event + " " + func);
    ASSERT_OK(p);
    EXPECT_TRUE(has_event_dir("kprobes", event));
  }
  {
    std::string group = unique("kprobes2");
    std::string event = unique("event2");
    auto p = probe(group, event, "p:" + group + "/" + event + " " + func);
    ASSERT_OK(p);
    EXPECT_TRUE(has_event_dir(group, event));
    EXPECT_FALSE(has_event_dir("kprobes", event)) << "the named group was ignored";
  }
  // A .isra. clone that available_filter_functions lists once (a unique,
  // probeable symbol), as the .tc picks it.
  std::string isra = sh("grep ' [tT] .*\\.isra\\..*' /proc/kallsyms | cut -f 3 -d ' '; true");
  auto functions = fs().top().files().read("available_filter_functions");
  ASSERT_OK(functions);
  auto lines = base::split_lines(*functions);
  std::string dot;
  for (std::string_view f : base::split_lines(isra)) {
    f = base::trim(f);
    if (f.empty()) continue;
    size_t n = std::count_if(lines.begin(), lines.end(), [&](std::string_view l) { return l.find(f) != l.npos; });
    if (n == 1) {
      dot = std::string(f);
      break;
    }
  }
  if (dot.empty()) GTEST_SKIP() << "needs a unique .isra. text symbol: none in /proc/kallsyms";
  std::string event = "p_" + identifier(dot) + "_0";
  auto p = probe("kprobes", event, "p " + dot);
  ASSERT_OK(p);
  auto listed = fs().top().files().read("kprobe_events");
  ASSERT_OK(listed);
  EXPECT_THAT(*listed, HasSubstr("p:kprobes/" + event + " " + dot));
  EXPECT_THAT(event, Not(HasSubstr(".")));
  EXPECT_TRUE(has_event_dir("kprobes", event)) << "no events/kprobes/" << event;
}

}  // namespace
}  // namespace tracebed::suites
