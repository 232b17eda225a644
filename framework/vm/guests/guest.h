// A QEMU guest running one of the catalogue's kernels with the agent.
//
//   auto guest = Guest::boot({.kernel = "debian-6.12"});
//   if (!guest) die(guest.error().message);
//   auto r = (*guest)->run({"uname", "-r"});
//
// Faults are errors, never hangs: a panic, Oops or BUG on the console ends the
// guest and the pending call fails with the console excerpt; a guest or agent
// that stops answering is killed after the call's timeout; QEMU exiting early
// reports its own stderr. QEMU is started with PR_SET_PDEATHSIG, so it dies
// with the process that started it, even when that process crashes.
//
// The launcher (launcher.h) says how the machine runs: QEMU as our child,
// a transient libvirt domain (the console in the same log file, the agent
// through a libvirt stream), or none (the local kernel).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/agent/client.h"
#include "framework/base/result.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/images/image.h"
#include "framework/vm/guests/snapshot.h"

namespace tracebed::vm {

class Launcher;

struct GuestOptions {
  std::string kernel;            // catalogue name or bzImage path; empty: the catalogue's default
  unsigned cpus = 2;
  unsigned memory_mb = 512;
  std::string accel;             // "kvm", "tcg" or empty/"auto" (probe); $TRACEBED_ACCEL overrides auto
  ImageOptions image;
  // The wait for the agent after a cold boot; 0: boot_timeout_for()'s,
  // from the kernel's history (framework/vm/guests/boot_history.h).
  std::chrono::seconds boot_timeout{0};
  bool interactive = false;      // console on our terminal, a shell on it (tracebed shell)
  std::string cmdline_extra;
  // Boot configuration text (Documentation/admin-guide/bootconfig.rst),
  // appended to the initramfs with `bootconfig` on the command line; kernels
  // without CONFIG_BOOT_CONFIG ignore it.
  std::string bootconfig;
  // false: no virtio-serial device, so the agent falls back to the second
  // serial port (kernels without virtio_console; also how the fallback is tested).
  bool virtio_serial = true;
  std::string qemu = "qemu-system-x86_64";
  // "qemu": QEMU as our child process; "libvirt": a transient libvirt domain
  // (framework/vm/guests/libvirt_domain.h); "local": no guest, the agent runs on
  // this machine, whose own kernel is tested (tracebed test --local).
  // Empty: $TRACEBED_LAUNCHER, else qemu.
  std::string launcher;
  std::string libvirt_uri;  // empty: $TRACEBED_LIBVIRT_URI, else libvirt's default
  std::filesystem::path catalogue;  // empty: Catalogue::default_path()
  // Start from a saved snapshot of this command line's booted guest, or
  // save one after a cold boot (framework/vm/guests/snapshot.h). The qemu launcher
  // and the libvirt one with a local URI; non-interactive guests with the
  // agent on virtio-serial only; $TRACEBED_NO_SNAPSHOT=1 turns it off too.
  bool snapshot = true;
};

class Guest {
 public:
  static Result<std::unique_ptr<Guest>> boot(GuestOptions options);
  ~Guest();
  Guest(const Guest&) = delete;
  Guest& operator=(const Guest&) = delete;

  agent::Client& agent() { return *client_; }

  // Runs a command; a guest fault during it is the Error (with the console).
  Result<agent::RunResult> run(std::vector<std::string> argv,
                               std::chrono::milliseconds timeout = std::chrono::seconds(120),
                               std::string stdin_data = "");
  Result<agent::RunResult> sh(const std::string& script,
                              std::chrono::milliseconds timeout = std::chrono::seconds(120)) {
    return run({"sh", "-c", script}, timeout);
  }

  // Any fault (WARNING included) printed since the last check, as an Error
  // carrying the console excerpt.
  Status check_console();
  // Appends the console tail and log path to an error about this guest.
  Error explain(const Error& e);

  // Asks the agent to power off; kills QEMU if it does not exit in time
  // (an error), or as soon as the console says the kernel halted instead
  // (no ACPI: not an error, see halted_instead_of_power_off()).
  Status stop(std::chrono::seconds timeout = std::chrono::seconds(30));
  // Interactive guests: waits until QEMU exits, returns its status.
  int wait();
  void kill();
  bool alive();

