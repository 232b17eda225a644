// GoogleTest support for guest suites: one guest per test binary.
//
// A suite links tracebed_testing_main, whose main() registers a
// GuestEnvironment that boots the kernel named by --tracebed_kernel=NAME|PATH
// (or $TRACEBED_KERNEL, default: the catalogue's default) when a test first
// asks for it.
// Tests reach it through guest(); every result is stamped with the kernel,
// its release and the accelerator (RecordProperty), and a fault on the guest
// console during a test fails that test with the console excerpt.
//
//   TEST(Smoke, TracefsIsMounted) {
//     auto r = tracebed::testlib::guest().sh("cat /sys/kernel/tracing/available_tracers");
//     ASSERT_TRUE(r.ok()) << r.error().message;
//   }
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "framework/vm/images/debian_tool.h"
#include "framework/vm/guests/guest.h"

namespace tracebed::testlib {

class GuestEnvironment : public ::testing::Environment {
 public:
  explicit GuestEnvironment(vm::GuestOptions options) : options_(std::move(options)) {}
  void SetUp() override;
  void TearDown() override;
  void boot();
  // Drops a dead guest without the failure a stop() would report.
  void discard() {
    guest_.reset();
    booted_ = false;
  }
  bool booted() const { return booted_; }
  // How many guests this environment has booted: objects made for one guest
  // (file operations over its agent) compare it to know theirs is current.
  uint64_t boots() const { return boots_; }

  vm::Guest* guest() { return guest_.get(); }
  // How the last guest started ("boot" or "restore") and in how many
  // seconds, once: the listener stamps the test that waited for it.
  std::optional<std::pair<std::string, double>> take_guest_start() { return std::exchange(guest_start_, std::nullopt); }
  const vm::GuestOptions& options() const { return options_; }
  const std::string& boot_error() const { return boot_error_; }
  // Fetches the declared Debian tools once and adds them to the image.
  void fetch_debian_tools();
  const Result<vm::DebianTool>& debian_tool(const std::string& package);
  // Files for the guest image, added before the first boot.
  void add_image_files(std::vector<vm::Payload> files) {
    for (auto& f : files) options_.image.files.push_back(std::move(f));
  }

 private:
  vm::GuestOptions options_;
  std::unique_ptr<vm::Guest> guest_;
  std::string boot_error_;
  std::map<std::string, Result<vm::DebianTool>> debian_tools_;  // package -> the tool or why not
  bool debian_tools_fetched_ = false;
  bool booted_ = false;
  uint64_t boots_ = 0;
  std::optional<std::pair<std::string, double>> guest_start_;
};

// The guest of this test binary. Calling it when the boot failed fails the
// current test (the boot error is the message) and aborts the process's
// remaining tests fast.
vm::Guest& guest();

// The environment (for options such as the kernel name).
GuestEnvironment& environment();

// Host programs a suite's guest needs beyond the standard image, copied in
// with their shared libraries (vm::ImageOptions::tools), and host
// directories copied file by file to the same paths (such as a library's
// plugin directory, found at its compiled-in path). A suite declares them
// with tracebed_guest_suite(... TOOLS ... TOOL_DIRS ...), which generates
// the call; it must run before init(), i.e. during static initialisation.
// A directory that does not exist on the host is left out.
bool require_guest_tools(std::vector<std::string> tools, std::vector<std::string> dirs = {});
// What has been declared, for tests to say what their guest holds.
const std::vector<std::string>& guest_tools();

// A Debian tool package for this binary's guest, chosen for the kernel under
// test: the package's version of the kernel's series, else the nearest
// (vm::fetch_debian_tool), with its own libraries and loader. A suite
// declares it with tracebed_guest_suite(... DEBIAN_TOOLS PACKAGE:BINARY),
// which generates the call. Fetched before the guest boots; a fetch that
// fails does not stop the boot: debian_tool() returns the error, and the
// tests that need the tool skip with it.
bool require_debian_tool(std::string package, std::string binary);

// At least `mb` MiB for this binary's guest (tracebed_guest_suite(...
// MEMORY_MB N)): a tool that travels with LLVM in the initramfs needs more
// than the default.
bool require_guest_memory(unsigned mb);
// The tool fetched for this binary's kernel (fetching it if the guest has
// not booted yet), or why there is none.
const Result<vm::DebianTool>& debian_tool(const std::string& package);

// A boot configuration for this binary's guest (vm::GuestOptions::bootconfig):
// a suite whose tests check what the kernel did at boot declares it during
// static initialisation, before init() reads it.
//   static const bool booted_with_ = tracebed::testlib::boot_with_bootconfig(kText);
bool boot_with_bootconfig(std::string text);

// Kernel command line parameters for this binary's guest, before any the
// user gives (--tracebed_cmdline): a suite of boot parameters declares
// them during static initialisation. A new command line is a new snapshot.
//   static const bool booted_with_ = tracebed::testlib::boot_with_cmdline("traceoff_on_warning=1");
bool boot_with_cmdline(std::string parameters);

// A suite whose cases come from the kernel under test (the kernel's own
// selftests: suites/kselftest) declares a function that registers them
// (::testing::RegisterTest) during static initialisation; the main calls
// it once init() has read the kernel, before the tests are listed or run.
bool register_kernel_tests(std::function<void()> registrar);
void run_kernel_test_registrars();

// Parses --tracebed_kernel / $TRACEBED_KERNEL (and --tracebed_accel,
// $TRACEBED_ACCEL; --tracebed_launcher=qemu|libvirt, $TRACEBED_LAUNCHER;
// --tracebed_libvirt_uri, $TRACEBED_LIBVIRT_URI) out of argv, registers the environment and the listener
// that stamps and checks every test. Used by the shared main.
void init(int* argc, char** argv);

}  // namespace tracebed::testlib
