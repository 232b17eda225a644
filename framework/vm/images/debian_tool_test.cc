#include "framework/vm/images/debian_tool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::vm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(VersionSeries, ReadsKernelReleasesAndPackageVersions) {
  EXPECT_EQ(version_series("5.10.0-32-cloud-amd64"), std::pair(5, 10));
  EXPECT_EQ(version_series("6.12.107+deb13-cloud-amd64"), std::pair(6, 12));
  EXPECT_EQ(version_series("7.3-amd64"), std::pair(7, 3));
  EXPECT_EQ(version_series("7.2.13"), std::pair(7, 2));
  EXPECT_EQ(version_series("7.3~rc7-1~exp1"), std::pair(7, 3));
  EXPECT_EQ(version_series("1:2.3-1"), std::pair(2, 3));
  EXPECT_EQ(version_series("vmlinuz"), std::nullopt);
  EXPECT_EQ(version_series("7"), std::nullopt);
  EXPECT_EQ(version_series("99999999.1"), std::nullopt);
}

// Expected orders as `dpkg --compare-versions` gives them.
TEST(DebianVersions, FollowDpkgOrder) {
  EXPECT_LT(compare_debian_versions("6.1.176-1", "6.1.192-2"), 0);
  EXPECT_LT(compare_debian_versions("7.3~rc7-1~exp1", "7.3-1"), 0);
  EXPECT_LT(compare_debian_versions("7.3~rc6-1~exp1", "7.3~rc7-1~exp1"), 0);
  EXPECT_GT(compare_debian_versions("6.12.117-1", "6.12.9-1"), 0);
  EXPECT_GT(compare_debian_versions("1:1.0-1", "9.9-1"), 0);
  EXPECT_LT(compare_debian_versions("2.41-12", "2.41-12+deb13u1"), 0);
  EXPECT_LT(compare_debian_versions("1.0a", "1.0+"), 0);  // letters before other characters
  EXPECT_EQ(compare_debian_versions("6.12.117-1", "6.12.117-1"), 0);
  EXPECT_EQ(compare_debian_versions("1.01-1", "1.1-1"), 0);
}

std::vector<AptCandidate> perf_rows() {
  return {{"linux-perf", "7.3~rc7-1~exp1", "experimental"}, {"linux-perf", "7.2.13-1", "sid"},
          {"linux-perf", "6.12.117-1", "trixie"},         {"linux-perf", "6.1.192-2", "bookworm-security"},
          {"linux-perf", "6.1.176-1", "bookworm"},        {"linux-perf", "5.10.223-1", "bullseye"}};
}

TEST(ChooseForKernel, TakesTheKernelsSeriesAtItsHighestVersion) {
  auto pick = [](std::string_view release) {
    auto c = choose_for_kernel(perf_rows(), release);
    EXPECT_TRUE(c.ok()) << release << ": " << c.error().message;
    return c ? c->version + " " + c->suite : std::string();
  };
  EXPECT_EQ(pick("5.10.0-32-cloud-amd64"), "5.10.223-1 bullseye");
  EXPECT_EQ(pick("6.1.0-56-cloud-amd64"), "6.1.192-2 bookworm-security");
  EXPECT_EQ(pick("6.12.107+deb13-cloud-amd64"), "6.12.117-1 trixie");
  EXPECT_EQ(pick("7.2.13+deb14-rt-amd64"), "7.2.13-1 sid");
  EXPECT_EQ(pick("7.2.13"), "7.2.13-1 sid");
  EXPECT_EQ(pick("7.3-amd64"), "7.3~rc7-1~exp1 experimental");
}

TEST(ChooseForKernel, WithoutTheSeriesTakesTheNextNewerElseTheNewest) {
  auto rows = perf_rows();
  EXPECT_EQ(choose_for_kernel(rows, "6.6.30-amd64")->version, "6.12.117-1");
  EXPECT_EQ(choose_for_kernel(rows, "4.19.0-27-amd64")->version, "5.10.223-1");
  EXPECT_EQ(choose_for_kernel(rows, "7.5.0")->version, "7.3~rc7-1~exp1");
}

TEST(ChooseForKernel, SaysWhyNothingFits) {
  auto c = choose_for_kernel(perf_rows(), "bzImage");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("'bzImage' does not start with MAJOR.MINOR"));
  c = choose_for_kernel({}, "6.12.0");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("no candidate"));
}

std::vector<AptCandidate> bpftrace_rows() {
  return {{"bpftrace", "0.27.1-1", "sid"},
          {"bpftrace", "0.23.2-1", "trixie"},
          {"bpftrace", "0.17.0-1", "bookworm"},
          {"bpftrace", "0.11.3-5+deb11u1", "bullseye"}};
}

