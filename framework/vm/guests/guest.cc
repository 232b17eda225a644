#include "framework/vm/guests/guest.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "framework/base/process.h"
#include "framework/base/text.h"
#include "framework/vm/guests/boot_history.h"
#include "framework/vm/images/bootconfig.h"
#include "framework/vm/guests/console.h"
#include "framework/vm/guests/launcher.h"
#include "framework/vm/cache/cache.h"
#include "framework/vm/guests/snapshot.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// /init prints this when the kernel has no virtio-serial port for the agent.
constexpr std::string_view kSerialFallback = "tracebed-init: no virtio-serial port";

// The kernel command line of a guest.
std::string kernel_cmdline(const GuestOptions& options) {
  // no_timer_check: the IO-APIC timer check (arch/x86/kernel/apic/io_apic.c
  // check_timer) counts ticks in a wall-clock window and panics with "IO-APIC
  // + timer doesn't work!" when a loaded host slows TCG down; seen in 3 of 60
  // boots with other guests and builds sharing two cores.
  //
  // rcu_expedited: tracefs writes wait for RCU grace periods (probe and
  // filter removal, trace-cmd's set-up and reset); under TCG a normal grace
  // period leaves both vCPUs idle for tens of milliseconds, an expedited one
  // does not: `trace-cmd record true` takes 1.0 s instead of 4.2 s.
  // PREEMPT_RT kernels turn expediting off after boot unless told not to.
  //
  // earlyprintk and loglevel=7 (KERN_INFO and more urgent): a kernel that
  // hangs before init shows on the console where it stopped, from before
  // the serial driver is up (the last lines before the silence); /init
  // turns the level down to 5 once it runs, so the tests' consoles carry no
  // more than before.
  std::string cmdline =
      "console=ttyS0 earlyprintk=serial,ttyS0,115200 panic=-1 loglevel=7 rdinit=/init no_timer_check"
      " rcupdate.rcu_expedited=1 rcupdate.rcu_normal_after_boot=0";
  if (options.interactive) cmdline += " tracebed.shell";
  if (!options.cmdline_extra.empty()) cmdline += " " + options.cmdline_extra;
  return cmdline;
}

// A new, empty directory for one guest's sockets, console and logs.
fs::path make_run_dir() {
  static std::atomic<int> counter{0};
  fs::path dir = cache_dir() / "run" / fmt::format("{}-{}", getpid(), counter++);
  // sockaddr_un holds 108 bytes: fall back to /tmp for a deep cache path.
  if ((dir / "agent-serial.sock").string().size() >= 100) {
    char tmpl[] = "/tmp/tracebed-XXXXXX";
    if (mkdtemp(tmpl)) dir = tmpl;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  return dir;
}

std::string accel_cache_key(const std::string& qemu) {
  auto version = run_process({qemu, "--version"}, 10s);
  utsname u{};
  uname(&u);
  return content_hash(fmt::format("{}|{}|{}", version ? version->output : "", u.release, u.version));
}

fs::path accel_cache_file(const std::string& qemu) {
  return cache_dir() / "accel" / accel_cache_key(qemu);
}

}  // namespace

std::vector<std::string> accel_args(const std::string& accel) {
  if (accel == "kvm") return {"-accel", "kvm", "-cpu", "host"};
  return {"-accel", "tcg,thread=single", "-cpu", "max,-cx16"};
}

std::string cached_accelerator(const std::string& qemu) {
  if (const char* a = std::getenv("TRACEBED_ACCEL"); a && *a && std::string_view(a) != "auto") return a;
  if (access("/dev/kvm", R_OK | W_OK) != 0) return "tcg";
  auto cached = read_text_file(accel_cache_file(qemu));
  if (cached && (cached->starts_with("kvm") || cached->starts_with("tcg"))) return cached->substr(0, 3);
  return "";
}

