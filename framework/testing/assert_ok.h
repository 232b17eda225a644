// ASSERT_OK / EXPECT_OK: a Status or Result is ok, or the test fails with
// its error (for the tracefs layer, the kernel's own words from error_log).
//
//   ASSERT_OK(inst().set_tracing_on(false));
//   auto ev = create_enabled(k);
//   ASSERT_OK(ev);
#pragma once

#include <gtest/gtest.h>

#define ASSERT_OK(expr)                                             \
  do {                                                              \
    const auto& tracebed_ok_ = (expr);                              \
    ASSERT_TRUE(tracebed_ok_.ok()) << tracebed_ok_.error().message; \
  } while (0)
#define EXPECT_OK(expr)                                             \
  do {                                                              \
    const auto& tracebed_ok_ = (expr);                              \
    EXPECT_TRUE(tracebed_ok_.ok()) << tracebed_ok_.error().message; \
  } while (0)
