#include "framework/testing/forking_shell.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "framework/testing/probe_target.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::testlib {

ForkRun run_forking_shell(TracefsTest& test, const tracefs::Instance& inst,
                          std::initializer_list<std::string_view> pid_files, int children, std::string_view command) {
  // The loop's words are written out: `$(seq N)` would fork one more child.
  std::string words;
  for (int i = 0; i < children; ++i) words += fmt::format("{} ", i);
  std::string write_pid;
  for (std::string_view f : pid_files) write_pid += fmt::format("echo $$ > {} && ", inst.path(f));
  // The sibling sleeps first, so its command runs while the pid file
  // holds the shell (and its children, where the kernel follows forks).
  // Tracing starts once the pid is there: the write that puts it there
  // would be traced otherwise.
  std::string script = fmt::format(
      "( sleep 0.2; {0} ) & echo sibling $!\n"
      "{1}echo 1 > {3}\n"
      "for i in {2}; do {0} & echo child $!; wait $!; done\n"
      "wait; echo shell $$\n",
      command, write_pid, words, inst.path("tracing_on"));
  ProbeRun said = parse_probe_output(test.sh(script));
  ForkRun run;
  for (const auto& line : said.lines) {
    if (line.size() != 2) continue;
    int pid = std::stoi(line[1]);
    if (line[0] == "shell") run.shell = pid;
    else if (line[0] == "sibling") run.sibling = pid;
    else if (line[0] == "child") run.children.push_back(pid);
  }
  EXPECT_NE(run.shell, 0) << "the forking shell did not say its pid:\n" << script;
  EXPECT_NE(run.sibling, 0) << "the forking shell did not say its sibling's pid";
  EXPECT_EQ(run.children.size(), static_cast<size_t>(children)) << "the forking shell's children";
  return run;
}

}  // namespace tracebed::testlib
