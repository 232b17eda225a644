// The libvirt launcher (launcher.h): a transient domain per guest
// (libvirt_domain.h), the agent on its channel, snapshots of it.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "framework/base/process.h"
#include "framework/vm/guests/launcher.h"
#include "framework/vm/guests/libvirt_domain.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

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

class LibvirtLauncher final : public Launcher {
 public:
  std::string_view name() const override { return "libvirt"; }
  Status prepare(const Machine& m) override;
  std::vector<std::string> command() const override { return argv_; }
  std::string snapshot_key() const override { return key_; }
  std::string snapshot_version() const override { return version_; }
  Result<Reached> boot(std::chrono::seconds timeout, const agent::Client::Watchdog& watchdog,
                       const std::function<bool()>& fell_back) override;
  Result<std::unique_ptr<agent::Client>> restore(const SnapshotFiles& files,
                                                 const agent::Client::Watchdog& watchdog) override;
  Status save(const fs::path& partial) override { return domain_->save_state(partial, 120s); }
  bool running() override { return domain_ && domain_->running(); }
  void kill() override {
    if (domain_) domain_->destroy();
  }
  std::string end_reason() override {
    return fmt::format("libvirt domain {} {} ({} guest)", domain_ ? domain_->name() : spec_.name,
                       domain_ ? domain_->end_reason() : "was never created", m_.kernel.name);
  }
  std::string where() const override {
    return fmt::format("{}, {}, libvirt domain {}", m_.kernel.name, m_.accel, spec_.name);
  }

 private:
  Status create(const DomainSpec& spec);
  Result<std::unique_ptr<agent::Client>> connect_agent(agent::Client::Watchdog check);

  Machine m_;
  std::string uri_;
  DomainSpec spec_;
  std::vector<std::string> argv_;
  std::string key_, version_;
  std::unique_ptr<LibvirtDomain> domain_;
};

// The domain of this guest; also the snapshot key where snapshots can be
// used: a local URI (the state file is passed to QEMU as a descriptor) and
// a non-interactive guest.
Status LibvirtLauncher::prepare(const Machine& m) {
  m_ = m;
  const GuestOptions& options = m.options;
  if (options.interactive) return Error{"an interactive guest needs the qemu launcher (its console is our terminal)"};
  if (!options.virtio_serial) return Error{"the libvirt launcher reaches the agent over virtio-serial only"};
  if (!fs::is_regular_file(m.kernel.vmlinuz))
    return Error{fmt::format("kernel image {} does not exist", m.kernel.vmlinuz.string())};
  uri_ = libvirt_uri(options.libvirt_uri);
  bool local = libvirt_uri_is_local(uri_);
  spec_.name = domain_name(m.kernel.name);
  spec_.kvm = m.accel == "kvm";
  if (!spec_.kvm && local) {
    TRACEBED_ASSIGN_OR_RETURN(fs::path emulator, single_thread_tcg_emulator(options.qemu));
    spec_.emulator = emulator.string();
  }
  spec_.cpus = options.cpus;
  spec_.memory_mb = options.memory_mb;
  spec_.kernel = m.kernel.vmlinuz;
  spec_.initrd = m.image;
  spec_.cmdline = m.cmdline;
  spec_.console_log = m.console;
  spec_.channel = kAgentChannel;
  argv_ = {"virsh", "-c", uri_.empty() ? "qemu:///system" : uri_, "create", (m.dir / "domain.xml").string()};
  if (local && options.snapshot && !snapshots_disabled_by_environment()) {
    // The key: the domain XML but its name (the console is under the run
    // directory), the files it names, our QEMU, and the daemon's libvirt and
    // QEMU versions, which decide the command line libvirt makes of the XML.
    auto versions = LibvirtDomain::versions(uri_);
    if (versions) {
      DomainSpec keyed = spec_;
      keyed.name = "@NAME@";
      std::vector<std::string> parts = {options.qemu,           "libvirt",            *versions, domain_xml(keyed),
                                        spec_.kernel.string(), spec_.initrd.string(), spec_.emulator};
      key_ = vm::snapshot_key(parts, m.dir);
      version_ = fmt::format("{} ({})", qemu_version(options.qemu), *versions);
    }
  }
  return {};
}

Status LibvirtLauncher::create(const DomainSpec& spec) {
  std::ofstream(m_.console).flush();
  (void)write_file_atomic(m_.dir / "domain.xml", domain_xml(spec));
  TRACEBED_ASSIGN_OR_RETURN(domain_, LibvirtDomain::create(uri_, spec));
  return {};
}

Result<std::unique_ptr<agent::Client>> LibvirtLauncher::connect_agent(agent::Client::Watchdog check) {
  TRACEBED_ASSIGN_OR_RETURN(auto transport, domain_->open_channel(std::string(kAgentChannel)));
  return std::make_unique<agent::Client>(std::move(transport), std::move(check));
}

Result<Reached> LibvirtLauncher::boot(std::chrono::seconds timeout, const agent::Client::Watchdog& watchdog,
                                      const std::function<bool()>& fell_back) {
  if (!libvirt_uri_is_local(uri_))
    progress(fmt::format("libvirt at {}: the kernel, image and console paths must exist there as here", uri_));
  TRACEBED_TRY(create(spec_));
  // /init falls back to a serial port when the kernel has no virtio_console;
  // the domain has none for it, so say so instead of waiting out the boot.
  std::string kernel = m_.kernel.name;
  auto check = [watchdog, fell_back, kernel]() -> Status {
    TRACEBED_TRY(watchdog());
    if (fell_back())
      return Error{fmt::format("the {} guest has no virtio-serial port for the agent (virtio_console missing?); "
                               "the libvirt launcher needs one",
                               kernel)};
    return {};
  };
  TRACEBED_ASSIGN_OR_RETURN(auto client, connect_agent(check));
  TRACEBED_ASSIGN_OR_RETURN(agent::Hello hello, client->hello(timeout));
  return Reached{std::move(client), hello, false};
}

// A domain of the same XML but its name and console, whose QEMU waits
// (`-incoming defer`) while the agent channel is opened, then loads the
// saved state through a descriptor and resumes. Any number of them restore
// from one file at once.
Result<std::unique_ptr<agent::Client>> LibvirtLauncher::restore(const SnapshotFiles& files,
                                                                const agent::Client::Watchdog& watchdog) {
  if (key_.empty()) return Error{"no snapshots over this libvirt connection"};
  DomainSpec incoming = spec_;
  incoming.incoming = true;
  TRACEBED_TRY(create(incoming));
  TRACEBED_ASSIGN_OR_RETURN(auto client, connect_agent(watchdog));
  TRACEBED_TRY(domain_->load_state(files.state, 60s));
  return client;
}

}  // namespace

std::unique_ptr<Launcher> internal::make_libvirt_launcher() { return std::make_unique<LibvirtLauncher>(); }

}  // namespace tracebed::vm
