// A guest as a transient libvirt domain, the launcher beside Guest's own
// QEMU process (GuestOptions::launcher = "libvirt").
//
//   auto d = LibvirtDomain::create("qemu:///system", spec);
//   auto channel = (*d)->open_channel("org.tracebed.agent");  // an agent::Transport
//
// The domain boots spec.kernel + spec.initrd directly, writes its serial
// console to spec.console_log, and carries the agent's virtio-serial port as
// a <channel>, reached through virDomainOpenChannel and a virStream, so it
// works over a remote connection too. It is started with
// VIR_DOMAIN_START_AUTODESTROY (libvirt destroys it when our connection
// closes, also when this process dies) and destroyed by the destructor.
// Crashes and shutdowns arrive as lifecycle events (<panic>, <on_crash>).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "framework/agent/transport.h"
#include "framework/base/result.h"

namespace tracebed::vm {

struct DomainSpec {
  std::string name;                 // unique among the connection's domains
  bool kvm = false;                 // false: TCG (<domain type='qemu'>)
  std::string emulator;             // path on the libvirt host; empty: libvirt's default
  unsigned cpus = 2;
  unsigned memory_mb = 512;
  std::filesystem::path kernel, initrd;
  std::string cmdline;
  std::filesystem::path console_log;  // ttyS0, a file on the libvirt host
  std::string channel;                // virtio-serial port name the agent opens
  // Started paused with QEMU waiting for a migration stream (`-incoming
  // defer` through <qemu:commandline>), which load_state() feeds it. The
  // devices are those of the same spec without it, so a state saved from
  // one such domain loads into another with a different name.
  bool incoming = false;
};

// The domain XML for a spec (libvirt's formatdomain: direct kernel boot,
// <panic>, <on_crash>, a virtio <channel>). TCG gets the CPU the QEMU
// launcher uses (accel_args): the maximum model without cx16.
std::string domain_xml(const DomainSpec& spec);

// True when the URI names the local machine (no host part), so paths in the
// domain XML are ours.
bool libvirt_uri_is_local(std::string_view uri);

// The URI to use: `uri`, else $TRACEBED_LIBVIRT_URI, else empty (libvirt's
// own default: $LIBVIRT_DEFAULT_URI, its configuration, qemu:///system).
std::string libvirt_uri(const std::string& uri);

class LibvirtDomain {
 public:
  static Result<std::unique_ptr<LibvirtDomain>> create(const std::string& uri, const DomainSpec& spec);
  ~LibvirtDomain();
  LibvirtDomain(const LibvirtDomain&) = delete;
  LibvirtDomain& operator=(const LibvirtDomain&) = delete;

  // A stream to the guest channel named `name` (its <target name>).
  Result<std::unique_ptr<agent::Transport>> open_channel(const std::string& name);

  // False once libvirt reported the domain stopped or crashed, or the
  // connection to libvirt was lost.
  bool running();
  // How it ended ("crashed (guest panicked)", "shut down", ...), once it has.
  std::string end_reason();
  // Destroys the domain now (idempotent).
  void destroy();

  // Snapshots, through QMP commands of our own with the file passed as a
  // descriptor (virDomainQemuMonitorCommandWithFiles, libvirt 8.2+: libvirt
  // starts QEMU with -sandbox spawn=deny, so an "exec:" migration kills it).
  // The descriptor crosses a unix socket only: a local URI.
  // save_state: stop, migrate into `file`, cont; the domain goes on running.
  Status save_state(const std::filesystem::path& file, std::chrono::seconds timeout);
  // load_state: an `incoming` domain loads `file` and resumes.
  Status load_state(const std::filesystem::path& file, std::chrono::seconds timeout);

  // "libvirt 9.0.0, QEMU 7.2.0" of the daemon at `uri` (asked once per URI
  // and process): what else than the domain XML decides QEMU's devices.
  static Result<std::string> versions(const std::string& uri);

  const std::string& name() const { return name_; }
  const std::string& uri() const { return uri_; }

  struct State;

 private:
  LibvirtDomain() = default;
  std::string name_;
  std::string uri_;
  std::shared_ptr<State> state_;
};

}  // namespace tracebed::vm
