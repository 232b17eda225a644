#include "framework/vm/guests/console.h"

#include <algorithm>
#include <array>
#include <utility>

namespace tracebed::vm {

std::string_view fault_name(FaultKind kind) {
  switch (kind) {
    case FaultKind::panic: return "kernel panic";
    case FaultKind::oops: return "kernel Oops";
    case FaultKind::bug: return "kernel BUG";
    case FaultKind::warning: return "kernel WARNING";
    case FaultKind::hung_task: return "hung task";
    case FaultKind::out_of_memory: return "out of memory";
  }
  return "fault";
}

namespace {

constexpr std::array<std::pair<std::string_view, FaultKind>, 9> kMarkers = {{
    {"Kernel panic - not syncing", FaultKind::panic},
    {"Oops:", FaultKind::oops},
    {"general protection fault", FaultKind::oops},
    {"kernel BUG at", FaultKind::bug},
    {"BUG:", FaultKind::bug},
    {"UBSAN:", FaultKind::bug},
    {"WARNING:", FaultKind::warning},
    {" blocked for more than ", FaultKind::hung_task},
    {" invoked oom-killer: ", FaultKind::out_of_memory},
}};

size_t line_start(std::string_view text, size_t pos) {
  auto nl = pos == 0 ? std::string_view::npos : text.rfind('\n', pos - 1);
  return nl == std::string_view::npos ? 0 : nl + 1;
}

// The OOM killer's report is a call trace, then a memory table hundreds of
// lines long, then what it did: its "oom-kill:" and "Out of memory: Killed
// process" lines (mm/oom_kill.c), found within the next 1000 lines.
std::string oom_verdict(std::string_view console, size_t from) {
  std::string out;
  size_t pos = from;
  for (int i = 0; i < 1000 && pos < console.size(); ++i) {
    size_t end = console.find('\n', pos + 1);
    if (end == std::string_view::npos) end = console.size();
    std::string_view line = console.substr(pos, end - pos);
    if (line.find("oom-kill:") != std::string_view::npos || line.find("Killed process") != std::string_view::npos) {
      if (out.empty()) out = "\n[...]";
      out += line;
    }
    if (line.find("Killed process") != std::string_view::npos) break;
    pos = end;
  }
  return out;
}

}  // namespace

std::optional<ConsoleFault> find_fault(std::string_view console, size_t from) {
  size_t pos = line_start(console, std::min(from, console.size()));
  while (pos < console.size()) {
    size_t end = console.find('\n', pos);
    if (end == std::string_view::npos) end = console.size();
    std::string_view line = console.substr(pos, end - pos);
    for (const auto& [marker, kind] : kMarkers) {
      if (line.find(marker) == std::string_view::npos) continue;
      ConsoleFault f{kind, std::string(line), {}, pos, std::min(end + 1, console.size())};
      while (!f.line.empty() && (f.line.back() == '\r')) f.line.pop_back();
      // Five lines of context before, up to 60 after: the panic's stack trace
      // and "end Kernel panic" line.
      size_t begin = pos;
      for (int i = 0; i < 5 && begin > 0; ++i) begin = line_start(console, begin - 1);
      size_t stop = end;
      for (int i = 0; i < 60 && stop < console.size(); ++i) {
        size_t next = console.find('\n', stop + 1);
        stop = next == std::string_view::npos ? console.size() : next;
      }
      f.excerpt = std::string(console.substr(begin, stop - begin));
      if (kind == FaultKind::out_of_memory) f.excerpt += oom_verdict(console, stop);
      std::erase(f.excerpt, '\r');
      return f;
    }
    pos = end + 1;
  }
  return std::nullopt;
}

bool halted_instead_of_power_off(std::string_view console, size_t from) {
  std::string_view rest = console.substr(std::min(from, console.size()));
  // pr_emerg() with pr_fmt "reboot: " in kernel_halt().
  for (std::string_view marker : {"reboot: Power off not available: System halted instead", "reboot: System halted"})
    if (rest.find(marker) != std::string_view::npos) return true;
  return false;
}

std::string console_tail(std::string_view console, size_t lines) {
  size_t pos = console.size();
  if (pos > 0 && console[pos - 1] == '\n') --pos;
  for (size_t i = 0; i < lines && pos > 0; ++i) {
    auto nl = console.rfind('\n', pos - 1);
    if (nl == std::string_view::npos) {
      pos = 0;
      break;
    }
    pos = nl;
  }
  std::string out(console.substr(pos == 0 ? 0 : pos + 1));
  std::erase(out, '\r');
  return out;
}

}  // namespace tracebed::vm
