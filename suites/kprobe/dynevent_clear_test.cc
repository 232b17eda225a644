// Clearing dynamic events selectively (kernel/trace/trace_dynevent.c):
// `!<definition>` in dynamic_events removes the one event the definition
// names, and truncating kprobe_events or synthetic_events removes only
// that kind. Two kprobes and two synthetic events, and after every step
// exactly the expected ones are still listed in dynamic_events.
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

const Feature kSynthInDynamicEvents = Feature::readme("synthetic events in dynamic_events", "s:[synthetic/]");

class DynEventClear : public TracefsTest {
 protected:
  DynEventClear()
      : TracefsTest({tracefs::features::kprobes, tracefs::features::dynamic_events,
                     tracefs::features::synthetic_events, kSynthInDynamicEvents}) {}
  void SetUpTest() override {
    p1_ = unique("myevent1");
    r2_ = unique("myevent2");
    s1_ = unique("latency1");
    s2_ = unique("latency2");
  }
  void TearDown() override {
    // What a failed step left behind: remove ours by name, nothing else.
    if (!p1_.empty())
      for (const auto& n : listed())
        top().files().append("dynamic_events", "-:" + n).ok();
    TracefsTest::TearDown();
  }
  std::string def_p1() const { return "p:" + p1_ + " vfs_read"; }
  std::string def_r2() const { return "r:" + r2_ + " vfs_read"; }
  std::string def_s1() const { return "s:" + s1_ + " u64 lat; pid_t pid;"; }
  std::string def_s2() const { return "s:" + s2_ + " u64 lat; pid_t pid;"; }

  void setup_events() {
    for (const auto& d : {def_p1(), def_s1(), def_r2(), def_s2()}) ASSERT_OK(top().files().append("dynamic_events", d));
    ASSERT_THAT(listed(), UnorderedElementsAre(p1_, r2_, s1_, s2_));
  }
  // Which of our four events dynamic_events lists ("p:kprobes/name vfs_read").
  std::set<std::string> listed() {
    std::set<std::string> out;
    auto text = top().files().read("dynamic_events");
    EXPECT_OK(text);
    if (!text) return out;
    for (std::string_view line : base::split_lines(*text)) {
      auto words = base::split_words(line);
      if (words.empty()) continue;
      std::string_view head = words[0];
      std::string name(head.substr(head.find_last_of(":/") + 1));
      if (name == p1_ || name == r2_ || name == s1_ || name == s2_) out.insert(name);
    }
    return out;
  }

  std::string p1_, r2_, s1_, s2_;
};

// generic_clear_event.tc: `!` with the definition removes exactly that
// event, of either kind, in any order.
TEST_F(DynEventClear, BangRemovesExactlyTheNamedEvent) {
  TRACEBED_COVERS("ftracetest: dynevent/generic_clear_event.tc");
  setup_events();
  ASSERT_OK(top().files().append("dynamic_events", "!" + def_p1()));
  EXPECT_THAT(listed(), UnorderedElementsAre(r2_, s1_, s2_));
  ASSERT_OK(top().files().append("dynamic_events", "!" + def_s1()));
  EXPECT_THAT(listed(), UnorderedElementsAre(r2_, s2_));
  ASSERT_OK(top().files().append("dynamic_events", "!" + def_r2()));
  EXPECT_THAT(listed(), UnorderedElementsAre(s2_));
  ASSERT_OK(top().files().append("dynamic_events", "!" + def_s2()));
  EXPECT_THAT(listed(), IsEmpty());
}

// clear_select_events.tc: truncating synthetic_events removes the
// synthetic events and leaves the kprobes; truncating kprobe_events the
// other way round.
TEST_F(DynEventClear, TruncatingOneKindsFileLeavesTheOthers) {
  TRACEBED_COVERS("ftracetest: dynevent/clear_select_events.tc");
  setup_events();
  ASSERT_OK(top().files().write("synthetic_events", ""));
  EXPECT_THAT(listed(), UnorderedElementsAre(p1_, r2_));
  ASSERT_OK(top().files().append("dynamic_events", "-:" + p1_));
  ASSERT_OK(top().files().append("dynamic_events", "-:" + r2_));
  ASSERT_THAT(listed(), IsEmpty());
  setup_events();
  ASSERT_OK(top().files().write("kprobe_events", ""));
  EXPECT_THAT(listed(), UnorderedElementsAre(s1_, s2_));
}

// A write is read as lines: a blank line, a comment line and a comment
// after a definition are skipped (trace.c trace_parse_run_command cuts each
// line at '#'; an empty command makes no event and is no error,
// trace_probe.c trace_probe_create). One write of a blank line, a comment,
// a definition with a comment after it, another blank line and a second
// definition defines both, in kprobe_events and in dynamic_events alike.
TEST_F(DynEventClear, BlankLinesAndCommentsAreSkipped) {
  for (const char* file : {"kprobe_events", "dynamic_events"}) {
    SCOPED_TRACE(file);
    const std::string text = "\n# written by tracebed\n" + def_p1() + " # the entry\n\n" + def_r2() + "\n";
    ASSERT_OK(top().files().append(file, text));
    EXPECT_THAT(listed(), UnorderedElementsAre(p1_, r2_));
    ASSERT_OK(top().files().append("dynamic_events", "-:" + p1_));
    ASSERT_OK(top().files().append("dynamic_events", "-:" + r2_));
    EXPECT_THAT(listed(), IsEmpty());
  }
}

}  // namespace
}  // namespace tracebed::suites
