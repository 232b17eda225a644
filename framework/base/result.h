// Result<T>: a value or an Error that says what went wrong and where.
//
// The decoder never throws on bad input; every parser returns a Result so the
// caller can print one line ("FILE: offset 0x1f40: ...") and exit non-zero.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace tracebed {

struct Error {
  std::string message;  // complete sentence fragment: what and where

  // Prefixes context, e.g. Error{"bad magic"}.within("trace.dat offset 0x0").
  Error within(std::string_view where) const {
    return Error{fmt::format("{}: {}", where, message)};
  }
};

// Builds an Error with a byte offset, formatted the same way everywhere.
inline Error error_at(uint64_t offset, std::string_view what) {
  return Error{fmt::format("offset {:#x}: {}", offset, what)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}      // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  // By value: `for (auto& x : f().value())` must not dangle.
  T value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT
  static Status success() { return {}; }

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace tracebed

// Propagates an error from an expression returning Result/Status.
#define TRACEBED_TRY(expr)                                  \
  do {                                                      \
    auto tracebed_try_result_ = (expr);                     \
    if (!tracebed_try_result_.ok())                         \
      return tracebed_try_result_.error();                  \
  } while (0)

#define TRACEBED_CONCAT_INNER_(a, b) a##b
#define TRACEBED_CONCAT_(a, b) TRACEBED_CONCAT_INNER_(a, b)
// TRACEBED_ASSIGN_OR_RETURN(auto x, parse()): binds the value or returns the error.
#define TRACEBED_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto TRACEBED_CONCAT_(tracebed_r_, __LINE__) = (expr);                       \
  if (!TRACEBED_CONCAT_(tracebed_r_, __LINE__).ok())                           \
    return TRACEBED_CONCAT_(tracebed_r_, __LINE__).error();                    \
  lhs = std::move(TRACEBED_CONCAT_(tracebed_r_, __LINE__)).value()
