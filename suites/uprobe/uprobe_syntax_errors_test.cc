// ftracetest kprobe/uprobe_syntax_errors.tc: the uprobe definitions the
// parser refuses, with the kernel's error_log text (kernel/trace/
// trace_probe.h, ERRORS) and caret. `^` marks the caret as in the .tc;
// PATH stands for a regular file of the guest (the .tc uses /bin/sh, here
// the probe target: /bin/sh is a busybox link in some guests).
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/syntax_errors.h"

namespace tracebed::suites {
namespace {

// The .tc's rows, PATH made the probe target.
std::vector<SyntaxErrorRow> uprobe_rows() {
  std::vector<SyntaxErrorRow> rows = {
      {"FILE_NOT_FOUND", "p ^/non_exist_file:100", "Failed to find the given file"},
      {"NO_REGULAR_FILE", "p ^/sys:100", "Not a regular file"},
      {"BAD_UPROBE_OFFS", "p PATH:^10a", "Invalid uprobe offset"},
      {"BAD_REFCNT", "p PATH:10(^1a)", "Invalid reference counter offset"},
      {"REFCNT_OPEN_BRACE", "p PATH:10(10^", "Reference counter brace is not closed"},
      {"BAD_REFCNT_SUFFIX", "p PATH:10(10)^a", "Reference counter has wrong suffix"},
      {"BAD_FILE_OFFS", "p PATH:10 ^@+ab", "Invalid file offset value"},
      {"SYM_ON_UPROBE", "p PATH:10 ^@symbol", "Symbol is not available with uprobe"},
      {"BAD_ADDR_SUFFIX", "p PATH:10^%hoge", "Invalid probed address suffix", features::uprobe_percent_return},
      {"BAD_REFCNT_SUFFIX_return", "p PATH:10(10)^%return", "Reference counter has wrong suffix",
       features::uprobe_percent_return},
      // symstr came in 6.1 and was accepted on uprobes until the probe series
      // of 6.5 refused it there ("Reject symbol/symstr type for uprobe"), the
      // series that also brought fprobe events: debian-6.1 accepts this row.
      // No tracefs file tells the refusal apart, so the row needs fprobe events
      // (which imply symstr) as the nearest feature of those kernels.
      {"BAD_TYPE_symstr", "p PATH:10 $stack0:^symstr", "Unknown type is specified", features::fprobes},
  };
  for (SyntaxErrorRow& r : rows)
    if (size_t p = r.marked.find("PATH"); p != std::string::npos) r.marked.replace(p, 4, kProbeTarget);
  return rows;
}

class UprobeSyntaxError : public SyntaxErrorTest {
 protected:
  UprobeSyntaxError() : SyntaxErrorTest(kUprobeTable, {features::uprobes, features::error_log}) {}
};

TEST_P(UprobeSyntaxError, IsRefusedWithItsErrorAndCaret) {
  TRACEBED_COVERS("ftracetest: kprobe/uprobe_syntax_errors.tc");
  ExpectRowRefused();
}

INSTANTIATE_TEST_SUITE_P(Uprobe, UprobeSyntaxError, ValuesIn(uprobe_rows()), SyntaxErrorRow::test_name);

}  // namespace
}  // namespace tracebed::suites
