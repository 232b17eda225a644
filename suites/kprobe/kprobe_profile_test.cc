// kprobe_profile (kernel/trace/trace_kprobe.c, probes_profile_seq_show):
// one line per kprobe event, "<event> <hits> <misses>". The probe is on
// getpid(2)'s entry, which only the probe target calls in the guest, so
// its own count of calls is the hit count.
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

struct ProfileLine {
  uint64_t hits = 0, misses = 0;
};

class KprobeProfile : public TracefsTest {
 protected:
  KprobeProfile() : TracefsTest({tracefs::features::kprobes}) {}

  // The line of `event`, or nullopt when kprobe_profile has none. Newer
  // kernels print "group/event", older ones the event alone.
  std::optional<ProfileLine> line_of(const std::string& event) {
    auto text = fs().top().files().read("kprobe_profile");
    EXPECT_OK(text);
    if (!text) return std::nullopt;
    for (std::string_view line : base::split_lines(*text)) {
      auto w = base::split_words(line);
      if (w.size() != 3 || (w[0] != event && w[0] != "kprobes/" + event)) continue;
      auto hits = base::parse_number<uint64_t>(w[1]);
      auto misses = base::parse_number<uint64_t>(w[2]);
      EXPECT_TRUE(hits && misses) << line;
      return ProfileLine{hits.value_or(0), misses.value_or(0)};
    }
    return std::nullopt;
  }
};

// profile.tc: a new probe is listed with 0 hits and 0 misses; enabled, it
// counts hits (here exactly the calls made) and no misses; disabled, it
// counts nothing; removed, it is no longer listed.
TEST_F(KprobeProfile, HitsAreTheCallsMadeWhileEnabled) {
  TRACEBED_COVERS("ftracetest: kprobe/profile.tc");
  constexpr int kCalls = 1500;
  const std::string name = unique("myevent");
  EXPECT_FALSE(line_of(name).has_value());
  auto ev = create(KprobeDef::at(name, "__x64_sys_getpid"));
  ASSERT_OK(ev);
  auto fresh = line_of(name);
  ASSERT_TRUE(fresh.has_value()) << "kprobe_profile does not list " << name;
  EXPECT_EQ(fresh->hits, 0u);
  EXPECT_EQ(fresh->misses, 0u);

  ASSERT_OK(ev->enable(inst()));
  run_target({"getpid", std::to_string(kCalls)});
  ASSERT_OK(ev->disable(inst()));
  auto counted = line_of(name);
  ASSERT_TRUE(counted.has_value());
  // kCalls, and the target's own getpid that reports its pid (probe_target.c main).
  EXPECT_EQ(counted->hits, static_cast<uint64_t>(kCalls + 1)) << "hits after " << kCalls + 1 << " getpid calls";
  EXPECT_EQ(counted->misses, 0u);

  run_target({"getpid", std::to_string(kCalls)});
  auto after = line_of(name);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->hits, counted->hits) << "a disabled kprobe counted hits";

  ASSERT_OK(ev->destroy());
  EXPECT_FALSE(line_of(name).has_value()) << "kprobe_profile still lists a removed probe";
}

}  // namespace
}  // namespace tracebed::suites
