#include "framework/testing/tool_fixture.h"

#include <algorithm>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "framework/tracefs/tracefs_text.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::testlib {

void ToolTest::use_tool(std::vector<std::string> command, std::string version) {
  command_ = std::move(command);
  // The tool's own name, for its command lines: the last word before the
  // arguments is the program (a loader's arguments come first).
  name_ = command_.empty() ? "" : std::filesystem::path(command_.back()).filename().string();
  version_ = std::move(version);
  RecordProperty("tool", version_);
}

std::string ToolTest::where(std::string_view cmdline) const {
  return fmt::format("{} on {} ({}): `{}`", version_, environment().options().kernel, guest().release(), cmdline);
}

ToolRun ToolTest::tool(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  ToolRun ran = try_tool(args, timeout);
  if (ran.started) expect_ran(ran);
  return ran;
}

ToolRun ToolTest::try_tool(const std::vector<std::string>& args, std::chrono::seconds timeout) {
  ToolRun ran;
  ran.cmdline = name_;
  for (const std::string& a : args) ran.cmdline += " " + shell_word(a);
  std::vector<std::string> argv = command_;
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = guest().run(argv, timeout);
  if (!r) {
    ADD_FAILURE() << where(ran.cmdline) << ": " << r.error().message;
    return ran;
  }
  ran.out = r->out;
  ran.err = r->err;
  ran.ok = r->ok();
  ran.started = true;
  ran.status = r->shell_status();
  ran.timed_out = r->timed_out;
  return ran;
}

void ToolTest::expect_ran(const ToolRun& run) const {
  EXPECT_TRUE(run.ok) << where(run.cmdline) << ": status " << run.status << (run.timed_out ? " (timed out)" : "")
                      << "\nstderr:\n" << run.err << "\nstdout:\n" << run.out;
}

std::string host_tool_version(std::string_view path, std::string_view marker, std::string fallback) {
  auto r = vm::run_process({std::string(path), "--version"}, std::chrono::seconds(30));
  if (!r) return fallback;
  for (auto line : tracefs::split_lines(r->output)) {
    if (line.find(marker) != std::string_view::npos) return std::string(tracefs::trim(line));
  }
  return fallback;
}

std::string guest_tool_version(std::vector<std::string> command, std::string_view name, const std::string& package) {
  command.push_back("--version");
  auto r = guest().run(command, std::chrono::seconds(120));
  std::string v = r && r->ok() ? std::string(tracefs::trim(r->out.substr(0, r->out.find('\n')))) : "";
  v = fmt::format("{} from {}", v.empty() ? fmt::format("{} (version unknown)", name) : v, package);
  fmt::print(stderr, "tracebed: {} runs on {} ({})\n", v, environment().options().kernel, guest().release());
  return v;
}

std::string shell_word(std::string_view s) {
  if (!s.empty() && s.find_first_of(" '\"\\$;&|<>*?()") == std::string_view::npos) return std::string(s);
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string set_diff(const std::set<std::string>& expected, const std::set<std::string>& actual) {
  std::vector<std::string> missing, extra;
  std::set_difference(expected.begin(), expected.end(), actual.begin(), actual.end(), std::back_inserter(missing));
  std::set_difference(actual.begin(), actual.end(), expected.begin(), expected.end(), std::back_inserter(extra));
  auto first = [](const std::vector<std::string>& v) {
    return fmt::join(v.begin(), v.begin() + std::min<size_t>(v.size(), 20), " ");
  };
  return fmt::format("missing ({}): {}\nextra ({}): {}", missing.size(), first(missing), extra.size(), first(extra));
}

}  // namespace tracebed::testlib
