// A kernel bug a test found, known on kernels older than some release.
//
// The test keeps running on every kernel. On a kernel older than `gone_in`,
// a failure whose text holds one of the bug's signs is reported as a skip that
// names the bug (ftracetest's XFAIL), so that a run there stays a signal
// about everything else; any other failure still fails, and from `gone_in`
// on the same sign fails as it always did. docs/reliability.md lists them.
//
//   const KnownKernelBug kOops{"removing an instance ... oopses", {"__ftrace_event_enable_disable"},
//                              {6, 12}, "not seen from 6.12 on"};
//   auto r = guest().sh(script);
//   if (!r) TRACEBED_SKIP_IF_KNOWN_BUG(kOops, r.error().message);
//   ASSERT_OK(r);
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/testing/require.h"
#include "framework/tracefs/features.h"

namespace tracebed::testlib {

struct KnownKernelBug {
  std::string_view summary;  // what the kernel does wrong, and where
  // Texts of the failure that show it (any one): a bug may show as an
  // oops in one run and a WARNING in another.
  std::vector<std::string_view> signs;
  std::pair<int, int> gone_in;
  std::string_view why_gone;  // the upstream fix, or where it stops showing

  // The skip message when `failure` shows this bug on this kernel.
  std::optional<std::string> explains(const tracefs::Features& kernel, std::string_view failure) const;
};

}  // namespace tracebed::testlib

// Skips the test (from its body, not from a helper) naming `bug` when
// `failure` shows it on the kernel under test; the JUnit property
// known_kernel_bug carries the summary.
// The kernel is the one set with set_current_features(), which needs no
// live guest: the bug may have just killed it.
#define TRACEBED_SKIP_IF_KNOWN_BUG(bug, failure)                                                        \
  do {                                                                                                  \
    const ::tracebed::tracefs::Features* tracebed_kernel_ = ::tracebed::testlib::current_features();    \
    if (auto tracebed_known_ = tracebed_kernel_ ? (bug).explains(*tracebed_kernel_, (failure)) : std::nullopt) { \
      ::testing::Test::RecordProperty("known_kernel_bug", std::string((bug).summary));                 \
      GTEST_SKIP() << *tracebed_known_;                                                                 \
    }                                                                                                   \
  } while (0)
