// Kprobe event names (kernel/trace/trace_kprobe.c, __trace_kprobe_create):
// without a name the kernel makes one, "p_<symbol>_<offset>" with the
// characters a C identifier cannot hold ('.', ':') turned into '_'; with a
// name, and with a group, the event is where the definition says.
#include <algorithm>
#include <optional>
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
  // The line dynamic_events (or kprobe_events) lists for the unnamed
  // kprobe on `symbol`: the name is the kernel's.
  std::optional<DynEventEntry> unnamed_on(const std::string& symbol) {
    auto all = tracefs::read_dynamic_events(fs());
    EXPECT_OK(all);
    if (!all) return std::nullopt;
    for (const DynEventEntry& e : *all)
      if (e.kind == DynEventKind::kprobe && e.target == symbol && e.event.starts_with("p_")) return e;
    return std::nullopt;
  }
  // The kernel named it as kprobe_eventname.tc says (trace_kprobe.c
  // __trace_kprobe_create: "p_<symbol>_<offset>", sanitize_event_name),
  // with no '.', and made its event directory under that name.
  void ExpectNamedByTheKernel(const std::string& symbol) {
    auto made = unnamed_on(symbol);
    ASSERT_TRUE(made) << "dynamic_events lists no unnamed kprobe on " << symbol;
    EXPECT_EQ(made->group, "kprobes") << made->line;
    EXPECT_EQ(made->event, "p_" + identifier(symbol) + "_0") << made->line;
    EXPECT_THAT(made->event, Not(HasSubstr("."))) << made->line;
    auto format = fs().top().files().read("events/kprobes/" + made->event + "/format");
    ASSERT_OK(format);
    EXPECT_THAT(*format, StartsWith("name: " + made->event + "\n"));
  }
};

// kprobe_eventname.tc: an unnamed probe on the last text symbol ending in
// vfs_read is listed by the kernel as kprobes/p_<symbol>_0; a named one
// kprobes/<name>; one with a group <group>/<name>; an unnamed probe on a
// compiler-made .isra. symbol is listed, and has its event directory,
// under a name the kernel made without the dots.
TEST_F(KprobeEventName, AutoNamesGroupsAndDotSymbols) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_eventname.tc");
  std::string func(base::trim(sh("grep ' [tT] .*vfs_read$' /proc/kallsyms | tail -n 1 | cut -f 3 -d ' '")));
  ASSERT_FALSE(func.empty()) << "no text symbol ending in vfs_read in /proc/kallsyms";
  {
    auto p = probe("kprobes", "p_" + identifier(func) + "_0", "p " + func);
    ASSERT_OK(p);
    ExpectNamedByTheKernel(func);
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
  auto p = probe("kprobes", "p_" + identifier(dot) + "_0", "p " + dot);
  ASSERT_OK(p);
  ExpectNamedByTheKernel(dot);
}

}  // namespace
}  // namespace tracebed::suites
