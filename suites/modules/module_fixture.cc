#include "suites/modules/module_fixture.h"

#include <algorithm>

#include <fmt/format.h>

#include "framework/testing/guest_environment.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {

std::string module_name(std::string_view file_name) {
  std::string n(file_name);
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

void ModuleTest::TearDown() {
  // A guest the test's module load killed took its modules with it.
  if (vm::Guest* g = testlib::environment().guest(); g && !g->alive()) {
    loaded_by_test_.clear();
    TracefsTest::TearDown();
    return;
  }
  // Newest first: a module another depends on goes last.
  for (auto it = loaded_by_test_.rbegin(); it != loaded_by_test_.rend(); ++it)
    if (loaded(*it)) (void)testlib::guest().sh(fmt::format("rmmod {} 2>&1", *it));
  TracefsTest::TearDown();
}

void ModuleTest::load(std::string_view name, std::string_view args) {
  sh(fmt::format("modprobe {} {} 2>&1", name, args));
  loaded_by_test_.push_back(module_name(name));
}

Result<agent::RunResult> ModuleTest::try_load(std::string_view name, std::string_view args) {
  loaded_by_test_.push_back(module_name(name));
  return testlib::guest().sh(fmt::format("modprobe {} {} 2>&1", name, args));
}

void ModuleTest::unload(std::string_view name) { sh(fmt::format("rmmod {} 2>&1", name)); }

bool ModuleTest::loaded(std::string_view name) {
  auto text = fs().ops().read("/proc/modules");
  if (!text) {
    ADD_FAILURE() << "reading /proc/modules: " << text.error().message;
    return false;
  }
  std::string want = module_name(name) + " ";
  for (auto line : tracefs::split_lines(*text))
    if (line.starts_with(want)) return true;
  return false;
}

int ModuleTest::emit(const std::string& lines) {
  auto r = fs().ops().write(std::string(kEmitFile), lines, false);
  if (!r) {
    ADD_FAILURE() << "writing " << kEmitFile << ": " << r.error().message;
    return -1;
  }
  return *r;
}

std::string ModuleTest::top_file(std::string_view rel) {
  auto text = fs().top().files().read(rel);
  if (!text) {
    ADD_FAILURE() << "reading " << rel << ": " << text.error().message;
    return "";
  }
  return *text;
}

}  // namespace tracebed::suites
