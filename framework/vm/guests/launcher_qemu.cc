// The qemu launcher (launcher.h): QEMU as our child process, the agent on a
// virtio-serial socket (or the second serial port), snapshots over QMP.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "framework/base/process.h"
#include "framework/base/unix_socket.h"
#include "framework/vm/guests/console.h"
#include "framework/vm/guests/launcher.h"
#include "framework/vm/cache/cache.h"
#include "framework/vm/guests/qmp.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace internal {

bool ChildProcess::running() {
  if (exited || pid < 0) return false;
  if (waitpid(pid, &status, WNOHANG) == pid) exited = true;
  return !exited;
}

void ChildProcess::kill() {
  if (pid > 0 && !exited) {
    ::kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    exited = true;
  }
}

std::string ChildProcess::how_it_ended() const {
  return WIFEXITED(status) ? fmt::format("exited with status {}", WEXITSTATUS(status))
                           : fmt::format("was killed by signal {}", WTERMSIG(status));
}

}  // namespace internal

namespace {

// Non-blocking, as agent::Client reads it.
Result<int> connect_unix(const fs::path& path) {
  TRACEBED_ASSIGN_OR_RETURN(int fd, base::connect_unix_socket(path));
  fcntl(fd, F_SETFL, O_NONBLOCK);
  return fd;
}

class QemuLauncher final : public Launcher {
 public:
  ~QemuLauncher() override {
    kill();
    if (fd_ >= 0) close(fd_);
    if (serial_fd_ >= 0) close(serial_fd_);
  }
  std::string_view name() const override { return "qemu"; }
  Status prepare(const Machine& m) override;
  std::vector<std::string> command() const override { return argv_; }
  std::string snapshot_key() const override { return key_; }
  std::string snapshot_version() const override { return qemu_version(m_.options.qemu); }
  Result<Reached> boot(std::chrono::seconds timeout, const agent::Client::Watchdog& watchdog,
                       const std::function<bool()>& fell_back) override;
  Result<std::unique_ptr<agent::Client>> restore(const SnapshotFiles& files,
                                                 const agent::Client::Watchdog& watchdog) override;
  Status save(const fs::path& partial) override;
  bool running() override { return qemu_.running(); }
  void kill() override { qemu_.kill(); }
  std::string end_reason() override;
  std::string where() const override { return fmt::format("{}, {}", m_.kernel.name, m_.accel); }
  int exit_status() const override {
    return WIFEXITED(qemu_.status) ? WEXITSTATUS(qemu_.status) : 128 + WTERMSIG(qemu_.status);
  }

 private:
  Status spawn();
  Status connect_agent_socket(const agent::Client::Watchdog& watchdog);

