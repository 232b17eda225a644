// `trace-cmd report -F FILTER` and `-v`: which records a report prints, as
// trace-read.c and libtraceevent's parse-filter.c (1.7) decide.
//
// A filter is `EVENTS[:EXPRESSION]`. EVENTS is a comma-separated list of
// `system/event` or `name` (matching a system or an event), each a POSIX
// regular expression anchored at both ends and matched without case.
// EXPRESSION compares fields (or COMM, CPU) with numbers, 'c' chars or
// "strings": == != < > <= >=, and for strings == != =~ !~ (=~ and !~ are
// regular expressions, again without case); && and || (evaluated left to
// right with the same precedence, as libtraceevent builds them), ! and
// parentheses; + - * / % << >> & | ^ inside a comparison where libtraceevent
// accepts them. A field an event lacks makes its comparison false.
//
// Filters given after -v leave out what they match: a record is printed if
// a filter before -v matches it (or none is given) and no filter after -v
// does. A kernel_stack or user_stack record that no filter names is printed
// if the record before it on its CPU was.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/base/result.h"
#include "framework/decode/event_format.h"
#include "framework/decode/record.h"
#include "framework/decode/trace_context.h"

namespace tracebed::decode {

class RecordFilter {
 public:
  struct Spec {
    std::string text;      // as given to -F
    bool inverted = false; // given after -v
  };
  // An error names the filter and says what is wrong where, or which
  // event list matched no event.
  static Result<std::shared_ptr<RecordFilter>> make(TraceContext& ctx, const std::vector<Spec>& specs);
  ~RecordFilter();

  // Whether `record` (of `event`, null if unknown) is printed; records are
  // asked in the order printed (kernel_stack records look back).
  bool keep(const Record& record, const EventFormat* event);

  struct Tree;  // one filter's expression per event (record_filter.cc)

 private:
  explicit RecordFilter(TraceContext& ctx);
  // libtraceevent's tep_errno outcomes trace-read.c tells apart.
  enum class Outcome { none, match, miss, not_found, error };
  Outcome match(const Tree& filter, const Record& record, uint32_t id) const;

  TraceContext& ctx_;
  std::vector<std::unique_ptr<Tree>> positive_, negative_;
  std::optional<uint32_t> kernel_stack_id_, user_stack_id_;  // ftrace/kernel_stack, ftrace/user_stack
  // Whether the last record of a buffer's CPU was printed.
  std::unordered_map<uint64_t, bool> last_printed_;
};

}  // namespace tracebed::decode
