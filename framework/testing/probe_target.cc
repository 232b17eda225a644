#include "framework/testing/probe_target.h"

#include <charconv>

#include <gmock/gmock.h>

#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::testlib {

std::vector<std::vector<std::string>> ProbeRun::lines_of(std::string_view what) const {
  std::vector<std::vector<std::string>> out;
  for (const auto& line : lines)
    if (!line.empty() && line[0] == what) out.emplace_back(line.begin() + 1, line.end());
  return out;
}

ProbeRun parse_probe_output(std::string_view out) {
  ProbeRun run;
  for (std::string_view line : tracefs::split_lines(out)) {
    std::vector<std::string> words;
    for (std::string_view w : tracefs::split_words(line)) words.emplace_back(w);
    if (words.empty()) continue;
    if (words[0] == "pid" && words.size() == 2 && run.pid == 0) {
      std::from_chars(words[1].data(), words[1].data() + words[1].size(), run.pid);
      continue;
    }
    run.lines.push_back(std::move(words));
  }
  return run;
}

ProbeRun run_probe_target(TracefsTest& test, std::vector<std::string> args) {
  args.insert(args.begin(), std::string(kProbeTarget));
  ProbeRun run = parse_probe_output(test.run(std::move(args)));
  EXPECT_NE(run.pid, 0) << "the probe target did not say its pid";
  return run;
}

ProbeRun run_probe_target_only(TracefsTest& test, const tracefs::Instance& inst, std::vector<std::string> args,
                               OnlyOptions options) {
  if (options.follow_forks) EXPECT_OK(inst.set_option("event-fork", true));
  if (options.start_tracing) EXPECT_OK(inst.set_tracing_on(false));
  std::string script = "echo $$ > " + inst.path("set_event_pid");
  if (options.start_tracing) script += " && echo 1 > " + inst.path("tracing_on");
  script += " && exec " + std::string(kProbeTarget);
  for (const std::string& a : args) script += " '" + a + "'";
  ProbeRun run = parse_probe_output(test.sh(script));
  EXPECT_NE(run.pid, 0) << "the probe target did not say its pid";
  return run;
}

Polled poll_file(TracefsTest& test, std::string_view how, const std::string& file, int timeout_ms,
                 const PollOptions& options) {
  std::string script = options.before + std::string(kProbeTarget) + " poll " + std::string(how) + " " + file + " " +
                       std::to_string(timeout_ms) + (options.unread ? " unread" : "") + "; wait";
  const std::string out = test.sh(script);
  auto lines = parse_probe_output(out).lines_of("poll");
  Polled p;
  EXPECT_THAT(lines, ::testing::SizeIs(1)) << out;
  if (lines.size() != 1) return p;
  EXPECT_THAT(lines[0], ::testing::SizeIs(3)) << "poll " << file << ": " << out;  // FILE -ERRNO: open failed
  if (lines[0].size() != 3) return p;
  p.revents = static_cast<unsigned>(std::stoul(lines[0][1], nullptr, 16));
  p.elapsed_ms = std::stol(lines[0][2]);
  return p;
}

LseekProbe lseek_probe() {
  using tracefs::FetchArg;
  if (!TracefsTest::traceable({"ksys_lseek"}).empty())
    return {"ksys_lseek", FetchArg::reg("si"), FetchArg::reg("dx"), FetchArg::arg(2), FetchArg::arg(3)};
  // struct pt_regs (arch/x86/include/asm/ptrace.h): si at 104, dx at 96.
  return {"__x64_sys_lseek", FetchArg::reg("di").deref(104), FetchArg::reg("di").deref(96),
          FetchArg::arg(1).deref(104), FetchArg::arg(1).deref(96)};
}

std::vector<std::string> lseek_edge_args(int rounds) {
  const char* pairs[kLseekEdgeCalls][2] = {
      {"0", "0"},          {"1", "0"},          {"2147483647", "0"},          {"2147483648", "0"},
      {"4294967295", "0"}, {"4294967296", "0"}, {"9223372036854775807", "0"}, {"-1", "0"},
      {"-9223372036854775808", "0"}, {"0", "4"}, {"0", "5"},                  {"0", "99"},
  };
  std::vector<std::string> args = {"lseek", "/etc/tracebed/release"};
  for (int round = 0; round < rounds; ++round)
    for (const auto& p : pairs) {
      args.push_back(p[0]);
      args.push_back(p[1]);
    }
  return args;
}

}  // namespace tracebed::testlib
