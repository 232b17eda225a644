#include "framework/tracefs/error_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::tracefs {
namespace {

using testlib::testdata;

TEST(ErrorLog, ParsesCapturedFilterErrors) {
  auto entries = parse_error_log(testdata("error_log-6.18.txt"));
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 3u);

  const ErrorLogEntry& first = (*entries)[0];
  EXPECT_EQ(first.seconds, 785u);
  EXPECT_EQ(first.microseconds, 936973u);
  EXPECT_EQ(first.location, "event filter parse error");
  EXPECT_EQ(first.error, "Field not found");
  EXPECT_EQ(first.command, "bogus_field == 1");
  EXPECT_EQ(first.caret, 12u);  // the kernel points at "==": the field before it is unknown

  EXPECT_EQ((*entries)[1].command, "nosuch > 1");
  EXPECT_EQ((*entries)[1].caret, 7u);

  const ErrorLogEntry& last = (*entries)[2];
  EXPECT_EQ(last.error, "Invalid value (did you forget quotes)?");
  EXPECT_EQ(last.command, "prev_pid ==");
  EXPECT_EQ(last.caret, 12u);  // one past the end: "the value is missing"
}

TEST(ErrorLog, StrPrintsWhatTheKernelPrinted) {
  std::string text = testdata("error_log-6.18.txt");
  auto entries = parse_error_log(text);
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  std::string again;
  for (const ErrorLogEntry& e : *entries) again += e.str() + "\n";
  EXPECT_EQ(again, text);
}

TEST(ErrorLog, EmptyLogHasNoEntries) {
  auto entries = parse_error_log("");
  ASSERT_TRUE(entries.ok());
  EXPECT_TRUE(entries->empty());
}

TEST(ErrorLog, TruncatedEntryIsAnErrorNamingTheLine) {
  std::string text = testdata("error_log-6.18.txt");
  text.resize(text.find("  Command: bogus"));  // keep only the first header line
  auto entries = parse_error_log(text);
  ASSERT_FALSE(entries.ok());
  EXPECT_THAT(entries.error().message, ::testing::HasSubstr("error_log line 1"));
}

TEST(ErrorLog, MissingCaretIsAnError) {
  std::string text = testdata("error_log-6.18.txt");
  size_t caret = text.find('^');
  text[caret] = ' ';
  auto entries = parse_error_log(text);
  ASSERT_FALSE(entries.ok());
  EXPECT_THAT(entries.error().message, ::testing::HasSubstr("line 3: expected a caret"));
}


// Captured in a debian-6.12 guest: two bad kprobe definitions and a hist
// trigger on an unknown field. The location may itself contain colons.
TEST(ErrorLog, ParsesKprobeAndHistErrors) {
  auto entries = parse_error_log(testdata("error_log-kprobe-hist-6.12.txt"));
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].location, "trace_kprobe");
  EXPECT_EQ((*entries)[0].error, "Invalid register name");
  EXPECT_EQ((*entries)[0].command, "p:myprobe vfs_read +0(%nosuchreg):u32");
  EXPECT_EQ((*entries)[0].command.substr((*entries)[0].caret), "%nosuchreg):u32");
  EXPECT_EQ((*entries)[1].error, "Invalid probed address or symbol");
  EXPECT_EQ((*entries)[1].command.substr((*entries)[1].caret), "no_such_function_xyz");
  EXPECT_EQ((*entries)[2].location, "hist:sched:sched_switch");
  EXPECT_EQ((*entries)[2].error, "Couldn't find field");
  EXPECT_EQ((*entries)[2].command.substr((*entries)[2].caret), "no_such_field");
}

}  // namespace
}  // namespace tracebed::tracefs
