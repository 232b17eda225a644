#include "framework/testing/matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/decoded_events.h"
#include "framework/testing/probe_target.h"
#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::testlib {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::DescribeMatcher;
using ::testing::ElementsAre;
using ::testing::Gt;
using ::testing::HasSubstr;
using ::testing::Matcher;
using ::testing::Not;
using ::testing::StartsWith;

DecodedEvent open_event(int pid, int64_t fd, std::string path) {
  DecodedEvent e;
  e.system = "kprobes";
  e.name = "p1";
  e.ts = 100;
  e.cpu = 1;
  e.pid = pid;
  e.comm = "cat";
  e.fields["fd"] = fd;
  e.fields["path"] = std::move(path);
  return e;
}

// Why a matcher failed, as EXPECT_THAT would print it.
template <typename M, typename T>
std::string explain(const M& m, const T& value) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(m, value, &listener));
  return listener.str();
}

TEST(Matchers, HasEventTakesTheNameWithOrWithoutItsSystem) {
  DecodedEvent e = open_event(7, 3, "/etc/x");
  EXPECT_THAT(e, HasEvent("kprobes/p1"));
  EXPECT_THAT(e, HasEvent("kprobes:p1"));
  EXPECT_THAT(e, HasEvent("p1", FieldEq("fd", 3), FieldEq("path", "/etc/x"), FromPid(7)));
  EXPECT_THAT(e, Not(HasEvent("uprobes/p1")));
  EXPECT_THAT(e, Not(HasEvent("p1", FieldEq("fd", 4))));
  EXPECT_EQ(explain(IsEvent(std::string("uprobes/p1")), e), "which is kprobes/p1");
}

TEST(Matchers, FieldEqSaysWhatTheFieldWas) {
  DecodedEvent e = open_event(7, -2, "/nonexistent");
  EXPECT_EQ(explain(FieldEq("fd", 3), e), "which has field fd -2");
  EXPECT_EQ(explain(FieldEq("path", "/etc/x"), e), "which has field path \"/nonexistent\"");
  EXPECT_EQ(explain(FieldEq("fd", "3"), e), "which is the number -2");
  EXPECT_EQ(explain(FieldEq("path", 3), e), "which is the string \"/nonexistent\"");
  EXPECT_EQ(explain(FieldEq("mode", 0), e), "which has no field mode");
  EXPECT_EQ(DescribeMatcher<DecodedEvent>(FieldEq("fd", 3)), "has field fd == 3");
}

TEST(Matchers, FieldsMatchAnyMatcher) {
  DecodedEvent e = open_event(7, 5, "/etc/tracebed/release");
  EXPECT_THAT(e, AllOf(IntField("fd", Gt(2)), StrField("path", StartsWith("/etc/"))));
  EXPECT_THAT(e, Not(IntField("path", Gt(2))));
  EXPECT_THAT(explain(IntField("fd", Gt(9)), e), HasSubstr("whose fd is 5"));
  EXPECT_EQ(explain(StrField("fd", StartsWith("/")), e), "which has no text field fd");
}

TEST(Matchers, EventListsReadAsTheEvents) {
  std::vector<DecodedEvent> events = {open_event(7, 3, "/a"), open_event(8, 4, "/b"), open_event(7, -2, "/c")};
  EXPECT_THAT(events, Contains(HasEvent("p1", FromPid(8))));
  EXPECT_THAT(of_pid(events, 7), ElementsAre(HasEvent("p1", FieldEq("fd", 3)), HasEvent("p1", FieldEq("fd", -2))));
  EXPECT_THAT(int_fields(events, "fd"), ElementsAre(3, 4, -2));
  EXPECT_THAT(str_fields(events, "path"), ElementsAre("/a", "/b", "/c"));
  EXPECT_THAT(named(events, "kprobes/p1"), ::testing::SizeIs(3));
  EXPECT_THAT(named(events, "p2"), ::testing::IsEmpty());
  EXPECT_EQ(::testing::PrintToString(events[0]), "cat-7 [1] 100: kprobes:p1 fd=3 path=\"/a\"");
}

// A hist file captured from a 6.12 guest (framework/tracefs/testdata).
TEST(Matchers, HistEntriesAndTotals) {
  auto file = tracefs::parse_hist_file(tracefs::testlib::testdata("hist-sys_enter-syscall-execname-6.12.txt"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_THAT(file->sections, ElementsAre(HistTotals(19855, 210)));
  EXPECT_EQ(explain(HistTotals(19855, 211), file->sections[0]), "which totals Hits: 19855, Entries: 210, Dropped: 0");
  const auto& entries = file->sections[0].entries;
  EXPECT_THAT(entries, Contains(AllOf(HistKeyEq("common_pid", 156), HistKeyEq("id", 257), HitCount(1653))));
  EXPECT_THAT(entries, Contains(AllOf(HistKeyEq("id", 262), HistValueThat("hitcount", Gt(12000)))));
  EXPECT_EQ(explain(HistKeyEq("common_pid", 41), entries[0]), "whose key common_pid is ls              [       156]");
  EXPECT_EQ(explain(HitCount(4), entries[0]), "which has hitcount 12751");
  // A failed Contains prints the entries as the file did.
  EXPECT_THAT(::testing::PrintToString(entries[0]), StartsWith("{ id: sys_newfstatat                [262], common_pid: ls              [       156] }"));
  EXPECT_THAT(::testing::PrintToString(entries[0]), HasSubstr("} hitcount: 12751"));
}

TEST(Matchers, HistSavedValues) {
  auto file = tracefs::parse_hist_file(tracefs::testlib::testdata("hist-sched_switch-onmax-save-6.12.txt"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_THAT(file->sections, ::testing::SizeIs(1));
  const auto& entries = file->sections[0].entries;
  EXPECT_THAT(entries, Contains(AllOf(HistKeyEq("next_pid", 12), HitCount(1), HistSavedThat("max", 373))));
  EXPECT_THAT(entries, Contains(AllOf(HistKeyEq("next_pid", 21), HistSavedThat("max", Gt(200)))));
  EXPECT_EQ(explain(HistSavedThat("max", 1), entries[0]), "whose saved max is 373");
  EXPECT_EQ(explain(HistSavedThat("changed", 1), entries[0]), "which saved no number changed");
}

TEST(ProbeTarget, OutputIsSplitIntoWordsAfterThePid) {
  ProbeRun r = parse_probe_output("pid 412\nopen /etc/x 3\nopen /nonexistent -2\nadd 1 2 -> 3\n");
  EXPECT_EQ(r.pid, 412);
  EXPECT_THAT(r.lines_of("open"), ElementsAre(ElementsAre("/etc/x", "3"), ElementsAre("/nonexistent", "-2")));
  EXPECT_THAT(r.lines_of("add"), ElementsAre(ElementsAre("1", "2", "->", "3")));
}

}  // namespace
}  // namespace tracebed::testlib