Result<std::unique_ptr<Guest>> Guest::boot(GuestOptions options) {
  if (options.launcher.empty()) {
    const char* l = std::getenv("TRACEBED_LAUNCHER");
    options.launcher = l && *l ? l : "qemu";
  }
  TRACEBED_ASSIGN_OR_RETURN(std::unique_ptr<Launcher> chosen, make_launcher(options.launcher));
  if (!chosen->boots_a_kernel()) {
    // A bootconfig goes with a kernel we boot; the local launcher boots none.
    if (!options.bootconfig.empty())
      return Error{"a bootconfig needs a booted guest: the local launcher tests the running kernel as it is"};
    KernelFiles local;
    local.name = "local";
    return start(options, local, {}, "none", std::chrono::seconds(10));
  }
  TRACEBED_ASSIGN_OR_RETURN(Catalogue catalogue, Catalogue::load(options.catalogue));
  if (options.kernel.empty()) options.kernel = catalogue.default_kernel();
  TRACEBED_ASSIGN_OR_RETURN(KernelSpec spec, catalogue.resolve(options.kernel));
  TRACEBED_ASSIGN_OR_RETURN(KernelFiles kernel, fetch_kernel(catalogue, spec));
  TRACEBED_ASSIGN_OR_RETURN(fs::path image, build_initramfs(kernel, options.image));
  // A kernel without BOOT_CONFIG warns about the `bootconfig` argument
  // (init/main.c), which would read as a fault on the console: leave it out.
  if (!options.bootconfig.empty() && !kernel_takes_bootconfig(kernel.config)) {
    progress(fmt::format("{}: no CONFIG_BOOT_CONFIG in {}, booting without the bootconfig", kernel.name,
                         kernel.config.string()));
  } else if (!options.bootconfig.empty()) {
    TRACEBED_ASSIGN_OR_RETURN(image, initramfs_with_bootconfig(image, options.bootconfig));
    options.cmdline_extra += (options.cmdline_extra.empty() ? "" : " ") + std::string(kBootconfigArgument);
  }

  std::string accel = options.accel == "auto" ? "" : options.accel;
  if (!accel.empty() && accel != "kvm" && accel != "tcg")
    return Error{fmt::format("accelerator \"{}\" is neither kvm nor tcg", accel)};
  if (accel.empty()) accel = cached_accelerator(options.qemu);
  auto timeout_for = [&](const std::string& a) {
    return options.boot_timeout.count() > 0 ? options.boot_timeout : boot_timeout_for(kernel.name, a);
  };
  if (!accel.empty()) return start(options, kernel, image, accel, timeout_for(accel));

  // Probe KVM with a real, bounded boot: /dev/kvm can exist while nested KVM
  // aborts QEMU or wedges the guest. The result is cached per QEMU and host
  // kernel; a successful probe guest is kept and used.
  progress("probing KVM with a test boot (result is cached)");
  auto probe = start(options, kernel, image, "kvm", std::min(timeout_for("kvm"), std::chrono::seconds(15)));
  fs::path cache = accel_cache_file(options.qemu);
  if (probe) {
    (void)write_file_atomic(cache, "kvm\n");
    return probe;
  }
  std::string first_line = probe.error().message.substr(0, probe.error().message.find('\n'));
  progress(fmt::format("KVM unusable, using TCG: {}", first_line));
  (void)write_file_atomic(cache, fmt::format("tcg\n{}\n", probe.error().message));
  return start(options, kernel, image, "tcg", timeout_for("tcg"));
}

namespace {

// "guest did not reach the agent within N s": how N was chosen, and the
// last line the kernel printed before the silence, which says where it stopped.
Error agent_never_answered(std::chrono::seconds timeout, const std::string& where, const std::string& console) {
  std::string last;
  for (std::string_view line : base::split_lines(console)) {
    if (!base::trim(line).empty()) last = std::string(base::trim(line));
  }
  return Error{fmt::format("guest did not reach the agent within {} s ({}; {}); {}", timeout.count(), where,
                           boot_timeout_rule(),
                           last.empty() ? "the kernel printed nothing on the console"
                                        : fmt::format("the last line on the console: \"{}\"", last))};
}

}  // namespace

