#include "framework/testing/require.h"

#include <atomic>

namespace tracebed::testlib {
namespace {

std::atomic<const tracefs::Features*> g_current{nullptr};

}  // namespace

void set_current_features(const tracefs::Features* f) { g_current.store(f); }
const tracefs::Features* current_features() { return g_current.load(); }

}  // namespace tracebed::testlib
