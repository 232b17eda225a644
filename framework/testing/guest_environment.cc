#include "framework/base/install_layout.h"
#include "framework/testing/guest_environment.h"
#include "framework/testing/kernel_gcov.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

namespace tracebed::testlib {
namespace {

GuestEnvironment* g_env = nullptr;

// A dead guest is replaced only by a test's first guest() call: later in
// the test, its objects (file operations, instances) still refer to the old
// guest, and handing out a new one would leave them dangling.
bool g_may_replace_guest = true;

struct DeclaredTools {
  std::vector<std::string> tools;
  std::vector<std::string> dirs;
  std::string bootconfig;
  std::string cmdline;
  std::vector<vm::DebianToolRequest> debian_tools;
  unsigned memory_mb = 0;
  std::vector<std::function<void()>> registrars;
};
DeclaredTools& declared() {
  static DeclaredTools d;  // filled by static initialisers in suite binaries
  return d;
}

// Stamps every test with where it ran, and turns a console fault printed
// during the test into a failure of that test. OnTestEnd listeners run in
// reverse order of registration, so this runs before the result printer.
class GuestListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo&) override {
    g_may_replace_guest = true;
    ::testing::Test::RecordProperty("tracebed_kernel", g_env->options().kernel);
  }
  // The guest boots lazily, so stamp at the end, when it exists.
  void OnTestEnd(const ::testing::TestInfo& info) override {
    vm::Guest* g = g_env->guest();
    if (!g) return;
    ::testing::Test::RecordProperty("kernel_release", g->release());
    ::testing::Test::RecordProperty("accelerator", g->accelerator());
    ::testing::Test::RecordProperty("launcher", g->launcher());
    if (auto start = g_env->take_guest_start()) {
      ::testing::Test::RecordProperty("guest_start", start->first);
      ::testing::Test::RecordProperty("guest_start_seconds", fmt::format("{:.3f}", start->second));
    }
    if (!g->alive()) {
      if (KernelGcov* gcov = KernelGcov::from_environment())
        gcov->lost(fmt::format("{}.{}", info.test_suite_name(), info.name()));
      return;  // the test's own failure already says why
    }
    if (Status st = g->check_console(); !st) ADD_FAILURE() << st.error().message;
    // Any test may be the one before a crash (a known kernel bug's test
    // among them): copy the counts after each, so a dead guest takes only
    // its last test's with it.
    if (KernelGcov* gcov = KernelGcov::from_environment(); gcov && g->alive())
      if (Status st = gcov->collect(*g); !st) fmt::print(stderr, "tracebed: gcov: {}\n", st.error().message);
  }
};

}  // namespace

void GuestEnvironment::SetUp() {
  // Booting waits for the first guest() call: a suite (or a filter) that
  // never asks for the guest does not pay for one.
}

// The release of the kernel `name` names, without booting it: the catalogue
// pins it; a local image carries it in its setup header.
Result<std::string> kernel_release_of(const std::string& name) {
  TRACEBED_ASSIGN_OR_RETURN(vm::Catalogue catalogue, vm::Catalogue::load());
  TRACEBED_ASSIGN_OR_RETURN(vm::KernelSpec spec, catalogue.resolve(name));
  if (spec.local()) return vm::bzimage_release(spec.local_image);
  if (spec.release.empty()) return Error{fmt::format("kernel {}: the catalogue names no release", name)};
  return spec.release;
}

