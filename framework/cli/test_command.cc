// `tracebed test --kernel NAME [--junit FILE] [--filter F]`: runs every guest
// suite binary against one kernel, prints a pass/skip/fail table and writes
// JUnit XML. Each suite boots its own guest (framework/testing).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "framework/cli/commands.h"
#include "framework/vm/catalogue.h"
#include "framework/vm/process.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string suite, name, status;  // status: PASS, SKIP, FAIL
  double seconds = 0;
  std::string message;
  std::vector<std::pair<std::string, std::string>> properties;
};

// The build writes the list of suite binaries beside the executable
// (suites/CMakeLists.txt).
std::vector<fs::path> suite_binaries() {
  fs::path self = fs::read_symlink("/proc/self/exe");
  std::vector<fs::path> out;
  std::ifstream in(self.parent_path() / "tracebed-suites.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.emplace_back(line);
  return out;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') out += ' ';
        else out += c;
    }
  }
  return out;
}

double seconds_of(const nlohmann::json& j) {
  std::string t = j.value("time", "0s");
  return std::strtod(t.c_str(), nullptr);
}

// Reads gtest's JSON report (--gtest_output=json:FILE).
std::vector<Case> parse_report(const fs::path& file, const std::string& binary) {
  std::vector<Case> cases;
  auto text = vm::read_text_file(file);
  if (!text) return cases;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return cases;
  for (const auto& suite : j.value("testsuites", nlohmann::json::array())) {
    for (const auto& t : suite.value("testsuite", nlohmann::json::array())) {
      Case c;
      c.suite = suite.value("name", binary);
      c.name = t.value("name", "?");
      c.seconds = seconds_of(t);
      if (t.value("result", "") == "SKIPPED" || t.value("status", "") == "NOTRUN") c.status = "SKIP";
      else if (t.contains("failures")) c.status = "FAIL";
      else c.status = "PASS";
      for (const auto& f : t.value("failures", nlohmann::json::array()))
        c.message += f.value("failure", "") + "\n";
      if (c.status == "SKIP" && t.contains("skipped")) c.message = t["skipped"].dump();
      for (const auto& [k, v] : t.items()) {
        if (k == "name" || k == "status" || k == "result" || k == "time" || k == "timestamp" || k == "classname" ||
            k == "failures" || k == "file" || k == "line" || k == "value_param" || k == "type_param")
          continue;
        c.properties.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

void write_junit(const fs::path& path, const std::string& kernel, const std::vector<Case>& cases) {
  std::map<std::string, std::vector<const Case*>> by_suite;
  for (const auto& c : cases) by_suite[c.suite].push_back(&c);
  std::ofstream out(path);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format("<testsuites name=\"tracebed {}\">\n", xml_escape(kernel));
  for (const auto& [suite, list] : by_suite) {
    int failures = 0, skipped = 0;
    for (const auto* c : list) {
      failures += c->status == "FAIL";
      skipped += c->status == "SKIP";
    }
    out << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n", xml_escape(suite),
                       list.size(), failures, skipped);
    out << fmt::format("    <properties><property name=\"kernel\" value=\"{}\"/></properties>\n", xml_escape(kernel));
    for (const auto* c : list) {
      out << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n", xml_escape(suite),
                         xml_escape(c->name), c->seconds);
      if (!c->properties.empty()) {
        out << "      <properties>\n";
        for (const auto& [k, v] : c->properties)
          out << fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(v));
        out << "      </properties>\n";
      }
      if (c->status == "FAIL")
        out << fmt::format("      <failure message=\"{}\">{}</failure>\n",
                           xml_escape(c->message.substr(0, c->message.find('\n'))), xml_escape(c->message));
      if (c->status == "SKIP") out << fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c->message));
      out << "    </testcase>\n";
    }
    out << "  </testsuite>\n";
  }
  out << "</testsuites>\n";
}

}  // namespace

void add_test_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("test", "run the guest suites on one kernel; table + JUnit XML");
  struct Args {
    std::string kernel, junit, filter;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-k,--kernel", args->kernel, "catalogue name or bzImage path (default: debian-6.12)");
  cmd->add_option("--junit", args->junit, "write JUnit XML here");
  cmd->add_option("--filter", args->filter, "GoogleTest filter (e.g. Smoke.*)");
  cmd->final_callback([args] {
    if (args->kernel.empty()) {
      auto c = vm::Catalogue::load();
      if (!c) fail(c.error().message);
      args->kernel = c->default_kernel();
    }
    auto suites = suite_binaries();
    if (suites.empty()) fail("no guest suites were built (tracebed-suites.txt is missing beside the executable)");
    fs::path tmp = vm::cache_dir() / "run" / fmt::format("test-{}", getpid());
    fs::create_directories(tmp);
    std::vector<Case> cases;
    int crashed = 0;
    for (const auto& suite : suites) {
      if (!fs::exists(suite)) {
        cases.push_back({suite.filename().string(), "(suite)", "FAIL", 0, "suite binary not built: " + suite.string(), {}});
        continue;
      }
      fs::path report = tmp / (suite.filename().string() + ".json");
      std::vector<std::string> argv = {suite.string(), "--tracebed_kernel=" + args->kernel,
                                       "--gtest_output=json:" + report.string(), "--gtest_brief=1"};
      if (!args->filter.empty()) argv.push_back("--gtest_filter=" + args->filter);
      fmt::print(stderr, "tracebed: running {} on {}\n", suite.filename().string(), args->kernel);
      auto r = vm::run_process(argv, std::chrono::hours(2), vm::Output::to_stderr);
      if (!r) fail(r.error().message);
      auto got = parse_report(report, suite.filename().string());
      if (got.empty() && r->status != 0) {
        ++crashed;
        cases.push_back({suite.filename().string(), "(suite)", "FAIL", 0,
                         fmt::format("suite exited with status {} without a report (guest did not boot?)", r->status),
                         {}});
      }
      cases.insert(cases.end(), got.begin(), got.end());
    }
    std::error_code ec;
    fs::remove_all(tmp, ec);

    int pass = 0, skip = 0, failed = 0;
    size_t width = 20;
    for (const auto& c : cases) width = std::max(width, c.suite.size() + c.name.size() + 1);
    fmt::print("\n{:<{}}  {:<6} {:>8}\n", "TEST", width, "RESULT", "SECONDS");
    for (const auto& c : cases) {
      fmt::print("{:<{}}  {:<6} {:>8.2f}\n", c.suite + "." + c.name, width, c.status, c.seconds);
      pass += c.status == "PASS";
      skip += c.status == "SKIP";
      failed += c.status == "FAIL";
    }
    fmt::print("\n{}: {} passed, {} skipped, {} failed\n", args->kernel, pass, skip, failed);
    for (const auto& c : cases)
      if (c.status == "FAIL") fmt::print("\nFAIL {}.{}\n{}\n", c.suite, c.name, c.message);
    if (!args->junit.empty()) {
      write_junit(args->junit, args->kernel, cases);
      fmt::print("JUnit XML: {}\n", args->junit);
    }
    std::fflush(stdout);
    std::exit(failed || crashed || cases.empty() ? 1 : 0);
  });
}

}  // namespace tracebed::cli