Result<std::unique_ptr<Guest>> Guest::make(const GuestOptions& options, const KernelFiles& kernel,
                                           const fs::path& image, const std::string& accel) {
  std::unique_ptr<Guest> g(new Guest());
  TRACEBED_ASSIGN_OR_RETURN(g->launcher_, make_launcher(options.launcher));
  g->launcher_name_ = std::string(g->launcher_->name());
  g->kernel_ = kernel;
  g->accel_ = accel;
  g->interactive_ = options.interactive;
  g->boot_kind_ = g->launcher_->boots_a_kernel() ? "boot" : "local";
  g->dir_ = make_run_dir();
  if (g->launcher_->boots_a_kernel()) g->console_path_ = g->dir_ / "console.log";
  TRACEBED_TRY(g->launcher_->prepare(
      Machine{options, kernel, image, accel, kernel_cmdline(options), g->dir_, g->console_path_}));
  return g;
}

Result<std::unique_ptr<Guest>> Guest::start(const GuestOptions& options, const KernelFiles& kernel,
                                            const fs::path& image, const std::string& accel,
                                            std::chrono::seconds boot_timeout) {
  if (options.snapshot && !options.interactive && options.virtio_serial && !snapshots_disabled_by_environment()) {
    auto restored = restore(options, kernel, image, accel);
    if (restored) return restored;
    // No snapshot yet is the normal first boot; a failed restore was warned about.
  }
  TRACEBED_ASSIGN_OR_RETURN(std::unique_ptr<Guest> g, make(options, kernel, image, accel));
  Guest* self = g.get();
  auto t0 = Clock::now();
  auto reached = g->launcher_->boot(
      boot_timeout, [self] { return self->watchdog(); },
      [self] { return self->console_.find(kSerialFallback) != std::string::npos; });
  if (!reached) {
    // One failure path for every launcher: the wait and the console's last
    // line for an agent that never answered, the console tail for the rest.
    Error e = reached.error();
    if (e.message.starts_with("agent hello: no reply")) {
      g->read_console();
      e = agent_never_answered(boot_timeout, g->launcher_->where(), g->console_);
    }
    g->keep_dir_ = true;
    g->kill();
    return g->dead_ && g->dead_->message == e.message ? e : g->explain(e);
  }
  g->client_ = std::move(reached->client);
  g->agent_on_serial_ = reached->on_serial;
  g->release_ = reached->hello.release;
  g->ncpus_ = reached->hello.ncpus;
  g->boot_seconds_ = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!g->launcher_->boots_a_kernel()) return g;
  record_cold_boot(kernel.name, accel, g->boot_seconds_);
  if (g->snapshot_wanted(options) && !g->save_snapshot())
    return boot_cold_again(std::move(g), options, kernel, image, accel, boot_timeout);
  return g;
}

// A guest whose save failed may be stopped, or half-migrated: it goes, and
// a new one boots cold without trying to save.
Result<std::unique_ptr<Guest>> Guest::boot_cold_again(std::unique_ptr<Guest> failed, const GuestOptions& options,
                                                      const KernelFiles& kernel, const fs::path& image,
                                                      const std::string& accel, std::chrono::seconds boot_timeout) {
  failed->kill();
  failed.reset();
  GuestOptions cold = options;
  cold.snapshot = false;
  return start(cold, kernel, image, accel, boot_timeout);
}

fs::path Guest::snapshot_path() const {
  std::string key = launcher_ ? launcher_->snapshot_key() : "";
  return key.empty() ? fs::path() : snapshot_files(key).state;
}

std::vector<std::string> Guest::qemu_command() const { return launcher_ ? launcher_->command() : std::vector<std::string>{}; }

bool Guest::snapshot_wanted(const GuestOptions& options) const {
  const std::string key = launcher_->snapshot_key();
  return !key.empty() && options.snapshot && !options.interactive && options.virtio_serial && !agent_on_serial_ &&
         !snapshots_disabled_by_environment() && !find_snapshot(snapshot_files(key));
}

// Saves this freshly booted guest; the launcher resumes it after. A save
// that fails is a warning and false: the caller discards this guest, whose
// state after a half-done save is not known.
bool Guest::save_snapshot() {
  return save_with(launcher_->snapshot_version(), [this](const fs::path& partial) { return launcher_->save(partial); });
}

