// `trace-cmd report`'s other views of a trace.dat: the options that print
// something else than the events (-E, --events, -f, -P, --stat, --cpus,
// --first-event, --last-event).
#pragma once

#include <cstdio>
#include <string>

#include "framework/base/result.h"

namespace tracebed::decode {

class TraceDat;

// -E: every event format stored, "system:name" a line, ordered by system
// then name as libtraceevent's TEP_EVENT_SORT_SYSTEM orders them.
Status write_event_list(TraceDat& file, std::FILE* out);

// What --cpus prints beside each CPU: --first-event and --last-event (in
// trace-cmd 3.1.6 each of them turns --cpus on), in µs or, with -t, ns.
struct CpuListStamps {
  bool first = false;
  bool last = false;
  bool raw_timestamps = false;  // -t
};

// --cpus: "List of CPUs in FILE with data:", then "  N" for each CPU of the
// top-level buffer that holds a record (instances are not read; a CPU whose
// sub-buffers hold no record is left out), with the time stamps `stamps`
// asks for. `shown_path` is the file's name as the user gave it (trace-cmd
// prints it).
Status write_cpu_list(TraceDat& file, const std::string& shown_path, CpuListStamps stamps, std::FILE* out);

// --events: the format files as stored, under "system: NAME" lines, as
// trace-cmd 3.1.6 prints them: those of a v6 file, nothing for v7.
Status write_event_formats(TraceDat& file, std::FILE* out);

// -f: every kallsyms function, "%016llx name [module]", by address.
Status write_functions(TraceDat& file, std::FILE* out);

// -P: every printk format, "%016llx format", by address.
Status write_printk_formats(TraceDat& file, std::FILE* out);

// --stat: cpus=N, the CPUSTAT text recorded and where each CPU's data is
// (trace-cmd's offsets: its own for compressed data).
Status write_stats(TraceDat& file, std::FILE* out);

}  // namespace tracebed::decode
