// Synthetic events and hist triggers written as ftracetest writes them, by
// hand: the definitions and triggers these tests need (fully qualified
// variables, field variables, stacktraces, refused forms) are text no
// builder makes. What they write is undone at the end of the scope.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {

// Removes a synthetic event made by hand, disabled first in `inst` (an
// enabled event cannot be removed). Declared before the triggers that use
// it, so it goes after them.
struct RemoveSynthAtEnd {
  const tracefs::Files top;
  std::string name;
  const tracefs::Files* inst = nullptr;
  ~RemoveSynthAtEnd() {
    if (inst) (void)inst->try_write("events/synthetic/" + name + "/enable", "0");
    (void)top.try_write("synthetic_events", "!" + name, true);
  }
};

// Hist triggers added by hand, removed newest first: a trigger's onmatch
// refers to the variables of the ones before it.
class RawTriggers {
 public:
  RawTriggers() = default;
  RawTriggers(const RawTriggers&) = delete;
  RawTriggers& operator=(const RawTriggers&) = delete;
  ~RawTriggers() {
    for (auto it = added_.rbegin(); it != added_.rend(); ++it)
      (void)it->first.try_write("trigger", "!" + it->second, true);
  }
  Status add(const tracefs::Event& ev, const std::string& line) {
    TRACEBED_TRY(ev.files().append("trigger", line));
    added_.emplace_back(ev.files(), line);
    return {};
  }
  // Removes the last one added now, as the .tc does.
  Status remove_last() {
    if (added_.empty()) return Error{"no trigger to remove"};
    auto [files, line] = std::move(added_.back());
    added_.pop_back();
    return files.append("trigger", "!" + line);
  }

 private:
  std::vector<std::pair<tracefs::Files, std::string>> added_;
};

}  // namespace tracebed::suites
