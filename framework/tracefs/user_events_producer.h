// The producer side of user_events: the stable ABI of Linux 6.4+
// (include/uapi/linux/user_events.h) over user_events_data.
//
//   auto data = UserEventsData::open();            // /sys/kernel/tracing/user_events_data
//   alignas(8) static uint32_t enabled = 0;        // the kernel sets bit 31 while traced
//   auto reg = data->register_event("test u32 count", &enabled, 4, 31);
//   if (user_event_bit(&enabled, 4, 31)) data->write(reg.write_index, payload);
//
// Every call returns what it attempted and the errno, so a refusal reads as
// "DIAG_IOCSREG \"test u32 count\" (bit 31 of the 4-byte word at 0x4c6f10,
// flags 0): Address already in use (EADDRINUSE)".
//
// The structs and ioctl numbers are defined here: build hosts often lack
// linux/user_events.h, and only its ABI (fixed since 6.4) is needed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "framework/base/result.h"

namespace tracebed::tracefs {

namespace user_abi {

// enum user_reg_flag.
inline constexpr uint16_t kRegPersist = 1u << 0;      // USER_EVENT_REG_PERSIST (needs CAP_PERFMON)
inline constexpr uint16_t kRegMultiFormat = 1u << 1;  // USER_EVENT_REG_MULTI_FORMAT
inline constexpr uint16_t kRegMax = 1u << 2;          // USER_EVENT_REG_MAX: this and above are refused

struct __attribute__((packed)) UserReg {
  uint32_t size;
  uint8_t enable_bit;
  uint8_t enable_size;
  uint16_t flags;
  uint64_t enable_addr;
  uint64_t name_args;
  uint32_t write_index;
};
static_assert(sizeof(UserReg) == 28);

struct __attribute__((packed)) UserUnreg {
  uint32_t size;
  uint8_t disable_bit;
  uint8_t reserved;
  uint16_t reserved2;
  uint64_t disable_addr;
};
static_assert(sizeof(UserUnreg) == 16);

// _IOWR('*', 0, struct user_reg *) and friends: the size field of these
// numbers is that of a pointer, as the header spells them.
unsigned long ioc_reg();
unsigned long ioc_del();
unsigned long ioc_unreg();

}  // namespace user_abi

// "PERSIST|MULTI_FORMAT", "0", or the hex of unknown bits.
std::string user_reg_flags_str(uint16_t flags);
// "EADDRINUSE" for EADDRINUSE; "errno 200" when unnamed.
std::string errno_name(int err);

// The outcome of one call: errno 0 on success, and what was attempted.
struct UserCall {
  int err = 0;
  std::string what;
  bool ok() const { return err == 0; }
  // "what: strerror (ENAME)".
  std::string message() const;
  Error error() const { return Error{message()}; }
};

struct UserRegistration : UserCall {
  uint32_t write_index = 0;
  uint16_t flags = 0;         // as granted (0 after the retry without flags)
  bool retried = false;       // the kernel refused the flags and a retry without them worked
};

// An open user_events_data. Move-only; closing drops the file's references
// to its events (an event without references and without PERSIST goes).
class UserEventsData {
 public:
  static Result<UserEventsData> open(std::string_view tracefs_root = "/sys/kernel/tracing");
  UserEventsData(UserEventsData&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  UserEventsData& operator=(UserEventsData&& o) noexcept;
  UserEventsData(const UserEventsData&) = delete;
  UserEventsData& operator=(const UserEventsData&) = delete;
  ~UserEventsData() { close(); }

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // DIAG_IOCSREG. `enable_addr` must stay valid and writable while
  // registered (the kernel writes the bit there). With
  // retry_without_flags, an EINVAL for non-zero flags is retried with none,
  // as user_events.rst asks of callers on older kernels.
  UserRegistration register_event(std::string_view name_args, void* enable_addr, uint8_t enable_size,
                                  uint8_t enable_bit, uint16_t flags = 0, bool retry_without_flags = false);
  // DIAG_IOCSUNREG: stop updating this address and bit (the kernel clears it).
  UserCall unregister(void* disable_addr, uint8_t disable_bit);
  // DIAG_IOCSDEL: delete an event by name (every format of it); EBUSY while
  // anyone holds a reference.
  UserCall remove(std::string_view name);
  // writev: the write index, then the payload; the kernel's errno otherwise
  // (EBADF while nothing is attached, ENOENT for an unknown index, EINVAL
  // for a short payload, EFAULT for a bad dynamic location).
  UserCall write(int32_t write_index, std::string_view payload);
  // write(2) of exactly these bytes (index included): for short writes.
  UserCall write_bytes(std::string_view bytes);

  void close();

 private:
  UserEventsData(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// The enable bit, read atomically (the kernel sets and clears it with
// atomic bit operations on a long-aligned word).
bool user_event_bit(const void* enable_addr, uint8_t enable_size, uint8_t bit);

}  // namespace tracebed::tracefs
