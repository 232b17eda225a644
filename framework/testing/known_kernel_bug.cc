#include "framework/testing/known_kernel_bug.h"

#include <algorithm>

#include <fmt/format.h>

namespace tracebed::testlib {

std::optional<std::string> KnownKernelBug::explains(const tracefs::Features& kernel, std::string_view failure) const {
  bool shown = std::any_of(signs.begin(), signs.end(), [&](std::string_view sign) {
    return !sign.empty() && failure.find(sign) != std::string_view::npos;
  });
  if (!shown) return std::nullopt;
  auto version = kernel.release_version();
  // An unreadable release ({0, 0}) is not taken for an old kernel.
  if (version == std::pair{0, 0} || version >= gone_in) return std::nullopt;
  return fmt::format("known kernel bug on {} (below {}.{}: {}): {}\nthe failure:\n{}", kernel.release(),
                     gone_in.first, gone_in.second, why_gone, summary, failure);
}

}  // namespace tracebed::testlib
