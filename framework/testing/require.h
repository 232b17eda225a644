// TRACEBED_REQUIRE(feature): skip the current GoogleTest case, with the
// reason, when the kernel under test lacks a feature.
//
//   TEST_F(Triggers, SnapshotOnMatch) {
//     TRACEBED_REQUIRE(features::snapshot);
//     ...
//   }
//   -> [  SKIPPED ] needs snapshot: no "snapshot" in tracefs
//
// The features are those set with set_current_features() (the test
// fixture does this for each test, from its guest's kernel);
// TRACEBED_REQUIRE_ON names them.
// Asking with none set is a harness bug, so it fails instead of skipping;
// so does a probe that could not read the guest (Features::check).
#pragma once

#include <gtest/gtest.h>

#include "framework/tracefs/features.h"

namespace tracebed::testlib {

// The features of the kernel the current test runs on (nullptr: none).
// A process-wide pointer, the test library's alone: the control layer
// (tracefs/) keeps no current kernel.
void set_current_features(const tracefs::Features* f);
const tracefs::Features* current_features();

}  // namespace tracebed::testlib

#define TRACEBED_REQUIRE_ON(features_ptr, feature)                                                   \
  do {                                                                                              \
    const ::tracebed::tracefs::Features* tracebed_features_ = (features_ptr);                       \
    if (!tracebed_features_)                                                                        \
      GTEST_FAIL() << "TRACEBED_REQUIRE(" #feature "): no tracefs features probed for this test";   \
    auto tracebed_check_ = tracebed_features_->check(feature);                                       \
    if (!tracebed_check_) GTEST_FAIL() << "TRACEBED_REQUIRE(" #feature "): " << tracebed_check_.error().message; \
    if (*tracebed_check_) GTEST_SKIP() << **tracebed_check_;                                         \
  } while (0)

#define TRACEBED_REQUIRE(feature) TRACEBED_REQUIRE_ON(::tracebed::testlib::current_features(), feature)
