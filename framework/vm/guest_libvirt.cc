// The libvirt launcher's half of Guest (guest.h): a transient domain per
// guest (libvirt_domain.h), its agent channel, and snapshots of it.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "framework/base/process.h"
#include "framework/vm/guest.h"
#include "framework/vm/guest_internal.h"
#include "framework/vm/libvirt_domain.h"
#include "framework/vm/process.h"
#include "framework/vm/snapshot.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using internal::kernel_cmdline;
using internal::kSerialFallback;
using internal::make_run_dir;

namespace {

constexpr std::string_view kAgentChannel = "org.tracebed.agent";

// A domain name no other guest on the same libvirt host has.
std::string domain_name(const std::string& kernel) {
  static std::atomic<int> counter{0};
  char host[64] = {};
  gethostname(host, sizeof host - 1);
  std::string name = fmt::format("tracebed-{}-{}-{}-{}", host, getpid(), counter++, kernel);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
  return name.substr(0, 100);
}

// libvirt always passes "-accel tcg" (multi-threaded TCG) and has no setting
// for the thread mode, and QEMU uses the first -accel that works, so a later
// one cannot override it. This emulator wrapper rewrites that one argument
// to the TCG mode accel_args uses. Written once per QEMU path: libvirt
// re-probes an emulator whose file changed.
Result<fs::path> single_thread_tcg_emulator(const std::string& qemu) {
  auto found = base::find_program(qemu);
  if (!found) return Error{fmt::format("cannot start {}: not found on PATH (install qemu-system-x86)", qemu)};
  fs::path real = *found;
  std::string script = fmt::format(
      "#!/bin/sh\n"
      "# Written by tracebed: {} with single-threaded TCG for libvirt domains.\n"
      "prev=\n"
      "for a do\n"
      "  shift\n"
      "  if [ \"$prev\" = -accel ] && [ \"$a\" = tcg ]; then a=tcg,thread=single; fi\n"
      "  set -- \"$@\" \"$a\"\n"
      "  prev=$a\n"
      "done\n"
      "exec '{}' \"$@\"\n",
      real.string(), real.string());
  fs::path path = cache_dir() / "libvirt" / fmt::format("qemu-tcg-single-{}", content_hash(script));
  auto existing = read_text_file(path);
  if (!existing || *existing != script) {
    TRACEBED_TRY(write_file_atomic(path, script));
    if (chmod(path.c_str(), 0755) != 0)
      return Error{fmt::format("chmod {}: {}", path.string(), std::strerror(errno))};
  }
  return path;
}

}  // namespace

// The domain of this guest (launch_libvirt, restore_libvirt); also sets
// the snapshot key where snapshots can be used: a local URI (the state file
// is passed to QEMU as a descriptor) and a non-interactive guest.
Result<DomainSpec> Guest::libvirt_spec(const GuestOptions& options, const fs::path& image, const std::string& cmdline) {
  if (options.interactive) return Error{"an interactive guest needs the qemu launcher (its console is our terminal)"};
  if (!options.virtio_serial) return Error{"the libvirt launcher reaches the agent over virtio-serial only"};
  if (!fs::is_regular_file(kernel_.vmlinuz))
    return Error{fmt::format("kernel image {} does not exist", kernel_.vmlinuz.string())};
  std::string uri = libvirt_uri(options.libvirt_uri);
  bool local = libvirt_uri_is_local(uri);
  DomainSpec spec;
  spec.name = domain_name(kernel_.name);
  spec.kvm = accel_ == "kvm";
  if (!spec.kvm && local) {
    TRACEBED_ASSIGN_OR_RETURN(fs::path emulator, single_thread_tcg_emulator(options.qemu));
    spec.emulator = emulator.string();
  }
  spec.cpus = options.cpus;
  spec.memory_mb = options.memory_mb;
  spec.kernel = kernel_.vmlinuz;
  spec.initrd = image;
  spec.cmdline = cmdline;
  spec.console_log = console_path_;
  spec.channel = kAgentChannel;
  argv_ = {"virsh", "-c", uri.empty() ? "qemu:///system" : uri, "create", (dir_ / "domain.xml").string()};
  if (local && options.snapshot && !snapshots_disabled_by_environment()) {
    // The key: the domain XML but its name (the console is under dir_), the
    // files it names, our QEMU, and the daemon's libvirt and QEMU versions,
    // which decide the command line libvirt makes of the XML.
    auto versions = LibvirtDomain::versions(uri);
    if (versions) {
      DomainSpec keyed = spec;
      keyed.name = "@NAME@";
      std::vector<std::string> parts = {options.qemu,          "libvirt",           *versions, domain_xml(keyed),
                                        spec.kernel.string(), spec.initrd.string(), spec.emulator};
      snapshot_key_ = snapshot_key(parts, dir_);
      snapshot_version_ = fmt::format("{} ({})", qemu_version(options.qemu), *versions);
    }
  }
  return spec;
}

