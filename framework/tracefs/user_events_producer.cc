#include "framework/tracefs/user_events_producer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

namespace tracebed::tracefs {

namespace user_abi {

// include/uapi/linux/user_events.h: DIAG_IOC_MAGIC '*'.
unsigned long ioc_reg() { return _IOWR('*', 0, struct UserReg*); }
unsigned long ioc_del() { return _IOW('*', 1, char*); }
unsigned long ioc_unreg() { return _IOW('*', 2, struct UserUnreg*); }

}  // namespace user_abi

std::string user_reg_flags_str(uint16_t flags) {
  if (flags == 0) return "0";
  std::string out;
  auto add = [&](std::string_view s) { out += (out.empty() ? "" : "|") + std::string(s); };
  if (flags & user_abi::kRegPersist) add("PERSIST");
  if (flags & user_abi::kRegMultiFormat) add("MULTI_FORMAT");
  if (uint16_t rest = flags & ~(user_abi::kRegPersist | user_abi::kRegMultiFormat)) add(fmt::format("{:#x}", rest));
  return out;
}

std::string errno_name(int err) {
  switch (err) {
    case 0: return "OK";
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case EBADF: return "EBADF";
    case ENOMEM: return "ENOMEM";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case EINVAL: return "EINVAL";
    case EMFILE: return "EMFILE";
    case ENOTTY: return "ENOTTY";
    case E2BIG: return "E2BIG";
    case EADDRINUSE: return "EADDRINUSE";
    case ENODEV: return "ENODEV";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ECANCELED: return "ECANCELED";
    default: return fmt::format("errno {}", err);
  }
}

std::string UserCall::message() const {
  if (err == 0) return what + ": ok";
  return fmt::format("{}: {} ({})", what, std::strerror(err), errno_name(err));
}

Result<UserEventsData> UserEventsData::open(std::string_view tracefs_root) {
  std::string path = fmt::format("{}/user_events_data", tracefs_root);
  // O_CLOEXEC: an exec drops the file's references, as it drops the
  // process's enablers (user_events.rst "Unregistering").
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Error{fmt::format("open {}: {} ({})", path, std::strerror(err), errno_name(err))};
  }
  return UserEventsData(fd, path);
}

UserEventsData& UserEventsData::operator=(UserEventsData&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    path_ = std::move(o.path_);
    o.fd_ = -1;
  }
  return *this;
}

void UserEventsData::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

UserRegistration UserEventsData::register_event(std::string_view name_args, void* enable_addr, uint8_t enable_size,
                                                uint8_t enable_bit, uint16_t flags, bool retry_without_flags) {
  std::string args(name_args);  // NUL-terminated for the kernel
  auto attempt = [&](uint16_t f) {
    UserRegistration r;
    user_abi::UserReg reg{};
    reg.size = sizeof(reg);
    reg.enable_bit = enable_bit;
    reg.enable_size = enable_size;
    reg.flags = f;
    reg.enable_addr = reinterpret_cast<uintptr_t>(enable_addr);
    reg.name_args = reinterpret_cast<uintptr_t>(args.c_str());
    r.what = fmt::format("DIAG_IOCSREG \"{}\" (bit {} of the {}-byte word at {}, flags {}) on {}", args, enable_bit,
                         enable_size, enable_addr, user_reg_flags_str(f), path_);
    r.flags = f;
    if (::ioctl(fd_, user_abi::ioc_reg(), &reg) < 0) r.err = errno;
    else r.write_index = reg.write_index;
    return r;
  };
  UserRegistration r = attempt(flags);
  if (r.err == EINVAL && flags != 0 && retry_without_flags) {
    UserRegistration again = attempt(0);
    again.what = r.what + ", refused, then without flags: " + again.what;
    again.retried = again.ok();
    return again;
  }
  return r;
}

UserCall UserEventsData::unregister(void* disable_addr, uint8_t disable_bit) {
  UserCall r;
  user_abi::UserUnreg unreg{};
  unreg.size = sizeof(unreg);
  unreg.disable_bit = disable_bit;
  unreg.disable_addr = reinterpret_cast<uintptr_t>(disable_addr);
  r.what = fmt::format("DIAG_IOCSUNREG (bit {} at {}) on {}", disable_bit, disable_addr, path_);
  if (::ioctl(fd_, user_abi::ioc_unreg(), &unreg) < 0) r.err = errno;
  return r;
}

UserCall UserEventsData::remove(std::string_view name) {
  UserCall r;
  std::string n(name);
  r.what = fmt::format("DIAG_IOCSDEL \"{}\" on {}", n, path_);
  if (::ioctl(fd_, user_abi::ioc_del(), n.c_str()) < 0) r.err = errno;
  return r;
}

UserCall UserEventsData::write(int32_t write_index, std::string_view payload) {
  UserCall r;
  r.what = fmt::format("writev index {} + {} payload bytes to {}", write_index, payload.size(), path_);
  struct iovec io[2];
  io[0].iov_base = &write_index;
  io[0].iov_len = sizeof(write_index);
  io[1].iov_base = const_cast<char*>(payload.data());
  io[1].iov_len = payload.size();
  ssize_t n = ::writev(fd_, io, payload.empty() ? 1 : 2);
  if (n < 0) r.err = errno;
  else if (static_cast<size_t>(n) != sizeof(write_index) + payload.size()) r.err = EIO;
  return r;
}

UserCall UserEventsData::write_bytes(std::string_view bytes) {
  UserCall r;
  r.what = fmt::format("write of {} bytes to {}", bytes.size(), path_);
  ssize_t n = ::write(fd_, bytes.data(), bytes.size());
  if (n < 0) r.err = errno;
  else if (static_cast<size_t>(n) != bytes.size()) r.err = EIO;
  return r;
}

bool user_event_bit(const void* enable_addr, uint8_t enable_size, uint8_t bit) {
  if (enable_size == 8) return (__atomic_load_n(static_cast<const uint64_t*>(enable_addr), __ATOMIC_RELAXED) >> bit) & 1;
  return (__atomic_load_n(static_cast<const uint32_t*>(enable_addr), __ATOMIC_RELAXED) >> bit) & 1;
}

}  // namespace tracebed::tracefs
