#include "framework/matrix/summary.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::matrix {
namespace {

using ::testing::HasSubstr;

Matrix sample() {
  Matrix m;
  m.filter = "Smoke*";
  KernelRun k;
  k.kernel = "debian-6.12";
  k.release = "6.12.107+deb13-cloud-amd64";
  k.accelerator = "tcg";
  k.wall_seconds = 83.25;
  k.stamp = "abc";
  k.tests = {{"Smoke", "Boots", State::pass, "", "", "", 20, {}, {}},
             {"Smoke", "Fprobe", State::skip, "needs fprobe", "s.cc:1", "", 0, {}, {}},
             {"x", "(suite)", State::fail, "died", "", "panic", 0, {}, {}}};
  m.kernels.push_back(k);
  return m;
}

TEST(Summary, RoundTrips) {
  auto back = read_summary(write_summary(sample()), "summary.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->kernels.size(), 1u);
  const auto& k = back->kernels[0];
  EXPECT_EQ(back->filter, "Smoke*");
  EXPECT_EQ(k.release, "6.12.107+deb13-cloud-amd64");
  EXPECT_DOUBLE_EQ(k.wall_seconds, 83.25);
  ASSERT_EQ(k.tests.size(), 3u);
  EXPECT_EQ(k.tests[1].state, State::skip);
  EXPECT_EQ(k.tests[1].message, "needs fprobe");
  EXPECT_EQ(k.tests[2].console, "panic");
}

TEST(Summary, KernelRecordRoundTrips) {
  auto back = read_kernel_run(write_kernel_run(sample().kernels[0]), "runs/debian-6.12.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->stamp, "abc");
  EXPECT_EQ(back->count(State::fail), 1);
}

TEST(Summary, UnresolvedRoundTripsAndIsCountedOnlyWhenThere) {
  Matrix m = sample();
  EXPECT_THAT(write_summary(m), ::testing::Not(HasSubstr("unresolved")));
  m.kernels[0].tests[1].state = State::unresolved;
  std::string json = write_summary(m);
  EXPECT_THAT(json, HasSubstr("\"unresolved\": 1"));
  auto back = read_summary(json, "summary.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kernels[0].tests[1].state, State::unresolved);
}

TEST(Summary, BadInputsNameTheFile) {
  auto a = read_summary("{\"format\": \"tracebed-matrix 1\", \"kernels\": [", "old/summary.json");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "old/summary.json: not valid JSON");
  auto b = read_summary("{\"kernels\": []}", "b.json");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.error().message, HasSubstr("b.json: not a tracebed matrix file"));
  auto c = read_summary(
      R"({"format": "tracebed-matrix 1", "kernels": [{"kernel": "k", "tests": [{"suite": "S", "name": "T", "state": "maybe"}]}]})",
      "c.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "c.json: kernel k test 0: unknown state \"maybe\"");
  auto d = read_summary(R"({"format": "tracebed-matrix 1", "kernels": [{"tests": []}]})", "d.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message, "d.json: missing \"kernel\"");
}

TEST(Summary, MissingDirectoryOrFile) {
  auto a = load_summary("/nonexistent/matrix-run");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message, "/nonexistent/matrix-run: no such directory");
  auto b = load_summary(TRACEBED_SOURCE_DIR "/framework/matrix");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.error().message, HasSubstr("framework/matrix/summary.json: missing"));
}

}  // namespace
}  // namespace tracebed::matrix