// What both launchers do around writing the stream: a partial file renamed
// into place once complete, its meta.json, pruning, and a warning on failure
// (then false, with nothing of the snapshot left behind).
bool Guest::save_with(const std::string& version, const std::function<Status(const fs::path&)>& write_state) {
  auto t0 = Clock::now();
  SnapshotFiles files = snapshot_files(launcher_->snapshot_key());
  std::error_code ec;
  fs::create_directories(files.dir, ec);
  fs::path partial = files.dir / fmt::format("state.{}.{}.partial", getpid(), fmt::ptr(this));
  auto attempt = [&]() -> Status {
    TRACEBED_TRY(write_state(partial));
    TRACEBED_ASSIGN_OR_RETURN(std::string checksum, snapshot_checksum(partial));
    fs::rename(partial, files.state, ec);
    if (ec) return Error{fmt::format("rename {}: {}", partial.string(), ec.message())};
    SnapshotMeta meta;
    meta.kernel = kernel_.name;
    meta.release = release_;
    meta.qemu_version = version;
    meta.ncpus = ncpus_;
    meta.bytes = fs::file_size(files.state, ec);
    meta.checksum = checksum;
    meta.boot_seconds = boot_seconds_;
    meta.save_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    TRACEBED_TRY(write_snapshot_meta(files.meta, meta));
    prune_snapshots(kernel_.name);
    return {};
  };
  Status st = attempt();
  fs::remove(partial, ec);
  if (!st) {
    progress(fmt::format("warning: saving a snapshot of the {} guest failed; that guest is discarded and one "
                         "boots cold without saving: {}",
                         kernel_.name, st.error().message));
    discard_snapshot(files);
    return false;
  }
  save_seconds_ = std::chrono::duration<double>(Clock::now() - t0).count();
  return true;
}

// Starts a guest from the snapshot of its machine's configuration (the
// launcher loads the state and resumes it; the agent answers as it did
// when saved). An Error without a warning means there is no snapshot; any
// other failure warns, discards the snapshot and lets the caller boot cold.
Result<std::unique_ptr<Guest>> Guest::restore(const GuestOptions& options, const KernelFiles& kernel,
                                              const fs::path& image, const std::string& accel) {
  TRACEBED_ASSIGN_OR_RETURN(std::unique_ptr<Guest> g, make(options, kernel, image, accel));
  if (g->launcher_->snapshot_key().empty()) return Error{"this guest takes no snapshots"};
  Guest* self = g.get();
  std::string version = g->launcher_->snapshot_version();
  return restore_with(std::move(g), version, [self](const SnapshotFiles& files) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(self->client_, self->launcher_->restore(files, [self] { return self->watchdog(); }));
    return {};
  });
}

// What both launchers do around loading the stream: find the snapshot of
// g's key, refuse one saved by another version, then its checksum, the
// load, the agent's answer and the refresh; a failure warns, discards the
// snapshot and lets the caller boot cold. An Error without a warning means
// there is no snapshot.
Result<std::unique_ptr<Guest>> Guest::restore_with(std::unique_ptr<Guest> g, const std::string& version,
                                                   const std::function<Status(const SnapshotFiles&)>& load_state) {
  auto t0 = Clock::now();
  g->boot_kind_ = "restore";
  const std::string& name = g->kernel_.name;
  SnapshotFiles files = snapshot_files(g->launcher_->snapshot_key());
  auto meta = find_snapshot(files);
  if (!meta) return meta.error();  // ~Guest removes the run directory
  if (meta->qemu_version != version) {
    progress(fmt::format("warning: the {} snapshot was saved by {}, this is {}: booting cold", name,
                         meta->qemu_version.empty() ? "an unknown QEMU" : meta->qemu_version, version));
    discard_snapshot(files);
    return Error{"snapshot from another QEMU"};
  }
  auto attempt = [&]() -> Status {
    TRACEBED_TRY(check_snapshot_state(files, *meta));
    TRACEBED_TRY(load_state(files));
    TRACEBED_ASSIGN_OR_RETURN(agent::Hello hello, g->client_->hello(30s));
    g->release_ = hello.release;
    g->ncpus_ = hello.ncpus;
    return g->refresh_after_restore();
  };
  if (Status st = attempt(); !st) {
    Error e = g->dead_ ? *g->dead_ : st.error();
    g->kill();
    progress(fmt::format("warning: restoring the {} guest from its snapshot failed, booting cold: {}", name,
                         e.message));
    discard_snapshot(files);
    g->keep_dir_ = false;  // the warning says why; the cold boot keeps its own
    return e;
  }
  // From QEMU's start, which the caller's preparation only just preceded.
  g->boot_seconds_ = std::chrono::duration<double>(Clock::now() - t0).count();
  mark_snapshot_used(files);
  return g;
}

