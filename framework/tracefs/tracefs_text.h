// Text helpers of the tracefs file parsers: base's (framework/base/text.h),
// and the ';'-separated field lists of dynamic_events.
#pragma once

#include <string_view>
#include <vector>

#include "framework/base/text.h"

namespace tracebed::tracefs {

using base::split_lines;
using base::split_words;
using base::trim;

// The non-empty fields of a ';'-separated list, each trimmed (how the
// kernel shows synthetic and user event fields in dynamic_events).
inline std::vector<std::string_view> split_fields(std::string_view text) {
  return base::split(text, ';', {.trim = true, .skip_empty = true});
}

}  // namespace tracebed::tracefs
