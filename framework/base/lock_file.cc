#include "framework/base/lock_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tracebed::base {

Result<LockFile> LockFile::lock(const std::filesystem::path& path, bool wait) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("lock {}: {}", path.string(), std::strerror(errno))};
  LockFile held(fd);
  int rc;
  while ((rc = flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB))) < 0 && errno == EINTR) {
  }
  if (rc < 0) return Error{fmt::format("lock {}: {}", path.string(), std::strerror(errno))};
  return held;
}

Result<LockFile> LockFile::acquire(const std::filesystem::path& path) { return lock(path, true); }

Result<LockFile> LockFile::try_acquire(const std::filesystem::path& path) { return lock(path, false); }

LockFile& LockFile::operator=(LockFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

LockFile::~LockFile() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tracebed::base