// Every restored guest starts with the saved one's memory: the same random
// pool and a wall clock stopped at the save. Mix fresh host randomness into
// the pool and step the clock to now. (boot_id stays the saved one's: the
// kernel generates it once.)
Status Guest::refresh_after_restore() {
  std::string seed(64, '\0');
  if (int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC); fd >= 0) {
    (void)!read(fd, seed.data(), seed.size());
    close(fd);
  }
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(now).count();
  auto r = run({"sh", "-c", fmt::format("cat > /dev/urandom && date -u -s @{} > /dev/null", secs)}, 30s, seed);
  if (!r) return r.error();
  if (!r->ok()) return Error{fmt::format("refreshing the restored guest failed (status {}): {}", r->shell_status(), r->err)};
  return {};
}

void Guest::read_console() {
  if (interactive_ || console_path_.empty()) return;
  std::ifstream in(console_path_, std::ios::binary);
  if (!in) return;
  // A shorter file was rotated: libvirt's virtlogd (stdio_handler "logd")
  // starts a new one at 2 MiB. Its text continues from the start.
  std::error_code ec;
  if (auto size = fs::file_size(console_path_, ec); !ec && size < console_read_) console_read_ = 0;
  in.seekg(static_cast<std::streamoff>(console_read_));
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    size_t n = static_cast<size_t>(in.gcount());
    console_read_ += n;
    console_.append(buf, n);
    if (console_.size() > kConsoleKept) forget_console_head();
  }
}

// A guest flooding its console must not eat the host, and a fault printed
// after the flood must still be found: keep the newest half of the window,
// from a line's start.
void Guest::forget_console_head() {
  size_t drop = console_.size() - kConsoleKept / 2;
  if (auto nl = console_.find('\n', drop); nl != std::string::npos) drop = nl + 1;
  console_.erase(0, drop);
  console_dropped_ += drop;
  fatal_scan_ = fatal_scan_ > drop ? fatal_scan_ - drop : 0;
  checked_ = checked_ > drop ? checked_ - drop : 0;
}

std::string Guest::console_text() {
  read_console();
  return console_;
}

bool Guest::alive() {
  if (exited_ || !launcher_) return false;
  // An agent that stopped answering leaves a guest nobody can use: end it,
  // so a test harness boots a fresh one instead of waiting on it again.
  if (client_ && client_->broken()) {
    keep_dir_ = true;
    kill();
    return false;
  }
  if (!launcher_->running()) exited_ = true;
  return !exited_;
}

Status Guest::watchdog() {
  if (dead_) return *dead_;
  read_console();
  if (auto f = find_fault(console_, fatal_scan_); f && f->fatal()) {
    // Let the kernel finish its report (QEMU exits by itself on a panic:
    // panic=-1 with -no-reboot), then take the excerpt.
    auto until = Clock::now() + 3s;
    while (alive() && Clock::now() < until) {
      usleep(50000);
      read_console();
    }
    if (auto again = find_fault(console_, fatal_scan_)) f = again;
    keep_dir_ = true;
    kill();
    dead_ = Error{fmt::format("{} in the {} guest: {}\n--- console ({}) ---\n{}", fault_name(f->kind), kernel_.name,
                              f->line, console_path_.string(), f->excerpt)};
    return *dead_;
  }
  // Only rescan the last, possibly incomplete line next time.
  auto nl = console_.rfind('\n');
  fatal_scan_ = nl == std::string::npos ? 0 : nl + 1;
  if (!alive()) {
    keep_dir_ = true;
    if (auto pos = console_.find("tracebed-init: agent exited"); pos != std::string::npos) {
      std::string line = console_.substr(pos, console_.find('\n', pos) - pos);
      std::erase(line, '\r');
      dead_ = Error{fmt::format("the guest agent died ({} guest, {}); the guest powered off\n--- console tail ({}) ---\n{}",
                                kernel_.name, line, console_path_.string(), console_tail(console_, 20))};
      return *dead_;
    }
    std::string reason = launcher_->end_reason();
    dead_ = console_path_.empty() ? Error{reason}
                                  : Error{fmt::format("{}\n--- console tail ({}) ---\n{}", reason, console_path_.string(),
                                                      console_tail(console_, 20))};
    return *dead_;
  }
  return {};
}

