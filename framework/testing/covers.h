// TRACEBED_COVERS: the kernel selftest cases a test covers, written inside
// the test body, one line:
//
//   TEST_F(Kprobe, AutoNamesFollowTheSymbol) {
//     TRACEBED_COVERS("ftracetest: kprobe/kprobe_eventname.tc");
//     ...
//
// The source scan of framework/coverage reads these lines to build
// docs/coverage.md and check that every case of the list is covered or
// excused; at run time the cases go into the test's JUnit properties
// (`covers`), so a result says which selftest it stands for. A test covers
// a case when it asserts everything the case checks, not part of it.
// Case ids: fixtures/selftests/linux-source-7.2.cases.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace tracebed::testlib {

inline void record_covers(std::initializer_list<std::string_view> cases) {
  std::string all;
  for (std::string_view c : cases) {
    if (!all.empty()) all += "; ";
    all += c;
  }
  ::testing::Test::RecordProperty("covers", all);
}

}  // namespace tracebed::testlib

#define TRACEBED_COVERS(...) ::tracebed::testlib::record_covers({__VA_ARGS__})
