// The byte stream the agent client talks over: a file descriptor (a QEMU
// chardev socket, a serial port) or anything else that moves bytes, such as
// a libvirt stream to a guest channel (framework/vm/guests/libvirt_domain.h).
//
// Both calls wait at most `wait` and return 0 when nothing moved yet, so the
// client can ask its watchdog between waits.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "framework/base/result.h"

namespace tracebed::agent {

struct Transfer {
  size_t bytes = 0;
  bool closed = false;  // the peer closed the stream (reads only)
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual Result<Transfer> write_some(const uint8_t* data, size_t size, std::chrono::milliseconds wait) = 0;
  virtual Result<Transfer> read_some(uint8_t* data, size_t size, std::chrono::milliseconds wait) = 0;
};

// A connected, non-blocking file descriptor, which the transport does not own.
class FdTransport : public Transport {
 public:
  explicit FdTransport(int fd) : fd_(fd) {}
  Result<Transfer> write_some(const uint8_t* data, size_t size, std::chrono::milliseconds wait) override;
  Result<Transfer> read_some(uint8_t* data, size_t size, std::chrono::milliseconds wait) override;

 private:
  int fd_;
};

}  // namespace tracebed::agent
