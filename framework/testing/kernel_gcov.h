// A suite's kernel gcov counts, for `tracebed test --gcov` and `matrix
// --gcov`: with $TRACEBED_GCOV_DIR (or --tracebed_gcov_dir) set, every
// guest the suite starts has its counters zeroed (/sys/kernel/debug/gcov/
// reset; a restored snapshot holds the boot's counts, which are no suite's
// own) unless the suite tests the boot itself, and its .gcda files are
// copied out after each test while the guest still answers:
//
//   $TRACEBED_GCOV_DIR/<suite>/boot-<N>/<path under /sys/kernel/debug/gcov>
//
// A guest that dies takes the counts of the test that killed it with it:
// the suite's `missing.txt` says which guest and test, for the report.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "framework/base/result.h"
#include "framework/vm/guests/guest.h"

namespace tracebed::testlib {

inline constexpr std::string_view kGuestGcovDir = "/sys/kernel/debug/gcov";

class KernelGcov {
 public:
  // The collector $TRACEBED_GCOV_DIR asks for, or nullptr without it.
  static KernelGcov* from_environment();
  explicit KernelGcov(std::filesystem::path suite_dir) : suite_dir_(std::move(suite_dir)) {}

  // A new guest: its counts go to the next boot-N. Its counters are
  // zeroed unless `boot_is_tested`: a suite of boot parameters or boot-time
  // tracing tests its own boot (a snapshot of it holds that boot's counts).
  Status started(vm::Guest& guest, bool boot_is_tested);
  // Copies the guest's .gcda files (all of them again: they only grow).
  Status collect(vm::Guest& guest);
  // The guest died during `test`: its counts since the last copy are
  // missing. Said once per guest (the first caller knows the test best).
  void lost(std::string_view test);

 private:
  std::filesystem::path boot_dir() const;
  void note_missing(std::string_view why);
  std::filesystem::path suite_dir_;
  unsigned boots_ = 0;
  unsigned collections_ = 0;  // of the current guest
  bool lost_ = false;         // the current guest's loss is noted
};

}  // namespace tracebed::testlib
