// `trace-cmd report`'s other views of a trace.dat: the options that print
// something else than the events (-E, --first-event, --last-event).
#pragma once

#include <cstdio>
#include <string>

#include "framework/base/result.h"

namespace tracebed::decode {

class TraceDat;

// -E: every event format stored, "system:name" a line, ordered by system
// then name as libtraceevent's TEP_EVENT_SORT_SYSTEM orders them.
Status write_event_list(TraceDat& file, std::FILE* out);

// --first-event / --last-event: per CPU of the top-level buffer that holds
// data, the time stamp of its first and/or last record. `shown_path` is the
// file's name as the user gave it (trace-cmd prints it).
Status write_first_last_events(TraceDat& file, const std::string& shown_path, bool first, bool last,
                               std::FILE* out);

}  // namespace tracebed::decode