std::vector<AptCandidate> libc_dev_rows() {
  auto rows = perf_rows();
  for (auto& r : rows) r.package = "linux-libc-dev";
  return rows;
}

// bpftrace's versions are its own: the one of the release that ships the
// kernel, as a user of that release has it.
TEST(ChooseFromKernelsRelease, TakesTheReleaseThatShipsTheKernel) {
  auto pick = [](std::string_view release) {
    auto c = choose_from_kernels_release(bpftrace_rows(), libc_dev_rows(), release);
    EXPECT_TRUE(c.ok()) << release << ": " << c.error().message;
    return c ? c->version + " " + c->suite : std::string();
  };
  EXPECT_EQ(pick("5.10.0-32-cloud-amd64"), "0.11.3-5+deb11u1 bullseye");
  EXPECT_EQ(pick("6.1.0-56-cloud-amd64"), "0.17.0-1 bookworm");  // linux-libc-dev from bookworm-security
  EXPECT_EQ(pick("6.12.107+deb13-cloud-amd64"), "0.23.2-1 trixie");
  EXPECT_EQ(pick("7.2.13+deb14-rt-amd64"), "0.27.1-1 sid");
  // experimental has no bpftrace: the newest.
  EXPECT_EQ(pick("7.3-amd64"), "0.27.1-1 sid");
}

// A package of kernel versions keeps choose_for_kernel's rule.
TEST(ChooseFromKernelsRelease, KernelVersionedPackagesByTheirSeries) {
  auto perf = choose_from_kernels_release(perf_rows(), libc_dev_rows(), "6.1.0-56-cloud-amd64");
  ASSERT_TRUE(perf.ok()) << perf.error().message;
  EXPECT_EQ(perf->version, "6.1.192-2");
  perf = choose_from_kernels_release(perf_rows(), libc_dev_rows(), "6.6.30-amd64");
  ASSERT_TRUE(perf.ok()) << perf.error().message;
  EXPECT_EQ(perf->version, "6.12.117-1");
}

TEST(DebianToolLayout, RunsThroughItsOwnLoaderInItsOwnDirectory) {
  DebianTool t;
  t.package = "linux-perf";
  t.package_version = "7.3~rc7-1~exp1";
  t.suite = "experimental";
  t.root = "/cache/tools/linux-perf_7.3~rc7-1~exp1";
  t.binary = t.root / "pkgs/linux-perf/usr/bin/perf";
  t.interpreter = "ld-linux-x86-64.so.2";
  t.libraries = {{"ld-linux-x86-64.so.2", t.root / "pkgs/libc6/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"},
                 {"libc.so.6", t.root / "pkgs/libc6/usr/lib/x86_64-linux-gnu/libc.so.6"}};
  EXPECT_EQ(t.describe(), "linux-perf 7.3~rc7-1~exp1 (experimental)");
  EXPECT_EQ(t.guest_root(), "/opt/perf-7.3_rc7-1_exp1");
  EXPECT_THAT(guest_command(t), ElementsAre("/opt/perf-7.3_rc7-1_exp1/lib/ld-linux-x86-64.so.2", "--library-path",
                                            "/opt/perf-7.3_rc7-1_exp1/lib", "/opt/perf-7.3_rc7-1_exp1/bin/perf"));
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& p : guest_payloads(t)) files.emplace_back(p.host.filename().string(), p.guest);
  EXPECT_THAT(files, ElementsAre(Pair("perf", "/opt/perf-7.3_rc7-1_exp1/bin/perf"),
                                 Pair("ld-linux-x86-64.so.2", "/opt/perf-7.3_rc7-1_exp1/lib/ld-linux-x86-64.so.2"),
                                 Pair("libc.so.6", "/opt/perf-7.3_rc7-1_exp1/lib/libc.so.6")));
  // bullseye's binary is perf_5.10: the directory is still perf-VERSION.
  t.binary = t.root / "pkgs/linux-perf-5.10/usr/bin/perf_5.10";
  t.package_version = "5.10.223-1";
  EXPECT_EQ(t.guest_root(), "/opt/perf-5.10.223-1");
  EXPECT_EQ(guest_command(t).back(), "/opt/perf-5.10.223-1/bin/perf_5.10");
}

TEST(DebianToolStart, AStatusTheProgramChoseIsAStartTheLoadersOrACrashIsNot) {
  EXPECT_TRUE(started_through_loader(0));
  EXPECT_TRUE(started_through_loader(2));  // dash --version: "Illegal option --"
  EXPECT_FALSE(started_through_loader(127));      // ld.so: a library not found
  EXPECT_FALSE(started_through_loader(128 + 11));  // SIGSEGV
  EXPECT_FALSE(started_through_loader(-1));
}

}  // namespace
}  // namespace tracebed::vm