  const std::string& kernel_name() const { return kernel_.name; }
  const std::string& expected_release() const { return kernel_.release; }
  const std::string& release() const { return release_; }  // from the agent
  const std::string& accelerator() const { return accel_; }
  const std::string& launcher() const { return launcher_name_; }
  unsigned ncpus() const { return ncpus_; }
  // From QEMU's start (or libvirt's) to the agent's answer: a cold boot or
  // a restore from a snapshot, as boot_kind() says ("boot", "restore", "local").
  double boot_seconds() const { return boot_seconds_; }
  const std::string& boot_kind() const { return boot_kind_; }
  // Time spent saving this guest as a snapshot after its boot (0: not saved).
  double save_seconds() const { return save_seconds_; }
  // The snapshot file of this guest's command line, whether or not it
  // exists yet; empty for guests that take none (local, interactive, remote libvirt).
  std::filesystem::path snapshot_path() const;
  const std::filesystem::path& console_path() const { return console_path_; }
  std::string console_text();
  // The machine's command line (QEMU's; virsh's for a libvirt domain).
  std::vector<std::string> qemu_command() const;

 private:
  Guest() = default;
  // A guest of the chosen launcher with its machine prepared, not started.
  static Result<std::unique_ptr<Guest>> make(const GuestOptions& options, const KernelFiles& kernel,
                                             const std::filesystem::path& image, const std::string& accel);
  static Result<std::unique_ptr<Guest>> start(const GuestOptions& options, const KernelFiles& kernel,
                                              const std::filesystem::path& image, const std::string& accel,
                                              std::chrono::seconds boot_timeout);
  static Result<std::unique_ptr<Guest>> boot_cold_again(std::unique_ptr<Guest> failed, const GuestOptions& options,
                                                        const KernelFiles& kernel, const std::filesystem::path& image,
                                                        const std::string& accel, std::chrono::seconds boot_timeout);
  static Result<std::unique_ptr<Guest>> restore(const GuestOptions& options, const KernelFiles& kernel,
                                                const std::filesystem::path& image, const std::string& accel);
  static Result<std::unique_ptr<Guest>> restore_with(std::unique_ptr<Guest> g, const std::string& version,
                                                     const std::function<Status(const SnapshotFiles&)>& load_state);
  Status refresh_after_restore();
  bool save_snapshot();
  bool snapshot_wanted(const GuestOptions& options) const;
  bool save_with(const std::string& version, const std::function<Status(const std::filesystem::path&)>& write_state);
  Status watchdog();
  void read_console();
  void forget_console_head();

  std::unique_ptr<Launcher> launcher_;  // chosen once, by GuestOptions::launcher
  std::string launcher_name_;
  KernelFiles kernel_;
  std::string accel_;
  std::string release_;
  unsigned ncpus_ = 0;
  double boot_seconds_ = 0;
  double save_seconds_ = 0;
  std::string boot_kind_ = "boot";
  bool agent_on_serial_ = false;  // the cold boot fell back to the serial port
  std::filesystem::path dir_;
  std::filesystem::path console_path_;
  bool exited_ = false;
  bool interactive_ = false;
  // Destroyed before launcher_: a libvirt stream belongs to the domain's connection.
  std::unique_ptr<agent::Client> client_;
  // The console's newest text, at most kConsoleKept bytes of it
  // (forget_console_head); console_dropped_ bytes came before.
  static constexpr size_t kConsoleKept = size_t{16} << 20;
  std::string console_;
  size_t console_dropped_ = 0;
  size_t console_read_ = 0;
  size_t fatal_scan_ = 0;
  size_t checked_ = 0;
  std::optional<Error> dead_;  // set once the guest is gone
  bool keep_dir_ = false;
};

// The accelerator to use: $TRACEBED_ACCEL, else a cached probe result.
// Empty when a probe boot is needed.
std::string cached_accelerator(const std::string& qemu);

// QEMU arguments for an accelerator. TCG: single-threaded, and no CMPXCHG16B,
// which QEMU 7.2's TCG mis-executes in the kernel's SLUB fast path.
std::vector<std::string> accel_args(const std::string& accel);

}  // namespace tracebed::vm
