// The syntax-error tables of ftracetest's *_syntax_errors.tc cases, shared by
// the probe suites: a row is a definition the kernel must refuse, written as
// ftracetest writes it (`^` marks the caret column and is not part of the
// definition), with the kernel's error_log text (kernel/trace/trace_probe.h,
// ERRORS). kprobes, fprobes and tprobes share one argument parser
// (kernel/trace/trace_probe.c), so their argument and name rows are made
// once here, for the probe text each kind puts first.
//
//   class KprobeSyntaxError : public SyntaxErrorTest {
//    protected:
//     KprobeSyntaxError() : SyntaxErrorTest(kKprobeTable, {features::kprobes,
//     features::error_log}) {}
//   };
//   TEST_P(KprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
//   ExpectRowRefused(); } INSTANTIATE_TEST_SUITE_P(Kprobe, KprobeSyntaxError,
//   ValuesIn(rows), SyntaxErrorRow::test_name);
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::testlib {

struct SyntaxErrorRow {
  std::string name;    // the kernel's error id (TP_ERR_<name>), a suffix where it repeats
  std::string marked;  // the definition with `^` at the caret
  std::string error;   // as error_log prints it after "error: "
  std::optional<tracefs::Feature> needs = std::nullopt;
  // The row is for kernels without this (the .tc's `else`, or a form a
  // later kernel parses differently).
  std::optional<tracefs::Feature> unless = std::nullopt;
  // The error instead where the kernel resolves arguments through BTF
  // (README "<argname>"): $argN is looked up there first.
  std::string with_btf = "";
  // Other kernels' words for the same refusal, accepted too (each says
  // which kernels at the row).
  std::vector<std::string> also = {};

  static std::string test_name(const ::testing::TestParamInfo<SyntaxErrorRow>& p) { return p.param.name; }
};

inline void PrintTo(const SyntaxErrorRow& row, std::ostream* os) { *os << row.marked; }

// Where a kind's refusals go and come from: the group a definition the
// kernel took by mistake is removed from, and error_log's location.
struct SyntaxTable {
  tracefs::DynEventKind kind;
  std::string group;
  std::string location;  // "trace_kprobe", "trace_fprobe", "event_probe", "trace_uprobe"
  std::string event = "tb_never";
};

inline const SyntaxTable kKprobeTable{tracefs::DynEventKind::kprobe, "kprobes", "trace_kprobe"};
inline const SyntaxTable kFprobeTable{tracefs::DynEventKind::fprobe, "fprobes", "trace_fprobe"};
inline const SyntaxTable kTprobeTable{tracefs::DynEventKind::tprobe, "tracepoints", "trace_fprobe"};
inline const SyntaxTable kEprobeTable{tracefs::DynEventKind::eprobe, "foo", "event_probe", "bar"};
inline const SyntaxTable kUprobeTable{tracefs::DynEventKind::uprobe, "uprobes", "trace_uprobe"};

// The group and event name rows: `type` is the probe's letter ("p"),
// `target` what it probes ("vfs_read").
std::vector<SyntaxErrorRow> name_rows(std::string_view type, std::string_view target);

// The argument rows every kind of kernel probe shares, after `probe`
// ("p vfs_read", "f vfs_read", "t kfree").
std::vector<SyntaxErrorRow> fetch_arg_rows(std::string_view probe);

// 7.3's typecast rows (README "[(structname"), for kprobes and fprobes on
// vfs_read: `type` is "p" or "f".
std::vector<SyntaxErrorRow> typecast_rows(std::string_view type);

// Rows joined in order, for a table made of several parts.
std::vector<SyntaxErrorRow> join(std::initializer_list<std::vector<SyntaxErrorRow>> parts);

// A probe point appended to an existing event that the kernel refuses.
struct AppendRefusal {
  std::string marked;  // `^` at the caret, NAME for the event's group/event
  std::string error;
};

class SyntaxErrorTest : public TracefsTest, public ::testing::WithParamInterface<SyntaxErrorRow> {
 protected:
  SyntaxErrorTest(SyntaxTable table, std::vector<tracefs::Feature> required)
      : TracefsTest(std::move(required)), table_(std::move(table)) {}

  // The kernel refuses the row's definition, and its error_log entry names
  // the error and points at the column ftracetest expects. A row whose
  // text starts with another kind's letter (an fprobe table's `t kfree`)
  // is written as that kind.
  void ExpectRowRefused();

  // ftracetest's appending rows: `point` with the argument `abcd=\1`
  // creates the event (`NAME` stands for its group/event); each of
  // `refusals` (marked, `NAME` too) must then be refused with its error.
  void ExpectAppendsRefused(const std::string& point, const std::vector<AppendRefusal>& refusals);

 private:
  RawDefinition raw(std::string command, std::optional<std::string> event = std::nullopt) const;
  SyntaxTable table_;
};

// The appending rows the kprobe, fprobe and tprobe tables share: another
// argument name, another type, an immediate string, and the exact same
// probe twice. `point` made the event ("f:NAME vfs_read"), `other` is a
// second point of the same type ("f:NAME vfs_write").
std::vector<AppendRefusal> argument_appends(const std::string& point, const std::string& other, bool immediate_strings);

}  // namespace tracebed::testlib
