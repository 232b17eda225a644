// `trace-cmd report`'s other views of a trace.dat: the options that print
// something else than the events (-E).
#pragma once

#include <cstdio>
#include <string>

#include "framework/base/result.h"

namespace tracebed {

class TraceDat;

// -E: every event format stored, "system:name" a line, ordered by system
// then name as libtraceevent's TEP_EVENT_SORT_SYSTEM orders them.
Status write_event_list(TraceDat& file, std::FILE* out);

}  // namespace tracebed
