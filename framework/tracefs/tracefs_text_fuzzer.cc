// libFuzzer target: the parsers of what the kernel's tracefs files say
// (hist files and triggers, dynamic_events, synthetic_events, trigger and
// set_ftrace_filter files, error_log, the small list files). The first byte
// picks the parser, the rest is the file's text. Any text must end as a
// value or an error, never a crash or a runaway allocation.
#include <cstdint>
#include <string_view>

#include "framework/tracefs/dynevent.h"
#include "framework/tracefs/error_log.h"
#include "framework/tracefs/file_formats.h"
#include "framework/tracefs/hist_file.h"
#include "framework/tracefs/synth.h"
#include "framework/tracefs/trigger.h"

using namespace tracebed::tracefs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 12) {
    case 0: (void)parse_hist_file(text); break;
    case 1: (void)HistTrigger::parse(text); break;
    case 2: (void)HistAction::parse(text); break;
    case 3: (void)parse_dynamic_events(text); break;
    case 4: (void)parse_synthetic_events(text); break;
    case 5: (void)parse_trigger_file(text); break;
    case 6: (void)parse_function_filter(text, "set_ftrace_filter"); break;
    case 7: (void)parse_error_log(text); break;
    case 8: (void)parse_buffer_size(text, "buffer_size_kb"); break;
    case 9: (void)parse_selection(text, "current_tracer"); break;
    case 10: (void)parse_pid_list(text, "set_event_pid"); break;
    default: (void)parse_saved_cmdlines(text); break;
  }
  return 0;
}
