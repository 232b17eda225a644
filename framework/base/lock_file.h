// An exclusive flock(2) on a file, held for the object's lifetime: two
// processes that fill the same cache entry take turns, and the second finds
// the work done. The lock goes with the descriptor, so a process that dies
// holding it releases it.
//
//   TRACEBED_ASSIGN_OR_RETURN(base::LockFile lock, base::LockFile::acquire(root.parent_path() / ".lock"));
//   if (complete(root)) return ...;  // filled while we waited
#pragma once

#include <filesystem>

#include "framework/base/result.h"

namespace tracebed::base {

class LockFile {
 public:
  // Creates the file (and its directory) if needed and waits for the lock.
  static Result<LockFile> acquire(const std::filesystem::path& path);
  // The lock if no one else holds it; else an Error naming the path.
  static Result<LockFile> try_acquire(const std::filesystem::path& path);

  LockFile(LockFile&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  LockFile& operator=(LockFile&& other) noexcept;
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile();

 private:
  explicit LockFile(int fd) : fd_(fd) {}
  static Result<LockFile> lock(const std::filesystem::path& path, bool wait);
  int fd_ = -1;
};

}  // namespace tracebed::base