void GuestEnvironment::fetch_debian_tools() {
  if (debian_tools_fetched_) return;
  debian_tools_fetched_ = true;
  if (declared().debian_tools.empty()) return;
  auto release = kernel_release_of(options_.kernel);
  auto catalogue = vm::Catalogue::load();
  for (const auto& request : declared().debian_tools) {
    Result<vm::DebianTool> tool = Error{""};
    if (options_.launcher == "local")
      tool = Error{fmt::format("{} travels in a guest image, and the local launcher boots none", request.package)};
    else if (!release) tool = release.error();
    else if (!catalogue) tool = catalogue.error();
    else tool = vm::fetch_debian_tool(*catalogue, request, *release);
    if (tool) {
      for (auto& p : vm::guest_payloads(*tool)) options_.image.files.push_back(std::move(p));
      std::string version = tool->version_output.empty() ? "" : " (" + tool->version_output + ")";
      fmt::print(stderr, "tracebed: {}{} for {} in {}\n", tool->describe(), version, options_.kernel,
                 tool->guest_root());
    } else {
      fmt::print(stderr, "tracebed: no {} for {}: {}\n", request.package, options_.kernel, tool.error().message);
    }
    debian_tools_.insert_or_assign(request.package, std::move(tool));
  }
}

const Result<vm::DebianTool>& GuestEnvironment::debian_tool(const std::string& package) {
  fetch_debian_tools();
  auto it = debian_tools_.find(package);
  if (it == debian_tools_.end()) {
    it = debian_tools_
             .insert_or_assign(package, Result<vm::DebianTool>(Error{fmt::format(
                                            "{} was not declared (tracebed_guest_suite DEBIAN_TOOLS)", package)}))
             .first;
  }
  return it->second;
}

void GuestEnvironment::boot() {
  booted_ = true;
  ++boots_;
  fetch_debian_tools();
  auto g = vm::Guest::boot(options_);
  if (!g) {
    // Not a FAIL() here: gtest would then skip every test. Each test fails
    // instead, through guest(), with this message.
    boot_error_ = fmt::format("booting the {} guest failed: {}", options_.kernel, g.error().message);
    fmt::print(stderr, "tracebed: {}\n", boot_error_);
    return;
  }
  guest_ = std::move(g).value();
  guest_start_ = std::make_pair(guest_->boot_kind(), guest_->boot_seconds());
  if (KernelGcov* gcov = KernelGcov::from_environment()) {
    // The suites that declare boot parameters test what their boot did.
    bool boot_is_tested = !declared().bootconfig.empty() || !declared().cmdline.empty();
    if (Status st = gcov->started(*guest_, boot_is_tested); !st)
      fmt::print(stderr, "tracebed: gcov: {}\n", st.error().message);
  }
  fmt::print(stderr, "tracebed: {} guest ({}) ready in {:.2f} s ({}) under {} ({} launcher){}\n", options_.kernel,
             guest_->release(), guest_->boot_seconds(), guest_->boot_kind(), guest_->accelerator(),
             guest_->launcher(),
             guest_->save_seconds() > 0 ? fmt::format(", saved as a snapshot in {:.2f} s", guest_->save_seconds()) : "");
}

void GuestEnvironment::TearDown() {
  booted_ = false;
  if (!guest_) return;
  // A guest already dead was found so by a call of the last test, which got
  // the error (and failed, or skipped for a known kernel bug): not again.
  bool found_dead = !guest_->alive();
  if (KernelGcov* gcov = KernelGcov::from_environment()) {
    Status copied = found_dead ? Status{} : gcov->collect(*guest_);
    if (found_dead) gcov->lost("the suite's last tests");
    if (!copied) {
      fmt::print(stderr, "tracebed: gcov: {}\n", copied.error().message);
      gcov->lost("the copy at the suite's end");
    }
  }
  Status st = guest_->stop();
  if (!st && !found_dead) ADD_FAILURE() << st.error().message;
  guest_.reset();
}

bool require_guest_tools(std::vector<std::string> tools, std::vector<std::string> dirs) {
  for (auto& t : tools) declared().tools.push_back(std::move(t));
  for (auto& d : dirs) declared().dirs.push_back(std::move(d));
  return true;
}

const std::vector<std::string>& guest_tools() { return declared().tools; }

bool require_debian_tool(std::string package, std::string binary) {
  declared().debian_tools.push_back({std::move(package), std::move(binary)});
  return true;
}

const Result<vm::DebianTool>& debian_tool(const std::string& package) { return environment().debian_tool(package); }

