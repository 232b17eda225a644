// The shared main of every guest suite: flags, one guest, then the tests.
#include <gtest/gtest.h>

#include "framework/testing/guest_environment.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  tracebed::testing::init(&argc, argv);
  return RUN_ALL_TESTS();
}
