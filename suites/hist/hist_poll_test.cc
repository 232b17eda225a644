// poll(2) on a hist file (trigger-hist-poll.tc): it sleeps until the
// histogram is hit, then reports POLLIN or POLLPRI, whichever was asked.
// The probe target's `poll` is the poller; a background `sleep 1` is the
// hit, its exit on sched_process_exit.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/hist/hist_fixture.h"

namespace tracebed::suites {
namespace {

struct Polled {
  unsigned revents = 0;
  long elapsed_ms = 0;
};

class HistPoll : public Hist {
 protected:
  Event exit_event() { return inst().event("sched", "sched_process_exit"); }
  // The probe target polls the exit hist for `how` ("in" or "pri") up to
  // `timeout_ms`, after running `before` in the background.
  Polled poll(const std::string& how, int timeout_ms, const std::string& before = "") {
    std::string out = sh(before + std::string(kProbeTarget) + " poll " + how + " " +
                         exit_event().files().path("hist") + " " + std::to_string(timeout_ms) + "; wait");
    Polled p;
    size_t at = out.find("\npoll ");
    EXPECT_NE(at, std::string::npos) << out;
    if (at == std::string::npos) return p;
    std::vector<std::string> words;
    std::string line = out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    for (size_t b = 0, e; b < line.size(); b = e + 1) {
      e = line.find(' ', b);
      if (e == std::string::npos) e = line.size();
      words.push_back(line.substr(b, e - b));
    }
    EXPECT_THAT(words, SizeIs(4)) << line;
    if (words.size() != 4) return p;
    p.revents = static_cast<unsigned>(std::stoul(words[2], nullptr, 16));
    p.elapsed_ms = std::stol(words[3]);
    return p;
  }
};

// Nothing hits the histogram: the poll times out (a kernel without hist
// poll says the file is ready at once). Then a `sleep 1` started just
// before the poll wakes it when it exits, a second or so later, with the
// bit asked for, and the hist and the trace hold that exit.
TEST_F(HistPoll, PollWakesWhenTheHistIsHit) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-hist-poll.tc");
  ASSERT_OK(exit_event().add_trigger(HistTrigger().key("comm").filter("comm == \"sleep\"").trigger()));
  ASSERT_OK(exit_event().enable());
  Polled idle = poll("in", 300);
  if (idle.revents != 0) GTEST_SKIP() << "needs poll on hist files: ready at once, revents 0x" << std::hex << idle.revents;
  EXPECT_GE(idle.elapsed_ms, 250);

  constexpr unsigned kPollIn = 0x1, kPollPri = 0x2;  // include/uapi/asm-generic/poll.h
  int sleeps = 0;
  for (auto [how, bit] : {std::pair{"in", kPollIn}, std::pair{"pri", kPollPri}}) {
    SCOPED_TRACE(how);
    Polled hit = poll(how, 8000, "sleep 1 & ");
    ++sleeps;
    EXPECT_EQ(hit.revents & bit, bit) << "revents 0x" << std::hex << hit.revents;
    EXPECT_GE(hit.elapsed_ms, 500) << "woken before the sleep exited";
    EXPECT_LT(hit.elapsed_ms, 8000) << "not woken by the exit";
    HistFile file = hist_of(exit_event());
    ASSERT_THAT(file.sections, SizeIs(1));
    EXPECT_THAT(file.sections[0].entries, ElementsAre(HitCount(sleeps)));
  }
  std::vector<DecodedEvent> exits;
  for (const DecodedEvent& e : decoded(exit_event()))
    if (str_field(e, "comm") == "sleep") exits.push_back(e);
  EXPECT_THAT(exits, SizeIs(sleeps));
}

}  // namespace
}  // namespace tracebed::suites
