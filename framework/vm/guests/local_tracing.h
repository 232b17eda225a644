// Whether this machine's own tracefs can be tested in place (the local
// launcher): `tracebed test --local` and a suite binary run with
// --tracebed_local skip everything with this reason rather than fail.
#pragma once

#include <string>

namespace tracebed::vm {

// Why the suites cannot run on this machine's own tracefs, or "".
std::string local_tracing_problem();

}  // namespace tracebed::vm
