// ModuleTest: loading and unloading kernel modules in the guest from a
// test, and tracebed_events' emit file (vmimages/modules/tracebed_events).
// A module a test loaded is unloaded after it, pass or fail, so that the
// next test starts with none (and finds the guest usable: an unload under
// a probe or a filter must not break it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {

// Where tracebed_events takes its lines (one event per line).
inline constexpr std::string_view kEmitFile = "/sys/kernel/debug/tracebed_events/emit";

class ModuleTest : public TracefsTest {
 public:
  explicit ModuleTest(std::vector<Feature> required) : TracefsTest(std::move(required)) {}

 protected:
  void TearDown() override;

  // `modprobe NAME ARGS`; a failure fails the test with modprobe's words.
  void load(std::string_view name, std::string_view args = "");
  // The same, for a load that may fault the kernel: the guest's answer,
  // for the test to judge (a known kernel bug is a skip).
  Result<agent::RunResult> try_load(std::string_view name, std::string_view args = "");
  // `rmmod NAME`; a failure fails the test.
  void unload(std::string_view name);
  // Whether /proc/modules lists it ('-' and '_' alike, as the kernel does).
  bool loaded(std::string_view name);
  // Writes `lines` to the emit file in one write; the kernel's answer
  // (0 or an errno) is returned, a write that could not be made fails.
  int emit(const std::string& lines);

  // A top-level file (printk_formats, enabled_functions, ...).
  std::string top_file(std::string_view rel);

 private:
  std::vector<std::string> loaded_by_test_;
};

// "trace-events-sample" -> "trace_events_sample", the kernel's module name.
std::string module_name(std::string_view file_name);

}  // namespace tracebed::suites