  Machine m_;
  std::vector<std::string> argv_;
  std::string key_;  // of the command line, before -incoming
  internal::ChildProcess qemu_;
  int fd_ = -1;         // virtio-serial socket
  int serial_fd_ = -1;  // fallback: second serial port
};

// The QEMU command line; everything in it but the run directory goes into
// the snapshot key, so keep per-guest state under the run directory.
Status QemuLauncher::prepare(const Machine& m) {
  m_ = m;
  const GuestOptions& options = m.options;
  argv_ = {options.qemu, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"};
  for (auto& a : accel_args(m.accel)) argv_.push_back(a);
  argv_.insert(argv_.end(), {"-m", std::to_string(options.memory_mb), "-smp", std::to_string(options.cpus),
                             "-kernel", m.kernel.vmlinuz.string(), "-initrd", m.image.string(), "-append", m.cmdline});
  if (options.interactive) {
    argv_.insert(argv_.end(), {"-serial", "mon:stdio"});
  } else {
    argv_.insert(argv_.end(), {"-serial", "file:" + m.console.string()});
  }
  argv_.insert(argv_.end(), {
      "-chardev", fmt::format("socket,id=agentserial,path={},server=on,wait=off", (m.dir / "agent-serial.sock").string()),
      "-serial", "chardev:agentserial",
      "-chardev", fmt::format("socket,id=agent,path={},server=on,wait=off", (m.dir / "agent.sock").string())});
  if (options.virtio_serial)
    argv_.insert(argv_.end(), {"-device", "virtio-serial-pci",
                               "-device", "virtserialport,chardev=agent,name=org.tracebed.agent"});
  // QMP: how a booted guest is saved as a snapshot and a new one restored.
  if (!options.interactive)  // "-monitor none" would take mon:stdio's monitor away
    argv_.insert(argv_.end(), {"-monitor", "none", "-qmp",
                               fmt::format("unix:{},server=on,wait=off", (m.dir / "qmp.sock").string())});
  key_ = options.interactive || !options.virtio_serial ? "" : vm::snapshot_key(argv_, m.dir);
  return {};
}

Status QemuLauncher::spawn() {
  if (!fs::is_regular_file(m_.kernel.vmlinuz))
    return Error{fmt::format("kernel image {} does not exist", m_.kernel.vmlinuz.string())};
  std::ofstream(m_.console).flush();
  int log = open((m_.dir / "qemu.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  base::StartOptions how;
  // Interactive: the console is our terminal; otherwise QEMU's own messages go to qemu.log.
  how.stdin_fd = m_.options.interactive ? base::kInherit : base::kDevNull;
  how.stdout_fd = m_.options.interactive ? base::kInherit : log;
  how.stderr_fd = log;
  auto pid = base::start_process(argv_, how);
  if (log >= 0) close(log);
  if (!pid) return Error{fmt::format("{} (install qemu-system-x86)", pid.error().message)};
  qemu_.pid = *pid;
  return {};
}

// QEMU creates the sockets before the guest starts; connect as soon as they exist.
Status QemuLauncher::connect_agent_socket(const agent::Client::Watchdog& watchdog) {
  auto deadline = Clock::now() + 20s;
  for (;;) {
    auto fd = connect_unix(m_.dir / "agent.sock");
    if (fd) {
      fd_ = *fd;
      break;
    }
    TRACEBED_TRY(watchdog());
    if (Clock::now() > deadline) return Error{fmt::format("QEMU did not open the agent socket: {}", fd.error().message)};
    usleep(5000);
  }
  if (auto sfd = connect_unix(m_.dir / "agent-serial.sock")) serial_fd_ = *sfd;
  return {};
}

Result<Reached> QemuLauncher::boot(std::chrono::seconds timeout, const agent::Client::Watchdog& watchdog,
                                   const std::function<bool()>& fell_back) {
  TRACEBED_TRY(spawn());
  TRACEBED_TRY(connect_agent_socket(watchdog));
  // While the agent is awaited, the watchdog also notices /init falling
  // back to the serial port.
  bool fallback = false;
  auto booting = [&]() -> Status {
    TRACEBED_TRY(watchdog());
    if (!fallback && fell_back()) {
      fallback = true;
      return Error{"serial fallback"};
    }
    return {};
  };
  auto client = std::make_unique<agent::Client>(fd_, booting);
  auto hello = client->hello(timeout);
  if (!hello && fallback && serial_fd_ >= 0) {
    // The agent sets the tty raw only once it runs; bytes that arrive before
    // may be echoed back by the line discipline. Drain and retry a few times.
    for (int attempt = 0; attempt < 5; ++attempt) {
      usleep(500000);
      char junk[4096];
      while (read(serial_fd_, junk, sizeof junk) > 0) {
      }
      client = std::make_unique<agent::Client>(serial_fd_, watchdog);
      hello = client->hello(attempt < 4 ? std::chrono::seconds(5) : timeout);
      if (hello) break;
    }
  }
  if (!hello) return hello.error();
  Reached r;
  r.client = std::make_unique<agent::Client>(fallback ? serial_fd_ : fd_, watchdog);
  r.hello = *hello;
  r.on_serial = fallback;
  return r;
}

// Starts QEMU with `-incoming defer`, waiting until the agent socket is
// connected (so the restored virtio-serial port finds its host there),
// then loads the state; the agent answers as it did when saved.
Result<std::unique_ptr<agent::Client>> QemuLauncher::restore(const SnapshotFiles& files,
                                                             const agent::Client::Watchdog& watchdog) {
  argv_.insert(argv_.end(), {"-incoming", "defer"});
  TRACEBED_TRY(spawn());
  TRACEBED_TRY(connect_agent_socket(watchdog));
  TRACEBED_ASSIGN_OR_RETURN(Qmp qmp, Qmp::connect(m_.dir / "qmp.sock", 10s));
  TRACEBED_ASSIGN_OR_RETURN(std::string uri, migration_uri_from(files.state));
  TRACEBED_TRY(qmp.execute("migrate-incoming", {{"uri", uri}}));
  TRACEBED_TRY(qmp.wait_for_migration(60s));
  // The saved guest was stopped, so the restored one waits for cont.
  TRACEBED_TRY(qmp.execute("cont"));
  return std::make_unique<agent::Client>(fd_, watchdog);
}

// Stop, migrate to a file, cont. The guest is idle (the agent waits for
// its next request) and goes on as if nothing happened.
Status QemuLauncher::save(const fs::path& partial) {
  TRACEBED_ASSIGN_OR_RETURN(Qmp qmp, Qmp::connect(m_.dir / "qmp.sock", 10s));
  // QEMU throttles migration to 32 MiB/s by default (MAX_THROTTLE).
  TRACEBED_TRY(qmp.execute("migrate-set-parameters", {{"max-bandwidth", int64_t{1} << 40}}));
  TRACEBED_TRY(qmp.execute("stop"));
  TRACEBED_ASSIGN_OR_RETURN(std::string uri, migration_uri_to(partial));
  Status saved;
  if (auto started = qmp.execute("migrate", {{"uri", uri}}); !started) saved = started.error();
  else saved = qmp.wait_for_migration(120s);
  if (saved) saved = qmp.wait_until_migration_finalized(30s);
  // The source resumes whether or not the stream was written; a guest that
  // does not is discarded by the caller.
  TRACEBED_TRY(qmp.execute("cont"));
  return saved;
}

std::string QemuLauncher::end_reason() {
  std::string err;
  if (auto text = read_text_file(m_.dir / "qemu.log")) {
    err = console_tail(*text, 10);
    while (!err.empty() && err.back() == '\n') err.pop_back();
  }
  return fmt::format("QEMU {} ({} guest){}{}", qemu_.how_it_ended(), m_.kernel.name, err.empty() ? "" : ": ", err);
}

}  // namespace

std::unique_ptr<Launcher> internal::make_qemu_launcher() { return std::make_unique<QemuLauncher>(); }

}  // namespace tracebed::vm
