// For tests of what a full or read-only disk does: runs a function in a
// child process with a mount namespace of its own, in which a small tmpfs
// covers a directory. The rest of the system sees nothing of it.
#pragma once

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include <fmt/format.h>

namespace tracebed::base {

struct OnOwnMount {
  std::string setup_error;  // the mount could not be made (not root?): skip
  std::string result;       // what the function returned
};

// `dir` (created if missing) covered by a tmpfs with `options` ("size=16k"),
// made read-only after it is mounted when `read_only`; then `body` runs and
// its string comes back.
inline OnOwnMount run_on_own_mount(const std::filesystem::path& dir, const std::string& options, bool read_only,
                                   const std::function<std::string()>& body) {
  std::filesystem::create_directories(dir);
  int fds[2];
  if (::pipe(fds) != 0) return {"pipe failed", ""};
  const pid_t pid = ::fork();
  if (pid < 0) return {"fork failed", ""};
  if (pid == 0) {
    ::close(fds[0]);
    // "S<why>": no mount; "R<result>": body ran.
    std::string report;
    if (::unshare(CLONE_NEWNS) != 0)
      report = fmt::format("Sunshare(CLONE_NEWNS): {}", std::strerror(errno));
    else if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      report = fmt::format("Smaking / private: {}", std::strerror(errno));
    else if (::mount("tracebed-test", dir.c_str(), "tmpfs", 0, options.c_str()) != 0)
      report = fmt::format("Smount tmpfs {} at {}: {}", options, dir.string(), std::strerror(errno));
    else if (read_only && ::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0)
      report = fmt::format("Sremount read-only: {}", std::strerror(errno));
    else
      report = "R" + body();
    for (size_t done = 0; done < report.size();) {
      const ssize_t n = ::write(fds[1], report.data() + done, report.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (report.empty()) return {fmt::format("the child reported nothing (status {})", status), ""};
  if (report[0] == 'S') return {report.substr(1), ""};
  return {"", report.substr(1)};
}

}  // namespace tracebed::base
