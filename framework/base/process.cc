#include "framework/base/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace tracebed::base {

namespace {

using Clock = std::chrono::steady_clock;

// The descriptors the child's stdout and stderr become (-1: /dev/null), and
// the read end the parent drains (-1: nothing to drain).
struct Stdio {
  int out = -1, err = -1;
  int read_end = -1;
  int close_after_spawn[2] = {-1, -1};
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

Result<Stdio> plan_stdio(const std::string& who, const ProcessOptions& o) {
  Stdio s;
  switch (o.output) {
    case Output::to_stderr:
      s.out = s.err = STDERR_FILENO;
      return s;
    case Output::to_file: {
      int fd = ::open(o.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) return Error{fmt::format("{}: cannot create {}: {}", who, o.log.string(), std::strerror(errno))};
      s.out = s.err = s.close_after_spawn[0] = fd;
      return s;
    }
    case Output::capture:
    case Output::capture_stdout:
    case Output::tee:
    case Output::stream: {
      int p[2];
      if (pipe2(p, O_CLOEXEC) < 0) return Error{fmt::format("{}: pipe: {}", who, std::strerror(errno))};
      s.read_end = p[0];
      s.out = s.close_after_spawn[0] = p[1];
      const bool stdout_only = o.output == Output::stream || o.output == Output::capture_stdout;
      s.err = stdout_only ? -1 : p[1];
      return s;
    }
  }
  return Error{fmt::format("{}: unknown output mode", who)};
}

// Forked children always lead a group; spawned ones when a deadline may
// have to kill it (otherwise they stay in ours, where the terminal's ^C
// reaches them).
bool own_group(const ProcessOptions& o) { return o.die_with_parent || o.timeout.count() > 0; }

std::optional<cpu_set_t> first_cpu() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return std::nullopt;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) {
      cpu_set_t pin;
      CPU_ZERO(&pin);
      CPU_SET(c, &pin);
      return pin;
    }
  return std::nullopt;
}

// fork + exec, the child set up with async-signal-safe calls only (the
// parent may have threads). An exec failure comes back over a pipe.
Result<pid_t> spawn_forked(char* const* argv, const ProcessOptions& o, const Stdio& s) {
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) < 0) return Error{fmt::format("{}: pipe: {}", argv[0], std::strerror(errno))};
  std::optional<cpu_set_t> pin = o.one_cpu ? first_cpu() : std::nullopt;
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close_fd(errpipe[0]);
    close_fd(errpipe[1]);
    return Error{fmt::format("{}: fork: {}", argv[0], std::strerror(e))};
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before the line above
    setpgid(0, 0);
    if (pin) sched_setaffinity(0, sizeof *pin, &*pin);
    int null = ::open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO);
    dup2(s.out >= 0 ? s.out : null, STDOUT_FILENO);
    dup2(s.err >= 0 ? s.err : null, STDERR_FILENO);
    if (o.cwd.empty() || chdir(o.cwd.c_str()) == 0) execvp(argv[0], argv);
    int e = errno;
    (void)!::write(errpipe[1], &e, sizeof e);
    _exit(127);
  }
  close_fd(errpipe[1]);
  int exec_err = 0;
  ssize_t n;
  while ((n = ::read(errpipe[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR) {
  }
  close_fd(errpipe[0]);
  if (n == sizeof exec_err) {
    waitpid(pid, nullptr, 0);
    return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(exec_err))};
  }
  return pid;
}

// posix_spawn: glibc reports an exec failure as its return value. The
// child inherits this thread's CPUs when it is made, so one_cpu pins this
// thread for the spawn only.
Result<pid_t> spawn_posix(char* const* argv, const ProcessOptions& o, const Stdio& s) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // dup2 clears close-on-exec, also where a descriptor is dup'ed onto itself.
  if (s.out >= 0)
    posix_spawn_file_actions_adddup2(&actions, s.out, STDOUT_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  if (s.err >= 0)
    posix_spawn_file_actions_adddup2(&actions, s.err, STDERR_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  if (!o.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, o.cwd.c_str());
  // A deadline kills the child's group: what it started goes with it.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (own_group(o)) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  cpu_set_t mine;
  std::optional<cpu_set_t> pin = o.one_cpu ? first_cpu() : std::nullopt;
  if (pin) {
    sched_getaffinity(0, sizeof mine, &mine);
    sched_setaffinity(0, sizeof *pin, &*pin);
  }
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv, environ);
  if (pin) sched_setaffinity(0, sizeof mine, &mine);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(rc))};
  return pid;
}

