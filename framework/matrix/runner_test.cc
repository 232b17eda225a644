#include "framework/matrix/runner.h"
#include "framework/matrix/report_writers.h"

#include <unistd.h>

#include <cstdlib>
#include <map>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SuiteResults : public base::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    log_ = dir_ / "suite.log";
    ASSERT_TRUE(vm::write_file_atomic(log_, "booting\n[    3.1] BUG: kernel NULL pointer dereference\n").ok());
  }
  std::vector<TestResult> results(int status, bool timed_out, const fs::path& junit) {
    return suite_results("tracebed_suite_x", junit, status, timed_out, std::chrono::seconds(60), log_, &release_,
                         &accel_);
  }
  fs::path log_;
  std::string release_, accel_;
};

TEST_F(SuiteResults, ReadsTheReportAndItsRelease) {
  auto r = results(1, false, fs::path(TRACEBED_SOURCE_DIR) / "framework/matrix/testdata/basics_gtest.xml");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(release_, "6.12.107+deb13-cloud-amd64");
  EXPECT_EQ(accel_, "tcg");
}

TEST_F(SuiteResults, DiedWithoutAReport) {
  auto r = results(134, false, dir_ / "none.xml");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].full_name(), "tracebed_suite_x.(suite)");
  EXPECT_EQ(r[0].state, State::fail);
  EXPECT_THAT(r[0].message, HasSubstr("exited with status 134 without a report"));
  EXPECT_THAT(r[0].console, HasSubstr("BUG: kernel NULL pointer dereference"));
}

TEST_F(SuiteResults, HungSuiteWithItsGuestConsole) {
  fs::path console = dir_ / "suite.console.log";
  ASSERT_TRUE(vm::write_file_atomic(console, "[   40.0] rcu: INFO: rcu_sched self-detected stall on CPU\n").ok());
  auto r = suite_results("tracebed_suite_x", dir_ / "none.xml", 137, true, std::chrono::seconds(60), log_, &release_,
                         &accel_, console);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(r[0].message, HasSubstr("did not finish within 60 s"));
  EXPECT_THAT(r[0].console, HasSubstr("booting"));
  EXPECT_THAT(r[0].console, HasSubstr("--- guest console (suite.console.log) ---\n[   40.0] rcu: INFO"));
}

TEST_F(SuiteResults, CorruptReportNamesTheFile) {
  fs::path junit = dir_ / "bad.xml";
  ASSERT_TRUE(vm::write_file_atomic(junit, "<testsuites><testsuite name='S'>").ok());
  auto r = results(1, false, junit);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_THAT(r[0].message, HasSubstr(junit.string() + ": line 1"));
}

TEST_F(SuiteResults, NothingSelectedIsNothing) { EXPECT_TRUE(results(0, false, dir_ / "none.xml").empty()); }

TEST_F(SuiteResults, NonZeroExitDespiteAPassingReport) {
  fs::path junit = dir_ / "ok.xml";
  ASSERT_TRUE(vm::write_file_atomic(junit, "<testsuite name='S'><testcase name='T'/></testsuite>").ok());
  auto r = results(139, false, junit);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].state, State::fail);
  EXPECT_THAT(r[1].message, HasSubstr("status 139 although its report has no failure"));
}

// Flags for one kernel (its libvirt URI when the kernels are spread over
// several hypervisors) reach that kernel's suites and no other's.
TEST(RunMatrix, PerKernelFlagsGoToThatKernelsSuites) {
  fs::path dir = fs::temp_directory_path() / fmt::format("tracebed-matrix-run-{}", getpid());
  fs::create_directories(dir);
  fs::path suite = dir / "tracebed_suite_fake";
  ASSERT_TRUE(vm::write_file_atomic(suite, "#!/bin/sh\necho \"$@\" >> " + (dir / "argv.txt").string() +
                                               "\n[ \"$1\" = --gtest_list_tests ] && printf 'Fake.\\n  One\\n'\n")
                  .ok());
  setenv("TRACEBED_CACHE", (dir / "cache").c_str(), 1);  // the suites' timings
  fs::permissions(suite, fs::perms::owner_all);
  RunOptions o;
  o.kernels = {{"k1", "id1", "", {"--tracebed_libvirt_uri=qemu+ssh://a/system"}},
               {"k2", "id2", "", {"--tracebed_libvirt_uri=qemu+ssh://b/system"}}};
  o.suites = {suite};
  o.suite_args = {"--tracebed_launcher=libvirt"};
  o.out = dir / "out";
  std::vector<std::string> booted;
  o.boot_check = [&](const std::string& kernel, const std::vector<std::string>& args) -> Result<Booted> {
    booted.push_back(kernel + " " + args.back());
    return Booted{};
  };
  ASSERT_TRUE(run_matrix(o).ok());
  // Each kernel booted once first, with its own flags.
  EXPECT_THAT(booted, testing::ElementsAre("k1 --tracebed_libvirt_uri=qemu+ssh://a/system",
                                           "k2 --tracebed_libvirt_uri=qemu+ssh://b/system"));
  auto argv = base::read_file(dir / "argv.txt");
  ASSERT_TRUE(argv.ok());
  std::map<std::string, std::string> by_kernel;  // one line per suite run
  std::istringstream lines(*argv);
  for (std::string line; std::getline(lines, line);) by_kernel[line.substr(0, line.find(' '))] = line;
  EXPECT_THAT(by_kernel["--tracebed_kernel=k1"],
              HasSubstr("--tracebed_launcher=libvirt --tracebed_libvirt_uri=qemu+ssh://a/system"));
  EXPECT_THAT(by_kernel["--tracebed_kernel=k2"],
              HasSubstr("--tracebed_launcher=libvirt --tracebed_libvirt_uri=qemu+ssh://b/system"));
  EXPECT_THAT(by_kernel["--tracebed_kernel=k1"], testing::Not(HasSubstr("b/system")));
  unsetenv("TRACEBED_CACHE");
  fs::remove_all(dir);
}