Error Guest::explain(const Error& e) {
  if (dead_ && e.message == dead_->message) return e;
  keep_dir_ = true;
  if (console_path_.empty()) return e;
  read_console();
  return Error{fmt::format("{}\n--- console tail ({}) ---\n{}", e.message, console_path_.string(),
                           console_tail(console_, 20))};
}

Status Guest::check_console() {
  read_console();
  if (auto f = find_fault(console_, checked_)) {
    checked_ = f->end;
    keep_dir_ = true;
    return Error{fmt::format("{} in the {} guest: {}\n--- console ({}) ---\n{}", fault_name(f->kind), kernel_.name,
                             f->line, console_path_.string(), f->excerpt)};
  }
  auto nl = console_.rfind('\n');
  checked_ = nl == std::string::npos ? 0 : nl + 1;
  return {};
}

Result<agent::RunResult> Guest::run(std::vector<std::string> argv, std::chrono::milliseconds timeout,
                                    std::string stdin_data) {
  if (dead_) return *dead_;
  agent::RunRequest req;
  req.argv = std::move(argv);
  req.timeout = timeout;
  req.stdin_data = std::move(stdin_data);
  auto r = client_->run(req);
  if (!r && client_->broken()) {
    // A call that timed out leaves the agent in an unknown state: end it.
    Error e = dead_ ? *dead_ : explain(r.error());
    if (!dead_) {
      kill();
      dead_ = e;
    }
    return e;
  }
  return r;  // a value, or the guest's errno (e.g. no such program)
}

Status Guest::stop(std::chrono::seconds timeout) {
  if (!alive()) return dead_ ? Status(*dead_) : Status{};
  read_console();
  const size_t from = console_dropped_ + console_.size();  // counted from the console's start
  if (!dead_ && client_) (void)client_->shutdown();
  auto until = Clock::now() + timeout;
  while (alive() && Clock::now() < until) {
    read_console();
    // A kernel that cannot power off halts and QEMU stays up: the guest is
    // done, so end QEMU now rather than at the timeout.
    if (halted_instead_of_power_off(console_, from > console_dropped_ ? from - console_dropped_ : 0)) {
      kill();
      return {};
    }
    usleep(20000);
  }
  if (alive()) {
    kill();
    return explain(Error{fmt::format("{} guest did not power off within {} s", kernel_.name, timeout.count())});
  }
  return {};
}

int Guest::wait() {
  while (alive()) usleep(50000);
  return launcher_ ? launcher_->exit_status() : 0;
}

void Guest::kill() {
  if (launcher_) launcher_->kill();
  exited_ = true;
}

Guest::~Guest() {
  if (alive()) (void)stop(10s);
  kill();
  client_.reset();  // a libvirt stream belongs to the domain's connection
  launcher_.reset();
  std::error_code ec;
  if (std::getenv("TRACEBED_KEEP_LOGS")) return;
  if (!keep_dir_) {
    fs::remove_all(dir_, ec);
    return;
  }
  // A failed guest keeps what its error names (the console log) and the
  // other logs; its sockets and domain definition are nobody's any more.
  std::vector<fs::path> state;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (!e.path().filename().string().ends_with(".log")) state.push_back(e.path());
  }
  for (const fs::path& p : state) fs::remove_all(p, ec);
}

}  // namespace tracebed::vm