// Reads the child's output until it closes its end or the deadline passes;
// false when the deadline passed first.
bool drain(int fd, const ProcessOptions& o, std::optional<Clock::time_point> deadline, ProcessResult& r) {
  std::string buf(size_t{1} << 16, '\0');
  for (;;) {
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return false;
      pollfd pfd{fd, POLLIN, 0};
      int rc = poll(&pfd, 1, static_cast<int>(std::min<long long>(left, INT32_MAX)));
      if (rc <= 0) continue;  // EINTR, or the time is up (checked above)
    }
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    std::string_view chunk(buf.data(), static_cast<size_t>(n));
    if (o.output != Output::stream) r.output += chunk;
    if (o.output == Output::tee) (void)!::write(STDERR_FILENO, chunk.data(), chunk.size());
    if (o.on_output) o.on_output(chunk);
  }
}

// Waits for the child; kills it (and its group) at the deadline. A child
// that closed its output may still be running, or may have left a child of
// its own holding it: the deadline bounds both.
void reap(pid_t pid, const ProcessOptions& o, std::optional<Clock::time_point> deadline, bool expired,
          ProcessResult& r) {
  int status = 0;
  rusage usage{};
  auto sleep = std::chrono::milliseconds(1);
  while (!expired) {
    pid_t got = wait4(pid, &status, deadline ? WNOHANG : 0, &usage);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) break;
    if (got == 0 && Clock::now() >= *deadline) {
      expired = true;
    } else if (got == 0) {
      usleep(static_cast<useconds_t>(std::chrono::microseconds(sleep).count()));
      sleep = std::min(sleep * 2, std::chrono::milliseconds(100));
    }
  }
  if (expired) {
    r.timed_out = true;
    if (own_group(o)) kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
    }
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  r.max_rss_kib = usage.ru_maxrss;
}

}  // namespace

Result<ProcessResult> run_process(const std::vector<std::string>& argv, const ProcessOptions& o) {
  if (argv.empty()) return Error{"run_process: empty command"};
  TRACEBED_ASSIGN_OR_RETURN(Stdio stdio, plan_stdio(argv[0], o));
  std::vector<char*> av;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  const auto start = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (o.timeout.count() > 0) deadline = start + o.timeout;
  auto pid = o.die_with_parent ? spawn_forked(av.data(), o, stdio) : spawn_posix(av.data(), o, stdio);
  for (int& fd : stdio.close_after_spawn) close_fd(fd);
  if (!pid) {
    close_fd(stdio.read_end);
    return pid.error();
  }
  ProcessResult r;
  r.pid = *pid;
  bool expired = false;
  if (stdio.read_end >= 0) {
    expired = !drain(stdio.read_end, o, deadline, r);
    close_fd(stdio.read_end);
  }
  reap(*pid, o, deadline, expired, r);
  r.wall = Clock::now() - start;
  return r;
}

Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout, Output output,
                                  const std::filesystem::path& cwd,
                                  const std::function<void(std::string_view)>& on_output) {
  ProcessOptions o;
  o.timeout = timeout;
  o.output = output;
  o.cwd = cwd;
  o.on_output = on_output;
  TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run_process(argv, o));
  if (r.timed_out) return Error{fmt::format("{} did not finish within {} s", argv[0], timeout.count())};
  return r;
}

Result<pid_t> start_process(const std::vector<std::string>& argv, const StartOptions& o) {
  if (argv.empty()) return Error{"start_process: empty command"};
  std::vector<char*> av;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  // The child writes exec's errno here; a successful exec closes it (CLOEXEC).
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) < 0) return Error{fmt::format("{}: pipe: {}", argv[0], std::strerror(errno))};
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(errpipe[0]);
    close(errpipe[1]);
    return Error{fmt::format("{}: fork: {}", argv[0], std::strerror(e))};
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int wanted[3] = {o.stdin_fd, o.stdout_fd, o.stderr_fd};
    for (int target = 0; target < 3; ++target) {
      if (wanted[target] == kInherit) continue;
      int from = wanted[target] == kDevNull ? open("/dev/null", target == 0 ? O_RDONLY : O_WRONLY) : wanted[target];
      if (from >= 0 && from != target) dup2(from, target);
    }
    execvp(av[0], av.data());
    int e = errno;
    (void)!write(errpipe[1], &e, sizeof e);
    _exit(127);
  }
  close(errpipe[1]);
  int e = 0;
  bool failed = read(errpipe[0], &e, sizeof e) == sizeof e;
  close(errpipe[0]);
  if (failed) {
    waitpid(pid, nullptr, 0);
    return Error{fmt::format("cannot start {}: {}", argv[0], std::strerror(e))};
  }
  return pid;
}

Result<std::filesystem::path> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return std::filesystem::absolute(name);
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string_view::npos) end = dirs.size();
    std::filesystem::path candidate = std::filesystem::path(dirs.substr(start, end - start)) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return Error{fmt::format("{} not found on PATH", name)};
}

}  // namespace tracebed::base
