// How a Guest's machine is started, reached, saved and ended: one class per
// launcher (QEMU as our child, a libvirt domain, this machine's own kernel),
// chosen once by make_launcher(). Guest (guest.h) keeps what they share: the
// console's fault scan, the agent's calls, the snapshot files' life and the
// error for an agent that never answers. Not for use outside framework/vm.
//
//   auto launcher = make_launcher("qemu");
//   TRACEBED_TRY((*launcher)->prepare(machine));
//   auto reached = (*launcher)->boot(timeout, watchdog, fell_back_to_serial);
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/agent/client.h"
#include "framework/base/result.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/guests/guest.h"
#include "framework/vm/guests/snapshot.h"

namespace tracebed::vm {

// What a launcher starts: the kernel with its image and command line, and
// the run directory where its sockets and logs go (console.log included).
struct Machine {
  GuestOptions options;
  KernelFiles kernel;
  std::filesystem::path image;
  std::string accel;
  std::string cmdline;
  std::filesystem::path dir;
  std::filesystem::path console;  // dir/console.log; empty where there is no console (local)
};

// The agent of a machine that has started, answering.
struct Reached {
  std::unique_ptr<agent::Client> client;
  agent::Hello hello;
  bool on_serial = false;  // /init found no virtio-serial port; the agent is on the second serial port
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // "qemu", "libvirt" or "local", as GuestOptions::launcher names it.
  virtual std::string_view name() const = 0;
  // false for the local launcher: no kernel is booted, no console kept.
  virtual bool boots_a_kernel() const { return true; }
  // Makes the machine's configuration (a QEMU command line, a libvirt
  // domain) without starting it; command() and snapshot_key() are known after.
  virtual Status prepare(const Machine& m) = 0;
  virtual std::vector<std::string> command() const = 0;
  // The key of this configuration's snapshot; empty: it takes none.
  virtual std::string snapshot_key() const = 0;
  // What a saved state must have been saved by to load here.
  virtual std::string snapshot_version() const = 0;
  // Starts the machine and waits up to `timeout` for the agent's hello.
  // `fell_back` says whether the console shows /init's serial fallback.
  // An Error starting with "agent hello: no reply" is an agent that never
  // answered (Guest names the wait and the console's last line).
  virtual Result<Reached> boot(std::chrono::seconds timeout, const agent::Client::Watchdog& watchdog,
                               const std::function<bool()>& fell_back) = 0;
  // Starts the machine waiting for a saved state, loads it and resumes it:
  // the agent's client, not yet asked for its hello.
  virtual Result<std::unique_ptr<agent::Client>> restore(const SnapshotFiles& files,
                                                         const agent::Client::Watchdog& watchdog) = 0;
  // Writes the running machine's state to `partial`, then resumes it.
  virtual Status save(const std::filesystem::path& partial) = 0;
  // false once the machine has ended; never blocks.
  virtual bool running() = 0;
  virtual void kill() = 0;
  // Why the machine ended, for an error: "QEMU exited with status 1 (debian-6.12 guest): ...".
  virtual std::string end_reason() = 0;
  // Where the wait for the agent was: "debian-6.12, tcg".
  virtual std::string where() const = 0;
  // The machine's exit status once it ended (an interactive guest's).
  virtual int exit_status() const { return 0; }
};

// "qemu", "libvirt" or "local"; anything else is an Error naming them.
Result<std::unique_ptr<Launcher>> make_launcher(const std::string& name);

namespace internal {

std::unique_ptr<Launcher> make_qemu_launcher();
std::unique_ptr<Launcher> make_libvirt_launcher();
std::unique_ptr<Launcher> make_local_launcher();

// A process of ours (QEMU, the local agent): started, polled, killed.
struct ChildProcess {
  pid_t pid = -1;
  int status = 0;
  bool exited = false;

  bool running();
  void kill();
  // "exited with status N" or "was killed by signal N".
  std::string how_it_ended() const;
};

}  // namespace internal

}  // namespace tracebed::vm
