// Definitions written as a user types them, for the syntax-error tables
// (ftracetest's *_syntax_errors.tc): ExpectRefused takes builders, and a
// refused definition is often one no builder would make.
//
//   Marked m = unmark("p vfs_read ^$retval");   // m.command, m.caret == 11
//   ExpectRefused(RawDefinition{DynEventKind::kprobe, m.command}, "$retval is not available on probe", m.caret);
#pragma once

#include <string>
#include <string_view>

#include "framework/tracefs/dynevent.h"

namespace tracebed::testlib {

// The definition text and, should the kernel take it by mistake, the
// group/event its owner removes (an auto-named probe is named by the kernel:
// give the name where the text has one).
struct RawDefinition {
  tracefs::DynEventKind kind = tracefs::DynEventKind::unknown;
  std::string text;
  std::string group = "";
  std::string event = "tb_never";
  std::string command() const { return text; }
  tracefs::DynEventDef def() const { return {kind, group, event, text}; }
};

// ftracetest's notation (test.d/functions, ftrace_errlog_check): `^` marks
// the column error_log's caret points at and is not part of the command.
struct Marked {
  std::string command;
  size_t caret = 0;
};

inline Marked unmark(std::string_view marked) {
  Marked m{std::string(marked), marked.rfind('^')};
  if (m.caret != std::string_view::npos) m.command.erase(m.caret, 1);
  return m;
}

}  // namespace tracebed::testlib
