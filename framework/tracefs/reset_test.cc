#include "framework/tracefs/reset.h"

#include <gtest/gtest.h>

#include "framework/tracefs/testdata.h"
#include "framework/tracefs/text.h"

namespace tracebed::tracefs {
namespace {

using testing::testdata;

// Captured in a debian-6.12 guest after "p:tbprobe vfs_read" and
// "r:tbret vfs_read $retval" (the kernel shows maxactive and arg names).
TEST(DynamicEvents, RemovalLinesForCapturedKprobes) {
  std::vector<std::string> dels;
  std::string text = testdata("dynamic_events-kprobes-6.12.txt");
  for (std::string_view line : split_lines(text)) {
    if (auto d = dynamic_event_removal(line)) dels.push_back(*d);
  }
  EXPECT_EQ(dels, (std::vector<std::string>{"-:kprobes/tbprobe", "-:kprobes/tbret"}));
}

TEST(DynamicEvents, NothingToRemoveInCommentsOrBlankLines) {
  EXPECT_FALSE(dynamic_event_removal("").has_value());
  EXPECT_FALSE(dynamic_event_removal("# comment: not an event").has_value());
}

}  // namespace
}  // namespace tracebed::tracefs
