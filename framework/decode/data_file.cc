#include "framework/decode/data_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tracebed::decode {

Result<std::shared_ptr<DataFile>> DataFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open: {}", std::strerror(errno))};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Error{fmt::format("cannot stat: {}", std::strerror(err))};
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error{"is a directory"};
  }
  return std::shared_ptr<DataFile>(new DataFile(fd, static_cast<uint64_t>(st.st_size), path));
}

DataFile::~DataFile() {
  if (fd_ >= 0) ::close(fd_);
}

Status DataFile::read(uint64_t offset, std::span<uint8_t> out, std::string_view what) const {
  if (offset > size_ || out.size() > size_ - offset)
    return error_at(offset, fmt::format("{}: {} bytes exceed file size {}", what, out.size(), size_));
  size_t done = 0;
  // Bounded: each pass reads at least one byte or fails.
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return error_at(offset + done, fmt::format("{}: read failed: {}", what, std::strerror(errno)));
    }
    if (n == 0) return error_at(offset + done, fmt::format("{}: file ended early (was it truncated?)", what));
    done += static_cast<size_t>(n);
  }
  return {};
}

Result<std::shared_ptr<const uint8_t>> DataFile::map(uint64_t offset, uint64_t size, std::string_view what) const {
  if (offset > size_ || size > size_ - offset || size == 0)
    return error_at(offset, fmt::format("{}: {} bytes exceed file size {}", what, size, size_));
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  const size_t length = static_cast<size_t>(offset + size - start);
  // Populated: every caller reads the whole range, and one call maps it
  // cheaper than a fault per 64 KiB.
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd_, static_cast<off_t>(start));
  if (base == MAP_FAILED) return error_at(offset, fmt::format("{}: mmap failed: {}", what, std::strerror(errno)));
  std::shared_ptr<const uint8_t> mapping(static_cast<const uint8_t*>(base),
                                         [length](const uint8_t* p) { ::munmap(const_cast<uint8_t*>(p), length); });
  // A file cut short since it was opened would fault on access, not fail a
  // read: check that the range is still there.
  struct stat st;
  if (::fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) < offset + size)
    return error_at(offset, fmt::format("{}: file ended early (was it truncated?)", what));
  return std::shared_ptr<const uint8_t>(mapping, mapping.get() + (offset - start));
}

}  // namespace tracebed::decode
