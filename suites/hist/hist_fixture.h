// The fixture of the hist suite's test files: hist triggers in a fresh
// instance, recorded around the probe target's work, their `hist` file
// parsed.
#pragma once

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/hist_file.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {

inline const tracefs::Feature kmalloc_event = tracefs::Feature::event("kmem", "kmalloc");
inline const tracefs::Feature sys_enter_event = tracefs::Feature::event("raw_syscalls", "sys_enter");
inline const tracefs::Feature& getpid_event = features::sys_enter_getpid;
inline const tracefs::Feature fork_event = tracefs::Feature::event("sched", "sched_process_fork");
// README of kernels whose hist variables take numeric literals (5.16+).
inline const tracefs::Feature hist_literals =
    tracefs::Feature::readme("hist numeric literals", "<var1>=<field|var_ref|numeric_literal>");
inline const tracefs::Feature sched_events_exec = tracefs::Feature::event("sched", "sched_process_exec");
inline const tracefs::Feature& write_event = features::sys_enter_write;

// The fd the probe target's `write` writes to (vmimages/probe_target): a
// filter on it keeps the program's own output (fd 1) out of a hist.
inline constexpr int kWriteFd = 100;
inline const std::string kOnWriteFd = "fd == " + std::to_string(kWriteFd);

// `count` write(2)s of `size` bytes each.
struct Writes {
  uint64_t size = 0;
  uint64_t count = 0;
};

class Hist : public TracefsTest {
 public:
  Hist() : TracefsTest({features::hist_triggers}) {}

 protected:
  // Adds the trigger, enables the event, runs the work, stops tracing.
  void record(const Event& ev, const std::vector<HistTrigger>& hists, const std::function<void()>& work) {
    for (const HistTrigger& h : hists) ASSERT_OK(ev.add_trigger(h.trigger()));
    ASSERT_OK(ev.enable());
    work();
    ASSERT_OK(inst().set_tracing_on(false));
  }

  HistFile hist_of(const Event& ev) {
    auto file = tracefs::read_hist(ev);
    EXPECT_OK(file);
    return file.ok() ? std::move(*file) : HistFile{};
  }

  // Only the probe target's events count, in the buffer and the hists alike.
  ProbeRun work(std::vector<std::string> args) { return run_target_only(std::move(args)); }
  ProbeRun kmalloc_work() { return work({"open", "/etc/tracebed/release", "/nonexistent", "/proc/self/stat"}); }
  // The probe target writes each size its count of times, in order, to
  // kWriteFd: sys_enter_write's count is a value the test chose.
  ProbeRun write_work(const std::vector<Writes>& writes) {
    std::vector<std::string> args = {"write"};
    for (const Writes& w : writes) {
      args.push_back(std::to_string(w.size));
      args.push_back(std::to_string(w.count));
    }
    ProbeRun run = work(std::move(args));
    EXPECT_THAT(run.lines_of("write"), SizeIs(writes.size())) << "the probe target did not do every write";
    return run;
  }
  static uint64_t total_writes(const std::vector<Writes>& writes) {
    uint64_t n = 0;
    for (const Writes& w : writes) n += w.count;
    return n;
  }
  // The sizes the probe target wrote to kWriteFd, decoded, in order.
  static std::vector<int64_t> written_sizes(const std::vector<DecodedEvent>& writes, int pid) {
    std::vector<int64_t> out;
    for (const DecodedEvent& e : writes)
      if (e.pid == pid && int_field(e, "fd") == kWriteFd) out.push_back(int_field(e, "count"));
    return out;
  }
  static std::vector<int64_t> sizes_of(const std::vector<Writes>& writes) {
    std::vector<int64_t> out;
    for (const Writes& w : writes) out.insert(out.end(), w.count, static_cast<int64_t>(w.size));
    return out;
  }

  // A shell that renames itself `comm` (kept by its children) and forks
  // `n` subshells that exit at once. It runs under the shell sh() starts,
  // which waits for it: when this returns, its exit and its children's are
  // over and recorded. Only builtins run in it, so it forks exactly `n`.
  struct Forker {
    int pid = 0;
    std::string comm;
  };
  Forker fork_work(int n, const std::string& comm) {
    std::string inner = "echo -n " + comm + " > /proc/$$/comm; i=0; while [ $i -lt " + std::to_string(n) +
                        " ]; do (echo forked > /dev/null); i=$((i+1)); done; read c < /proc/$$/comm; echo $$ $c";
    std::string out = sh("sh -c '" + inner + "'");
    Forker f;
    std::istringstream(out) >> f.pid >> f.comm;
    EXPECT_GT(f.pid, 0) << out;
    EXPECT_EQ(f.comm, comm) << "the shell did not take the name";
    return f;
  }

  // The entries whose common_pid key is pid.
  static std::vector<const tracefs::HistEntry*> entries_of_pid(const HistSection& s, int pid) {
    std::vector<const tracefs::HistEntry*> out;
    for (const auto& entry : s.entries)
      if (::testing::Matches(HistKeyEq("common_pid", pid))(entry)) out.push_back(&entry);
    return out;
  }
};

}  // namespace tracebed::suites