bool require_guest_memory(unsigned mb) {
  declared().memory_mb = std::max(declared().memory_mb, mb);
  return true;
}

bool boot_with_bootconfig(std::string text) {
  declared().bootconfig = std::move(text);
  return true;
}

bool boot_with_cmdline(std::string parameters) {
  declared().cmdline = std::move(parameters);
  return true;
}

bool register_kernel_tests(std::function<void()> registrar) {
  declared().registrars.push_back(std::move(registrar));
  return true;
}

void run_kernel_test_registrars() {
  for (const auto& r : declared().registrars) r();
}

GuestEnvironment& environment() { return *g_env; }

vm::Guest& guest() {
  if (!g_env) {
    fmt::print(stderr, "tracebed::testlib::guest() called without tracebed::testlib::init()\n");
    std::abort();
  }
  if (!g_env->booted()) g_env->boot();
  vm::Guest* g = g_env->guest();
  // A test that crashed the kernel ends its guest: give the next test a new one.
  if (g && !g->alive() && g_env->boot_error().empty()) {
    if (!g_may_replace_guest)
      throw std::runtime_error("the guest died during this test (its console is in the failure above); "
                               "the next test gets a new one");
    fmt::print(stderr, "tracebed: the guest is gone, booting a new one\n");
    if (KernelGcov* gcov = KernelGcov::from_environment()) {
      const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
      gcov->lost(t ? fmt::format("the test before {}.{}", t->test_suite_name(), t->name()) : "an earlier test");
    }
    g_env->discard();
    g_env->boot();
    g = g_env->guest();
  }
  if (!g) {
    // A reference is promised: fail the test (gtest reports the exception
    // with its message) rather than hand out a null guest.
    throw std::runtime_error(g_env->boot_error());
  }
  g_may_replace_guest = false;
  return *g;
}

void init(int* argc, char** argv) {
  vm::GuestOptions options;
  if (const char* k = std::getenv("TRACEBED_KERNEL"); k && *k) options.kernel = k;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--tracebed_kernel=")) options.kernel = std::string(a.substr(18));
    else if (a.starts_with("--tracebed_accel=")) options.accel = std::string(a.substr(17));
    else if (a.starts_with("--tracebed_launcher=")) options.launcher = std::string(a.substr(20));
    else if (a.starts_with("--tracebed_libvirt_uri=")) options.libvirt_uri = std::string(a.substr(23));
    else if (a.starts_with("--tracebed_cmdline=")) options.cmdline_extra = std::string(a.substr(19));
    // Where this suite leaves its kernel counts (kernel_gcov.h); a flag as
    // well as the environment, for runners that set it per kernel.
    else if (a.starts_with("--tracebed_gcov_dir=")) setenv("TRACEBED_GCOV_DIR", std::string(a.substr(20)).c_str(), 1);
    else argv[out++] = argv[i];
  }
  *argc = out;
  argv[out] = nullptr;
  options.bootconfig = declared().bootconfig;
  if (!declared().cmdline.empty())
    options.cmdline_extra = declared().cmdline + (options.cmdline_extra.empty() ? "" : " " + options.cmdline_extra);
  options.memory_mb = std::max(options.memory_mb, declared().memory_mb);
  for (const auto& t : declared().tools) options.image.tools.emplace_back(base::installed_or_built(t));
  for (const auto& d : declared().dirs) {
    std::error_code ec;
    for (const auto& e : std::filesystem::recursive_directory_iterator(d, ec)) {
      if (e.is_regular_file()) options.image.files.push_back({e.path(), e.path().string()});
    }
  }
  if (options.kernel.empty()) {
    auto c = vm::Catalogue::load();
    options.kernel = c ? c->default_kernel() : "debian-6.12";
  }
  g_env = new GuestEnvironment(options);
  ::testing::AddGlobalTestEnvironment(g_env);  // gtest owns it
  ::testing::UnitTest::GetInstance()->listeners().Append(new GuestListener);
}

}  // namespace tracebed::testlib