// A kernel the boot check refuses is its column's one result; the other
// kernel's suites run.
TEST(RunMatrix, AKernelThatDoesNotBootIsReportedAndTheOthersRun) {
  fs::path dir = fs::temp_directory_path() / fmt::format("tracebed-matrix-noboot-{}", getpid());
  fs::create_directories(dir);
  fs::path suite = dir / "tracebed_suite_fake";
  ASSERT_TRUE(vm::write_file_atomic(suite, "#!/bin/sh\necho \"$@\" >> " + (dir / "argv.txt").string() +
                                               "\n[ \"$1\" = --gtest_list_tests ] && printf 'Fake.\\n  One\\n'\n")
                  .ok());
  fs::permissions(suite, fs::perms::owner_all);
  setenv("TRACEBED_CACHE", (dir / "cache").c_str(), 1);
  RunOptions o;
  o.kernels = {{"good", "id1", "", {}}, {"bad", "id2", "", {}}};
  o.suites = {suite};
  o.out = dir / "out";
  o.boot_check = [](const std::string& kernel, const std::vector<std::string>&) -> Result<Booted> {
    if (kernel == "bad") return Error{"guest did not reach the agent within 90 s"};
    return Booted{};
  };
  auto m = run_matrix(o);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->kernels.size(), 2u);
  EXPECT_FALSE(m->kernels[0].did_not_boot());
  EXPECT_TRUE(m->kernels[1].did_not_boot());
  EXPECT_EQ(verdict(m->kernels[1].tests), Verdict::not_tested);
  auto argv = base::read_file(dir / "argv.txt");
  ASSERT_TRUE(argv.ok());
  EXPECT_THAT(*argv, HasSubstr("--tracebed_kernel=good"));
  EXPECT_THAT(*argv, testing::Not(HasSubstr("--tracebed_kernel=bad")));
  std::string md = write_markdown(*m);
  EXPECT_THAT(md, HasSubstr("| bad | did not boot |"));
  unsetenv("TRACEBED_CACHE");
  fs::remove_all(dir);
}

TEST(LogTail, LastLines) {
  EXPECT_EQ(log_tail("a\nb\nc\nd\n", 2), "c\nd");
  EXPECT_EQ(log_tail("one line", 5), "one line");
  EXPECT_EQ(log_tail("", 5), "");
  EXPECT_EQ(log_tail(std::string(10000, 'x'), 5).size(), 6u * 1024);
}

TEST(Stamp, DependsOnSuitesKernelAndFilter) {
  KernelJob a{"debian-6.12", "linux-image=1 sha", "6.12", {}};
  KernelJob b{"debian-6.12", "linux-image=2 sha", "6.12", {}};
  std::chrono::seconds t(3600);
  std::string base = stamp_for(a, "h1", "", "", t);
  EXPECT_EQ(base, stamp_for(a, "h1", "", "", t));
  EXPECT_NE(base, stamp_for(b, "h1", "", "", t));
  EXPECT_NE(base, stamp_for(a, "h2", "", "", t));
  EXPECT_NE(base, stamp_for(a, "h1", "Smoke*", "", t));
  EXPECT_NE(base, stamp_for(a, "h1", "", "kvm", t));
  EXPECT_NE(base, stamp_for(a, "h1", "", "", std::chrono::seconds(15)));
}

TEST(FileName, SafeForPaths) {
  EXPECT_EQ(file_name_for("debian-6.12"), "debian-6.12");
  EXPECT_EQ(file_name_for("/boot/vmlinuz-6.1,/lib/modules"), "_boot_vmlinuz-6.1__lib_modules");
  EXPECT_EQ(file_name_for(".."), "k..");
}

}  // namespace
}  // namespace tracebed::matrix
