// The KTAP `tracebed test --ktap` and `tracebed matrix` print, read back by
// the kernel's own parser (tools/testing/kunit/kunit_parser.py, as kunit.py
// reads a KUnit run): every suite and case must come out with the state it
// went in with, and the parser must report no error. The parser comes from
// Debian's linux-source package the kernel build fetches into the cache
// (extracted once into the build tree); without it, or without python3,
// the test is skipped and says why.
#include "framework/matrix/report_writers.h"

#include <gtest/gtest.h>

#include "framework/matrix/results_for_tests.h"
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <variant>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;

// Only a parser that reads KTAP will do: 5.10's kunit_parser.py predates it
// and reads nothing we print.
bool has_parser(const fs::path& dir) {
  const auto text = base::read_file(dir / "kunit_parser.py");
  return text.ok() && text->find("KTAP version") != std::string::npos;
}

// tools/testing/kunit of a linux-source tree under `root` (root/*/ or
// root/*/*/), if there is one.
std::optional<fs::path> kunit_under(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return std::nullopt;
  for (const auto& a : fs::directory_iterator(root, ec)) {
    if (has_parser(a.path() / "tools/testing/kunit")) return a.path() / "tools/testing/kunit";
    if (!a.is_directory(ec)) continue;
    for (const auto& b : fs::directory_iterator(a.path(), ec))
      if (has_parser(b.path() / "tools/testing/kunit")) return b.path() / "tools/testing/kunit";
  }
  return std::nullopt;
}

// The linux-source .debs in the cache and apt's, newest version first.
std::vector<fs::path> source_debs() {
  std::vector<fs::path> debs;
  for (const fs::path& dir : {vm::cache_dir() / "debs", fs::path("/var/cache/apt/archives")}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.starts_with("linux-source-") && name.ends_with(".deb")) debs.push_back(e.path());
    }
  }
  std::sort(debs.begin(), debs.end(), [](const fs::path& a, const fs::path& b) {
    return strverscmp(a.filename().c_str(), b.filename().c_str()) > 0;
  });
  return debs;
}

// Where kunit_parser.py is, or why it is not to be had.
std::variant<fs::path, std::string> find_kunit() {
  if (const char* dir = std::getenv("TRACEBED_KUNIT_DIR"); dir && has_parser(dir)) return fs::path(dir);
  const fs::path extracted = fs::path(TRACEBED_BINARY_DIR) / "kunit-parser";
  if (auto k = kunit_under(extracted)) return *k;
  if (auto k = kunit_under(vm::cache_dir() / "kernels")) return *k;  // a `tracebed kernels build` tree
  const auto debs = source_debs();
  if (debs.empty()) return std::string("no linux-source .deb in the cache or apt's (tracebed kernels build fetches one)");
  std::error_code ec;
  fs::remove_all(extracted, ec);  // one that predates KTAP, from an older run
  std::string why;
  for (const auto& deb : debs) {
    // Only tools/testing/kunit of the source tarball inside the package.
    const fs::path tmp = extracted.string() + ".tmp-" + std::to_string(getpid());
    fs::create_directories(tmp);
    const std::string script = fmt::format(
        "dpkg-deb --fsys-tarfile '{}' | tar -xO --wildcards '*linux-source-*.tar.*' | "
        "tar -xJ -C '{}' --wildcards '*/tools/testing/kunit/*'",
        deb.string(), tmp.string());
    auto run = base::run_process({"sh", "-c", script}, std::chrono::seconds(600));
    if (!run.ok() || run->status != 0) {
      fs::remove_all(tmp, ec);
      why += fmt::format("; extracting tools/testing/kunit from {} failed: {}", deb.string(),
                         run.ok() ? run->output : run.error().message);
      continue;
    }
    if (!kunit_under(tmp)) {
      fs::remove_all(tmp, ec);
      why += fmt::format("; {} has no kunit_parser.py that reads KTAP", deb.string());
      continue;
    }
    fs::rename(tmp, extracted, ec);  // another run may have been first
    fs::remove_all(tmp, ec);
    if (auto k = kunit_under(extracted)) return *k;
  }
  return why.substr(2);
}

// What kunit_parser made of `ktap` (ktap_kunit_check.py's lines).
std::string parse_with_kunit(const fs::path& kunit, const std::string& ktap) {
  const fs::path file = fs::temp_directory_path() / fmt::format("tracebed-ktap-{}.ktap", getpid());
  EXPECT_TRUE(base::write_file_atomic(file, ktap).ok());
  auto run = base::run_process(
      {"python3", std::string(TRACEBED_SOURCE_DIR) + "/framework/matrix/ktap_kunit_check.py", kunit.string(),
       file.string()},
      std::chrono::seconds(60), base::Output::capture_stdout);
  fs::remove(file);
  EXPECT_TRUE(run.ok() && run->status == 0) << (run.ok() ? run->output : run.error().message);
  return run.ok() ? run->output : std::string();
}

