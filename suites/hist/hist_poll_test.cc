// poll(2) on a hist file (trigger-hist-poll.tc): it sleeps until the
// histogram is hit, then reports POLLIN or POLLPRI, whichever was asked.
// The probe target's `poll` is the poller; the hit is the exit of another
// run of the probe target, under a name no other task has (a symlink,
// which its comm is named after), that sleeps a second first.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/hist/hist_fixture.h"

namespace tracebed::suites {
namespace {

class HistPoll : public Hist {
 protected:
  Event exit_event() { return inst().event("sched", "sched_process_exit"); }
  // The probe target polls the exit hist for `how` ("in", "pri" or "out")
  // up to `timeout_ms`, after running `before` in the background.
  Polled poll(const std::string& how, int timeout_ms, const std::string& before = "") {
    return poll_file(*this, how, exit_event().files().path("hist"), timeout_ms, {.before = before, .unread = false});
  }
  // The hist file as text, for failure messages.
  std::string hist_text() {
    auto text = exit_event().files().read("hist");
    return text ? *text : text.error().message;
  }
};

// A hist file without a poll of its own answers with the VFS's default
// mask (DEFAULT_POLLMASK, include/linux/poll.h), POLLOUT among it, at
// once; the hist's own poll (event_hist_poll) never reports POLLOUT: a
// POLLOUT poll tells which the kernel has. With it, nothing hitting the
// histogram, a poll for POLLIN times out: being ready early is a failure.
// Then a sleeper started just before the poll wakes it when it exits, a
// second or so later, with the bit asked for, and the hist and the trace
// hold that exit.
TEST_F(HistPoll, PollWakesWhenTheHistIsHit) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-hist-poll.tc");
  Polled probe = poll("out", 300);
  if (probe.revents == kPollOut)
    GTEST_SKIP() << "needs poll on hist files: the hist file answers POLLOUT at once, as a file without a poll does";
  ASSERT_EQ(probe.revents, 0u) << "the hist's poll reports no POLLOUT, revents 0x" << std::hex << probe.revents;

  const std::string sleeper = unique("poll");  // a comm: at most 15 characters
  const std::string path = "/tmp/" + sleeper;
  sh("ln -sf " + std::string(kProbeTarget) + " " + path);
  ASSERT_OK(exit_event().add_trigger(HistTrigger().key("comm").filter("comm == \"" + sleeper + "\"").trigger()));
  ASSERT_OK(exit_event().enable());
  // The poller reads the hist to its end first: only a hit after that
  // makes it ready, and nothing can hit it now.
  Polled idle = poll("in", 300);
  EXPECT_EQ(idle.revents, 0u) << "ready with nothing hitting the hist, revents 0x" << std::hex << idle.revents << "\n"
                              << hist_text();
  EXPECT_GE(idle.elapsed_ms, 250);

  int sleeps = 0;
  for (auto [how, bit] : {std::pair{"in", kPollIn}, std::pair{"pri", kPollPri}}) {
    SCOPED_TRACE(how);
    Polled hit = poll(how, 8000, path + " sleep 1000 > /dev/null & ");
    ++sleeps;
    EXPECT_EQ(hit.revents & bit, bit) << "revents 0x" << std::hex << hit.revents;
    EXPECT_GE(hit.elapsed_ms, 500) << "woken before the sleeper exited";
    EXPECT_LT(hit.elapsed_ms, 8000) << "not woken by the exit";
    HistFile file = hist_of(exit_event());
    ASSERT_THAT(file.sections, SizeIs(1));
    EXPECT_THAT(file.sections[0].entries, ElementsAre(HitCount(sleeps)));
  }
  std::vector<DecodedEvent> exits;
  for (const DecodedEvent& e : decoded(exit_event()))
    if (str_field(e, "comm") == sleeper) exits.push_back(e);
  EXPECT_THAT(exits, SizeIs(sleeps));
}

}  // namespace
}  // namespace tracebed::suites
