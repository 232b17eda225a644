// The user_events suites' fixture: a fresh instance per test, the
// producer's script helpers and the decoded records of one event.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/user_events.h"
#include "framework/tracefs/user_events_tracefs.h"
#include "suites/user_events/producer.h"

namespace tracebed::suites {

class UserEvents : public TracefsTest {
 public:
  UserEvents() : TracefsTest({features::user_events}) {}

 protected:
  // Stops tracing and decodes the instance's records of this event, in the
  // order of their `seq` field when they have one (the producer numbers
  // its writes; CPUs' buffers are read one after another).
  std::vector<DecodedEvent> stop_and_decode(const std::string& name,
                                            std::string_view system = tracefs::kUserEventsSystem) {
    std::vector<DecodedEvent> out = decoded({std::string(system), name});
    std::stable_sort(out.begin(), out.end(), [](const DecodedEvent& a, const DecodedEvent& b) {
      auto sa = a.fields.find("seq"), sb = b.fields.find("seq");
      if (sa == a.fields.end() || sb == b.fields.end()) return false;
      return std::get<int64_t>(sa->second) < std::get<int64_t>(sb->second);
    });
    return out;
  }

  // Runs `script`, which registers "r" and writes to it n times, and
  // decodes the event's records: the registration and every write must
  // succeed, and every record must be there.
  void write_all(const std::vector<std::string>& script, const std::string& name, size_t n, ProducerRun* run,
                 std::vector<DecodedEvent>* got) {
    *run = run_producer(script);
    ASSERT_TRUE(run->get("reg", "r").ok()) << run->text;
    EXPECT_EQ(run->count("write", "r", "ok"), n) << run->text;
    *got = stop_and_decode(name);
    ASSERT_THAT(*got, SizeIs(n));
  }

  static std::string reg(std::string_view id, const UserEventDef& def, std::string_view flags = "0",
                         std::string_view word = "w0", int bit = 31, int size = 4) {
    return fmt::format("reg {} {} {} {} {} {}", id, word, bit, size, flags, def.command());
  }

  // Polls until path is gone; false after `patience`.
  bool wait_gone(const std::string& path, std::chrono::milliseconds patience = std::chrono::seconds(10)) {
    auto deadline = std::chrono::steady_clock::now() + patience;
    while (fs().ops().exists(path)) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  std::string event_dir(const std::string& name, std::string_view system = tracefs::kUserEventsSystem) {
    return fs().root() + fmt::format("/events/{}/{}", system, name);
  }

  tracefs::UserEventsStatus status() {
    auto st = tracefs::read_user_events_status(fs());
    EXPECT_OK(st);
    return st.ok() ? *st : tracefs::UserEventsStatus{};
  }
};

}  // namespace tracebed::suites
