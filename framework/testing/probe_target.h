// Runs the guest's probe target program (vmimages/probe_target) and parses
// what it says it did, so a test compares decoded events with the truth:
//
//   ProbeRun r = run_probe_target(*this, {"add", "1", "2", "3"});
//   r.pid                      -> the process that made the calls
//   r.lines_of("add")          -> {{"1","2","->","3"}, {"2","2","->","4"}, ...}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "framework/tracefs/dynevent.h"
#include "framework/tracefs/tracefs.h"
#include "framework/vm/images/image.h"

namespace tracebed::testlib {

class TracefsTest;

inline constexpr std::string_view kProbeTarget = vm::kGuestProbeTarget;

struct ProbeRun {
  int pid = 0;
  // Each output line after the pid, split at spaces: {"open", "/etc/x", "3"}.
  std::vector<std::vector<std::string>> lines;
  // The lines whose first word is `what`, without that word.
  std::vector<std::vector<std::string>> lines_of(std::string_view what) const;
};

// Runs `tracebed-probe-target ARGS...` by exec in the guest (a failure fails
// the test) and parses its output.
ProbeRun run_probe_target(TracefsTest& test, std::vector<std::string> args);

struct OnlyOptions {
  bool follow_forks = false;  // its children too (option event-fork)
  // tracing_on=0 until the shell is about to exec the program, so not even
  // the shell's own work before the exec (its opens, its writes) is there.
  bool start_tracing = false;
};

// The same, with the instance's events limited to that process
// (set_event_pid, written by the shell that then execs the program). Hist
// triggers do not see events the pid filter drops, and no event of the
// window comes after the program exits: buffer and hist totals cover the
// same events.
ProbeRun run_probe_target_only(TracefsTest& test, const tracefs::Instance& inst, std::vector<std::string> args,
                               OnlyOptions options = {});

// lseek(2)'s own function, to probe for its offset, whence and off_t
// result: ksys_lseek(fd, offset, whence) (fs/read_write.c) where the
// kernel keeps it out of line (Debian's 6.1 and 6.12), else the syscall's
// x86-64 wrapper, into which tinyconfig -O2 builds of 7.2 inline both
// ksys_lseek and vfs_llseek. The wrapper takes the caller's pt_regs, whose
// si and dx hold the offset and whence. Either returns the whole off_t.
struct LseekProbe {
  std::string function;
  tracefs::FetchArg offset_reg, whence_reg;  // kprobes at its entry
  tracefs::FetchArg offset_arg, whence_arg;  // $argN: fprobes at its entry
};
LseekProbe lseek_probe();

// The probe target's `lseek FILE OFFSET WHENCE...` arguments, `rounds`
// times over twelve calls on a file of the guest's initramfs (tmpfs or
// ramfs: s_maxbytes is LLONG_MAX): SEEK_SET to both sides of 2^31, 2^32
// and 2^63, to -1 and LLONG_MIN (-EINVAL, fs/read_write.c vfs_setpos),
// SEEK_HOLE (4, SEEK_MAX: the file's size), and whence 5 and 99 (-EINVAL
// from ksys_lseek itself).
std::vector<std::string> lseek_edge_args(int rounds);
inline constexpr int kLseekEdgeCalls = 12;  // per round

// The probe target's poll(2) of `file` for "in", "pri" or "out" (POLLIN,
// POLLPRI, POLLOUT), up to `timeout_ms`, after a shell fragment run in the
// background (`before`, ending in '&'; empty: none). It reads the file to
// its end first unless `unread` (trace_pipe: a read would block or
// consume). revents 0 is a timeout; a poll the program could not make
// fails the test.
struct Polled {
  unsigned revents = 0;
  long elapsed_ms = 0;
};
struct PollOptions {
  std::string before;
  bool unread = false;
};
Polled poll_file(TracefsTest& test, std::string_view how, const std::string& file, int timeout_ms,
                 const PollOptions& options = {});
inline constexpr unsigned kPollIn = 0x1, kPollPri = 0x2, kPollOut = 0x4;  // include/uapi/asm-generic/poll.h

// Parses the program's output; exposed for the suites' own checks.
ProbeRun parse_probe_output(std::string_view out);

}  // namespace tracebed::testlib
