// The shared main of every guest suite: flags, one guest, then the tests.
//
// Beyond gtest's and init()'s flags:
//   --tracebed_local  test this machine's own kernel in place, as
//                     `tracebed test --local` does (--tracebed_kernel=local
//                     --tracebed_launcher=local)
//   --tracebed_ktap   stdout carries only the results as KTAP
//                     (framework/matrix), read back from gtest's XML report,
//                     which keeps GTEST_SKIP's reasons; gtest's own output
//                     goes to stderr
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report_writers.h"
#include "framework/testing/guest_environment.h"
#include "framework/vm/guests/local_tracing.h"

#if TRACEBED_AGENT_EMBEDDED
namespace tracebed::agent {
int embedded_agent_main(int argc, char** argv);
}
#endif

namespace {

namespace matrix = tracebed::matrix;

// Prints the XML report at `xml` as KTAP on stdout; false when unreadable.
bool print_ktap(const std::filesystem::path& xml) {
  auto text = tracebed::base::read_file(xml);
  if (!text) {
    fmt::print(stderr, "tracebed: no KTAP: {}\n", text.error().message);
    return false;
  }
  auto junit = matrix::read_junit(*text, xml.string());
  if (!junit) {
    fmt::print(stderr, "tracebed: no KTAP: {}\n", junit.error().message);
    return false;
  }
  matrix::KernelRun run;
  run.tests = std::move(junit->tests);
  auto property = [&](const char* name) {
    auto it = junit->properties.find(name);
    return it == junit->properties.end() ? std::string() : it->second;
  };
  run.kernel = property("tracebed_kernel");
  run.release = property("kernel_release");
  run.accelerator = property("accelerator");
  fmt::print("{}", matrix::write_ktap(run));
  std::fflush(stdout);
  return true;
}

// In place on a machine that cannot be traced (not root, no tracefs): every
// selected test skipped with the reason, as `tracebed test --local` reports
// it. gtest 1.12 counts a skip in Environment::SetUp as a pass, so the tests
// are not run: gtest only lists them, which applies the filter and shards.
matrix::KernelRun skip_all(const std::string& problem) {
  GTEST_FLAG_SET(list_tests, true);
  if (RUN_ALL_TESTS() != 0) fmt::print(stderr, "tracebed: listing the tests failed\n");
  matrix::KernelRun run;
  run.kernel = "local";
  const auto* unit = ::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit->total_test_suite_count(); ++i) {
    const auto* suite = unit->GetTestSuite(i);
    for (int j = 0; j < suite->total_test_count(); ++j) {
      const auto* info = suite->GetTestInfo(j);
      if (!info->should_run()) continue;
      matrix::TestResult& t = run.tests.emplace_back();
      t.suite = suite->name();
      t.name = info->name();
      t.state = matrix::State::skip;
      t.message = problem;
      fmt::print(stderr, "[  SKIPPED ] {}.{}: {}\n", suite->name(), info->name(), problem);
    }
  }
  return run;
}

}  // namespace

int main(int argc, char** argv) {
#if TRACEBED_AGENT_EMBEDDED
  // The local launcher starts $TRACEBED_AGENT --local: here, this binary, so
  // that one file is all a device needs.
  constexpr char kSelf[] = "/proc/self/exe";
  const char* agent = std::getenv("TRACEBED_AGENT");
  if (agent && std::strcmp(agent, kSelf) == 0 && argc == 2 && std::strcmp(argv[1], "--local") == 0)
    return tracebed::agent::embedded_agent_main(argc, argv);
  setenv("TRACEBED_AGENT", kSelf, 0);
#endif
  std::vector<char*> args(argv, argv + argc);
  static char kLocalKernel[] = "--tracebed_kernel=local", kLocalLauncher[] = "--tracebed_launcher=local";
  bool ktap = false, local = false;
  if (const char* l = std::getenv("TRACEBED_LAUNCHER"); l && std::string_view(l) == "local") local = true;
  for (auto it = args.begin() + 1; it != args.end();) {
    std::string_view a = *it;
    if (a == "--tracebed_ktap") {
      ktap = true;
      it = args.erase(it);
    } else if (a == "--tracebed_local") {
      local = true;
      *it = kLocalKernel;
      it = args.insert(it + 1, kLocalLauncher) + 1;
    } else {
      local = local || a == kLocalLauncher;
      ++it;
    }
  }
  // gtest reads --gtest_output in InitGoogleTest: KTAP's XML goes in first.
  std::string xml, xml_flag;
  if (ktap) {
    xml = (std::filesystem::temp_directory_path() / "tracebed-ktap-XXXXXX").string();
    int fd = mkstemp(xml.data());
    if (fd < 0) {
      fmt::print(stderr, "tracebed: --tracebed_ktap: cannot create {}: {}\n", xml, std::strerror(errno));
      return 1;
    }
    close(fd);
    xml_flag = "--gtest_output=xml:" + xml;
    args.push_back(xml_flag.data());
  }
  args.push_back(nullptr);
  int n = static_cast<int>(args.size()) - 1;
  ::testing::InitGoogleTest(&n, args.data());
  tracebed::testlib::init(&n, args.data());
  tracebed::testlib::run_kernel_test_registrars();
  const std::string problem = local ? tracebed::vm::local_tracing_problem() : "";
  if (!ktap && problem.empty()) return RUN_ALL_TESTS();

  std::fflush(stdout);
  int out = dup(STDOUT_FILENO);
  dup2(STDERR_FILENO, STDOUT_FILENO);
  if (!problem.empty()) {
    auto run = skip_all(problem);
    std::fflush(stdout);
    dup2(out, STDOUT_FILENO);
    close(out);
    if (ktap) fmt::print("{}", matrix::write_ktap(run));
    if (!xml.empty()) std::remove(xml.c_str());
    return 0;
  }
  int status = RUN_ALL_TESTS();
  std::fflush(stdout);
  dup2(out, STDOUT_FILENO);
  close(out);
  bool printed = print_ktap(xml);
  std::remove(xml.c_str());
  return printed ? status : 1;
}
