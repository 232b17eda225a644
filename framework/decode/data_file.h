// Bounded positional reads and read-only mappings of a trace.dat: a range
// past the end is an error that names its offset, never a short read.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "framework/base/result.h"

namespace tracebed::decode {

// A trace.dat opened for positional reads, shared by the reader and its streams.
class DataFile {
 public:
  static Result<std::shared_ptr<DataFile>> open(const std::string& path);
  ~DataFile();
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads exactly out.size() bytes at `offset`. A range past the end is an
  // Error naming the offset: "offset 0x..: <what>: N bytes exceed file size M".
  Status read(uint64_t offset, std::span<uint8_t> out, std::string_view what) const;
  // `size` bytes at `offset`, mapped read-only; the mapping lives as long as
  // the pointer. Fails (the caller then reads) where mmap does, or when the
  // file no longer holds the range.
  Result<std::shared_ptr<const uint8_t>> map(uint64_t offset, uint64_t size, std::string_view what) const;

 private:
  DataFile(int fd, uint64_t size, std::string path) : fd_(fd), size_(size), path_(std::move(path)) {}
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string path_;
};

}  // namespace tracebed::decode
