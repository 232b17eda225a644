#include "framework/vm/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tracebed::vm {

using Clock = std::chrono::steady_clock;

Result<ProcessResult> run_process(const std::vector<std::string>& argv, std::chrono::seconds timeout, Output output,
                                  const std::filesystem::path& cwd,
                                  const std::function<void(std::string_view)>& on_output) {
  if (argv.empty()) return Error{"run_process: empty command"};
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) < 0) return Error{fmt::format("{}: pipe: {}", argv[0], std::strerror(errno))};
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) < 0) return Error{fmt::format("{}: pipe: {}", argv[0], std::strerror(errno))};
  std::vector<char*> av;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  av.push_back(nullptr);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Error{fmt::format("{}: fork: {}", argv[0], std::strerror(errno))};
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    setpgid(0, 0);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    if (output != Output::to_stderr) {
      dup2(pipefd[1], 1);
      dup2(pipefd[1], 2);
    } else {
      dup2(2, 1);
    }
    if (!cwd.empty() && chdir(cwd.c_str()) < 0) {
      int e = errno;
      (void)!write(errpipe[1], &e, sizeof e);
      _exit(127);
    }
    execvp(av[0], av.data());
    int e = errno;
    (void)!write(errpipe[1], &e, sizeof e);
    _exit(127);
  }
  close(pipefd[1]);
  close(errpipe[1]);
  int exec_err = 0;
  bool exec_failed = read(errpipe[0], &exec_err, sizeof exec_err) == sizeof exec_err;
  close(errpipe[0]);

  ProcessResult result;
  auto deadline = Clock::now() + timeout;
  bool timed_out = false;
  for (;;) {
    pollfd pfd{pipefd[0], POLLIN, 0};
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (left <= 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      break;
    }
    int rc = poll(&pfd, 1, left);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    char buf[16384];
    ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buf, static_cast<size_t>(n));
    if (output == Output::tee) (void)!write(2, buf, static_cast<size_t>(n));
    if (on_output) on_output(std::string_view(buf, static_cast<size_t>(n)));
  }
  close(pipefd[0]);
  int status = 0;
  if (timed_out) {
    waitpid(pid, &status, 0);
    return Error{fmt::format("{} did not finish within {} s", argv[0], timeout.count())};
  }
  // The pipe closes when the tool exits, unless it left a child holding it:
  // bound the wait by the same deadline.
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (Clock::now() >= deadline) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      return Error{fmt::format("{} did not finish within {} s", argv[0], timeout.count())};
    }
    usleep(10000);
  }
  if (exec_failed) return Error{fmt::format("cannot run {}: {}", argv[0], std::strerror(exec_err))};
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::filesystem::path cache_dir() {
  if (const char* c = std::getenv("TRACEBED_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "tracebed";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "tracebed";
}

std::string content_hash(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

Result<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno))};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view data) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  auto tmp = path;
  tmp += fmt::format(".tmp{}", getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) return Error{fmt::format("{}: write failed", tmp.string())};
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{fmt::format("{}: rename: {}", path.string(), ec.message())};
  return {};
}

void progress(std::string_view message) {
  std::fflush(stdout);
  fmt::print(stderr, "tracebed: {}\n", message);
}

}  // namespace tracebed::vm
