#include "framework/decode/line_head.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

namespace tracebed::decode {
namespace {

// The head as trace-cmd 3.1.6 prints it, through printf itself.
std::string printf_head(std::string_view comm, int pid, int cpu, uint64_t ts, std::string_view name, bool raw) {
  uint64_t seconds, fraction;
  if (raw) {
    seconds = ts / 1000000000;
    fraction = ts % 1000000000;
  } else {
    const uint64_t us = (ts + 500) / 1000;
    seconds = us / 1000000;
    fraction = us % 1000000;
  }
  const int pad = name.size() < 20 ? static_cast<int>(20 - name.size()) : 0;
  char buf[512];
  const std::string c(comm), n(name);
  std::snprintf(buf, sizeof buf, raw ? "%16s-%-5d [%03d] %5" PRIu64 ".%09" PRIu64 ": %s: %*s"
                                     : "%16s-%-5d [%03d] %5" PRIu64 ".%06" PRIu64 ": %s: %*s",
                c.c_str(), pid, cpu, seconds, fraction, n.c_str(), pad, "");
  return buf;
}

std::string random_text(std::mt19937_64& rng, size_t size) {
  std::string s(size, ' ');
  for (char& c : s) c = static_cast<char>('a' + rng() % 26);
  return s;
}

std::unique_ptr<EventFormat> event(uint32_t id, std::string name) {
  auto e = std::make_unique<EventFormat>();
  e->id = id;
  e->name = std::move(name);
  return e;
}

std::string written(LineHead& head, TraceContext& ctx, const EventFormat& e, int pid, int cpu, uint64_t ts) {
  std::string room(LineHead::kRoom, '#');
  char* end = head.write(room.data(), ctx, e, pid, cpu, ts);
  if (!end) return "(not usual)";
  return room.substr(0, static_cast<size_t>(end - room.data()));
}

// Random comms (0 to 16 bytes), pids (negative and 10-digit ones too),
// CPUs, times (up to 2^64 ns) and names (1 to 60 bytes), with and without
// -t: both ways of writing match printf. Records come in runs of a task per
// CPU, as in a trace, so the kept parts are used and renewed.
TEST(LineHeadTest, MatchesPrintfForRandomHeads) {
  std::mt19937_64 rng(11);
  std::vector<std::unique_ptr<EventFormat>> events;
  for (uint32_t id = 0; id < 80; ++id) events.push_back(event(id * 7 + 1, random_text(rng, 1 + rng() % 60)));
  for (bool raw : {false, true}) {
    TraceContext ctx;
    std::vector<int> pids;
    for (int i = 0; i < 50; ++i) {
      int pid = static_cast<int>(rng() % 70000);
      if (i % 10 == 0) pid = -pid;
      if (i % 17 == 0) pid = 2000000000 + i;
      pids.push_back(pid);
      if (i % 3) ctx.set_comm(pid, random_text(rng, rng() % 17));
    }
    LineHead kept(raw), parts(raw);
    uint64_t ts = rng() % 4000000000;
    for (int i = 0; i < 20000; ++i) {
      const int cpu = static_cast<int>(rng() % 4 == 0 ? rng() % 1000 : rng() % 3);
      const int pid = pids[(i / 7 + static_cast<size_t>(cpu)) % pids.size()];
      const EventFormat& e = *events[rng() % events.size()];
      ts += rng() % 3 == 0 ? rng() % 5000000000 : rng() % 2000;
      if (i % 1000 == 999) ts = rng();  // any 64-bit time
      const std::string comm(task_comm(ctx, pid));
      const std::string want = printf_head(comm, pid, cpu, ts, e.name, raw);
      SCOPED_TRACE(want);
      ASSERT_EQ(written(kept, ctx, e, pid, cpu, ts), want);
      std::string room(LineHead::kRoom, '#');
      char* end = parts.write(room.data(), comm, e, pid, cpu, ts);
      ASSERT_EQ(room.substr(0, static_cast<size_t>(end - room.data())), want);
    }
  }
}

// A task's comm kept for its CPU follows the comm store: a pid first
// unknown ("<...>") and named later by a sched_switch is printed by name.
TEST(LineHeadTest, KeptTaskFollowsLaterComms) {
  TraceContext ctx;
  ctx.set_comm(7, "seven");
  auto e = event(1, "sched_switch");
  LineHead head(false);
  EXPECT_EQ(written(head, ctx, *e, 7, 0, 1000), printf_head("seven", 7, 0, 1000, "sched_switch", false));
  EXPECT_EQ(written(head, ctx, *e, 42, 0, 2000), printf_head("<...>", 42, 0, 2000, "sched_switch", false));
  ctx.set_comm(42, "late");
  EXPECT_EQ(written(head, ctx, *e, 42, 0, 3000), printf_head("late", 42, 0, 3000, "sched_switch", false));
  // The store keeps the first comm of a pid (libtraceevent's EEXIST).
  ctx.set_comm(42, "later");
  EXPECT_EQ(written(head, ctx, *e, 42, 0, 4000), printf_head("late", 42, 0, 4000, "sched_switch", false));
  EXPECT_EQ(written(head, ctx, *e, 0, 0, 5000), printf_head("<idle>", 0, 0, 5000, "sched_switch", false));
}

TEST(LineHeadTest, UnusualHeadsAreLeftToTheCaller) {
  TraceContext ctx;
  ctx.set_comm(5, "a-comm-of-twenty-bytes");
  auto plain = event(1, "x");
  auto long_name = event(2, std::string(61, 'n'));
  auto big_id = event(70000, "x");
  LineHead head(false);
  EXPECT_EQ(written(head, ctx, *plain, 5, 0, 0), "(not usual)");
  EXPECT_EQ(written(head, ctx, *plain, 6, 1000, 0), "(not usual)");
  EXPECT_EQ(written(head, ctx, *plain, 6, -1, 0), "(not usual)");
  EXPECT_EQ(written(head, ctx, *long_name, 6, 0, 0), "(not usual)");
  EXPECT_EQ(written(head, ctx, *big_id, 6, 0, 0), "(not usual)");
  EXPECT_EQ(written(head, ctx, *plain, 6, 999, 0), printf_head("<...>", 6, 999, 0, "x", false));
}

}  // namespace
}  // namespace tracebed::decode