// The same, written from the run itself: kunit's names for the states. An
// unresolved case is "not ok" with a directive kunit does not know: a
// FAILURE to it, which is right for a case that could not be decided.
std::string expected_parse(const KernelRun& run) {
  std::vector<std::string> suites;
  for (const auto& t : run.tests)
    if (std::find(suites.begin(), suites.end(), t.suite) == suites.end()) suites.push_back(t.suite);
  int pass = 0, fail = 0, skip = 0;
  std::string cases;
  for (const auto& suite : suites) {
    int spass = 0, sfail = 0;
    std::string lines;
    for (const auto& t : run.tests) {
      if (t.suite != suite) continue;
      const char* state = t.state == State::pass ? "SUCCESS" : t.state == State::skip ? "SKIPPED" : "FAILURE";
      const std::string reason = t.state == State::skip ? " " + t.summary() : "";
      lines += fmt::format("case {} {} {}{}\n", suite, t.name, state, reason);
      (t.state == State::pass ? spass : t.state == State::skip ? skip : sfail)++;
    }
    pass += spass;
    fail += sfail;
    cases += fmt::format("suite {} {}\n", suite, sfail ? "FAILURE" : spass ? "SUCCESS" : "SKIPPED") + lines;
  }
  const char* status = fail ? "FAILURE" : pass ? "SUCCESS" : "SKIPPED";
  return fmt::format("status {}\ncounts {} {} 0 {} 0\n", status, pass, fail, skip) + cases;
}

TEST(KtapKunitParser, ReadsBackEveryCaseAsItWent) {
  if (!base::find_program("python3").ok()) GTEST_SKIP() << "needs python3 to run the kernel's kunit_parser.py";
  const auto kunit = find_kunit();
  if (const auto* why = std::get_if<std::string>(&kunit)) GTEST_SKIP() << "needs kunit_parser.py: " << *why;
  const fs::path& dir = std::get<fs::path>(kunit);

  KernelRun passing;
  passing.kernel = "debian-6.12";
  passing.release = "6.12.107+deb13-cloud-amd64";
  passing.tests = {result("Basics", "Mounted", State::pass), result("Basics", "Clocks", State::pass),
                   result("Hist", "Keys", State::pass)};

  KernelRun mixed;
  mixed.kernel = "debian-5.10";
  TestResult failed = result("Basics", "Mounted", State::fail, "Value of: x\n  Actual: false");
  failed.location = "b.cc:7";
  TestResult died = result("tracebed_suite_hist", "(suite)", State::fail, "exited with status 137");
  died.console = "[   12.3] Kernel panic - not syncing";
  mixed.tests = {failed, result("Basics", "Timerlat", State::skip, "needs timerlat: no timerlat tracer"), died,
                 result("Fprobe", "Entry", State::skip, "needs fprobe"), result("Kprobe", "Args", State::pass),
                 result("Ftracetest", "ftrace/func-filter-pid.tc", State::unresolved,
                        "ftracetest UNRESOLVED on the top level: no poll, skip it"),
                 result("Ftracetest", "kprobe/profile.tc", State::pass)};

  for (const KernelRun* run : {&passing, &mixed}) {
    SCOPED_TRACE(run->kernel);
    EXPECT_EQ(parse_with_kunit(dir, write_ktap(*run)), expected_parse(*run));
  }
}

// The parser must be able to say no: KTAP whose plan promises a case that
// never comes is reported with an error, and a broken result line too.
TEST(KtapKunitParser, ComplainsAboutBrokenKtap) {
  if (!base::find_program("python3").ok()) GTEST_SKIP() << "needs python3 to run the kernel's kunit_parser.py";
  const auto kunit = find_kunit();
  if (const auto* why = std::get_if<std::string>(&kunit)) GTEST_SKIP() << "needs kunit_parser.py: " << *why;
  KernelRun run;
  run.kernel = "k";
  run.tests = {result("Basics", "Mounted", State::pass)};
  std::string ktap = write_ktap(run);
  ktap.replace(ktap.find("    1..1\n"), 9, "    1..2\n");
  const std::string parsed = parse_with_kunit(std::get<fs::path>(kunit), ktap);
  EXPECT_EQ(parsed.find("counts 1 0 0 0 0"), std::string::npos) << parsed;
}

}  // namespace
}  // namespace tracebed::matrix