Status Guest::launch_libvirt(const GuestOptions& options, const fs::path& image, const std::string& cmdline) {
  TRACEBED_ASSIGN_OR_RETURN(DomainSpec spec, libvirt_spec(options, image, cmdline));
  std::string uri = libvirt_uri(options.libvirt_uri);
  if (!libvirt_uri_is_local(uri))
    progress(fmt::format("libvirt at {}: the kernel, image and console paths must exist there as here", uri));
  std::ofstream(console_path_).flush();
  (void)write_file_atomic(dir_ / "domain.xml", domain_xml(spec));
  TRACEBED_ASSIGN_OR_RETURN(domain_, LibvirtDomain::create(uri, spec));
  return {};
}

Result<std::unique_ptr<agent::Client>> Guest::connect_libvirt_agent() {
  auto transport = domain_->open_channel(std::string(kAgentChannel));
  if (!transport) {
    keep_dir_ = true;
    kill();
    return explain(transport.error());
  }
  // /init falls back to a serial port when the kernel has no virtio_console;
  // the domain has none for it, so say so instead of waiting out the boot.
  auto check = [this]() -> Status {
    TRACEBED_TRY(this->watchdog());
    if (console_.find(kSerialFallback) != std::string::npos)
      return Error{fmt::format("the {} guest has no virtio-serial port for the agent (virtio_console missing?); "
                               "the libvirt launcher needs one", kernel_.name)};
    return {};
  };
  return std::make_unique<agent::Client>(std::move(*transport), check);
}

// Starts a guest from the snapshot of its domain: a domain of the same XML
// but its name and console, whose QEMU waits (`-incoming defer`) while the
// agent channel is opened, then loads the saved state through a descriptor
// and resumes. Any number of them restore from one file at once. Failures
// are handled as Guest::restore's: a warning, the snapshot discarded, and
// the caller boots cold.
Result<std::unique_ptr<Guest>> Guest::restore_libvirt(const GuestOptions& options, const KernelFiles& kernel,
                                                      const fs::path& image, const std::string& accel) {
  std::unique_ptr<Guest> g(new Guest());
  g->kernel_ = kernel;
  g->accel_ = accel;
  g->launcher_ = "libvirt";
  g->dir_ = make_run_dir();
  g->console_path_ = g->dir_ / "console.log";
  TRACEBED_ASSIGN_OR_RETURN(DomainSpec spec, g->libvirt_spec(options, image, kernel_cmdline(options)));
  if (g->snapshot_key_.empty()) return Error{"no snapshots over this libvirt connection"};
  Guest* self = g.get();
  std::string version = g->snapshot_version_;
  return restore_with(std::move(g), version, [self, spec, &options](const SnapshotFiles& files) mutable -> Status {
    spec.incoming = true;
    std::ofstream(self->console_path_).flush();
    (void)write_file_atomic(self->dir_ / "domain.xml", domain_xml(spec));
    TRACEBED_ASSIGN_OR_RETURN(self->domain_, LibvirtDomain::create(libvirt_uri(options.libvirt_uri), spec));
    TRACEBED_ASSIGN_OR_RETURN(self->client_, self->connect_libvirt_agent());
    return self->domain_->load_state(files.state, 60s);
  });
}

// Saves this freshly booted domain as Guest::save_snapshot does a QEMU
// process: stopped, migrated into the file, continued.
bool Guest::save_libvirt_snapshot() {
  return save_with(snapshot_version_, [this](const fs::path& partial) { return domain_->save_state(partial, 120s); });
}

}  // namespace tracebed::vm
