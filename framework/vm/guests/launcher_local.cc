// The local launcher (launcher.h): no guest; the agent runs on this machine,
// whose own kernel is tested (tracebed test --local).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "framework/base/install_layout.h"
#include "framework/base/process.h"
#include "framework/vm/guests/launcher.h"

namespace tracebed::vm {

namespace fs = std::filesystem;

namespace {

class LocalLauncher final : public Launcher {
 public:
  ~LocalLauncher() override {
    kill();
    if (fd_ >= 0) close(fd_);
  }
  std::string_view name() const override { return "local"; }
  bool boots_a_kernel() const override { return false; }
  Status prepare(const Machine& m) override {
    m_ = m;
    return {};
  }
  std::vector<std::string> command() const override { return argv_; }
  std::string snapshot_key() const override { return ""; }
  std::string snapshot_version() const override { return ""; }
  Result<Reached> boot(std::chrono::seconds timeout, const agent::Client::Watchdog& watchdog,
                       const std::function<bool()>& fell_back) override;
  Result<std::unique_ptr<agent::Client>> restore(const SnapshotFiles&, const agent::Client::Watchdog&) override {
    return Error{"the local launcher takes no snapshots"};
  }
  Status save(const fs::path&) override { return Error{"the local launcher takes no snapshots"}; }
  bool running() override { return agent_.running(); }
  void kill() override { agent_.kill(); }
  std::string end_reason() override {
    return fmt::format("the local agent exited (status {:#x}; log {})", agent_.status, (m_.dir / "agent.log").string());
  }
  std::string where() const override { return "this machine"; }

 private:
  Machine m_;
  std::vector<std::string> argv_;
  internal::ChildProcess agent_;
  int fd_ = -1;
};

Result<Reached> LocalLauncher::boot(std::chrono::seconds timeout, const agent::Client::Watchdog& watchdog,
                                    const std::function<bool()>&) {
  fs::path agent = m_.options.image.agent;
  if (agent.empty()) {
    const char* env = std::getenv("TRACEBED_AGENT");
    agent = env && *env ? fs::path(env) : base::installed_or_built(TRACEBED_AGENT_PATH);
  }
  if (access(agent.c_str(), X_OK) != 0)
    return Error{fmt::format("agent {} not found (build the tracebed-agent target or set TRACEBED_AGENT)",
                             agent.string())};
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return Error{fmt::format("socketpair: {}", std::strerror(errno))};
  int log = open((m_.dir / "agent.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  // "--local": serve on stdin, and a shutdown request ends only the agent.
  argv_ = {agent.string(), "--local"};
  auto pid = base::start_process(
      argv_, {.stdin_fd = sv[1], .stdout_fd = base::kDevNull, .stderr_fd = log >= 0 ? log : base::kDevNull});
  if (log >= 0) close(log);
  close(sv[1]);
  if (!pid) {
    close(sv[0]);
    return pid.error();
  }
  fcntl(sv[0], F_SETFL, O_NONBLOCK);
  fd_ = sv[0];
  agent_.pid = *pid;
  auto client = std::make_unique<agent::Client>(fd_, watchdog);
  auto hello = client->hello(timeout);
  if (!hello)
    return Error{fmt::format("the local agent did not answer: {} (log: {})", hello.error().message,
                             (m_.dir / "agent.log").string())};
  return Reached{std::move(client), *hello, false};
}

}  // namespace

std::unique_ptr<Launcher> internal::make_local_launcher() { return std::make_unique<LocalLauncher>(); }

}  // namespace tracebed::vm
