// `tracebed matrix` as a user runs it, without guests: bad input and --compare.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "framework/cli/run_tracebed_for_tests.h"

namespace {

namespace fs = std::filesystem;

using tracebed::cli::test::CliRun;

class MatrixCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tracebed-matrix-cli-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CliRun run(const std::string& args) { return tracebed::cli::test::run_tracebed("matrix " + args); }
  void summary(const std::string& name, const std::string& state) {
    fs::create_directories(dir_ / name);
    std::ofstream(dir_ / name / "summary.json")
        << R"({"format": "tracebed-matrix 1", "kernels": [{"kernel": "debian-6.12", "tests": [)"
        << R"({"suite": "Smoke", "name": "Boots", "state": ")" << state << R"(", "message": "it broke"}]}]})";
  }
  fs::path dir_;
};

TEST_F(MatrixCommand, UnknownKernelIsNamed) {
  CliRun r = run("--kernels debian-6.12,no-such-kernel --out " + (dir_ / "mx").string());
  EXPECT_EQ(r.status, 2);  // usage
  EXPECT_NE(r.err.find("tracebed: --kernels: unknown kernel 'no-such-kernel'"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "mx" / "summary.json"));
}

// "Could not compare" is a usage error (2), never 1: 1 means new failures.
TEST_F(MatrixCommand, CompareMissingDirectory) {
  CliRun r = run("--compare " + (dir_ / "nope").string() + " --out " + dir_.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "tracebed: " + (dir_ / "nope").string() + ": no such directory\n");
  fs::create_directories(dir_ / "torn");
  std::ofstream(dir_ / "torn" / "summary.json") << R"({"format": "tracebed-matrix 1", "kernels": [)";
  summary("new", "pass");
  CliRun torn = run("--compare " + (dir_ / "torn").string() + " --out " + (dir_ / "new").string());
  EXPECT_EQ(torn.status, 2) << torn.err;
  EXPECT_EQ(torn.out, "");
}

TEST_F(MatrixCommand, CompareListsANewFailureAndFails) {
  summary("old", "pass");
  summary("new", "fail");
  CliRun r = run("--compare " + (dir_ / "old").string() + " --out " + (dir_ / "new").string());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("new failures (1):\n  debian-6.12    Smoke.Boots"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pass -> fail  it broke"), std::string::npos) << r.out;
  CliRun same = run("--compare " + (dir_ / "new").string() + " --out " + (dir_ / "new").string());
  EXPECT_EQ(same.status, 0);
  EXPECT_NE(same.out.find("no changes"), std::string::npos);
}

}  // namespace
