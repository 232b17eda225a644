#include "framework/vm/guests/boot_history.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;

fs::path boot_history_file(const std::string& kernel, const std::string& accel) {
  return cache_dir() / "boot-times" / (content_hash(kernel + "\n" + accel) + ".txt");
}

std::optional<double> slowest_cold_boot(const std::string& kernel, const std::string& accel) {
  auto text = read_text_file(boot_history_file(kernel, accel));
  if (!text) return std::nullopt;
  char* end = nullptr;
  double seconds = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || !std::isfinite(seconds) || seconds <= 0) return std::nullopt;
  return seconds;
}

void record_cold_boot(const std::string& kernel, const std::string& accel, double seconds) {
  if (!std::isfinite(seconds) || seconds <= 0) return;
  double slowest = std::max(seconds, slowest_cold_boot(kernel, accel).value_or(0));
  fs::path file = boot_history_file(kernel, accel);
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  // The history only sets a timeout: a lost write costs a longer wait, no more.
  (void)write_file_atomic(file, fmt::format("{:.3f}\n{}\n", slowest, kernel));
}

std::chrono::seconds boot_timeout_for(const std::string& kernel, const std::string& accel) {
  if (const char* env = std::getenv("TRACEBED_BOOT_TIMEOUT"); env && *env) {
    if (auto n = base::parse_number<long>(env); n && *n > 0) return std::chrono::seconds(*n);
  }
  auto slowest = slowest_cold_boot(kernel, accel);
  if (!slowest) return kFirstBootTimeout;
  auto wait = std::chrono::seconds(static_cast<long>(std::ceil(*slowest * kBootTimeoutFactor)));
  return std::clamp(wait, kBootTimeoutFloor, kFirstBootTimeout);
}

std::string boot_timeout_rule() {
  return fmt::format("the wait for a guest's agent is {}x the kernel's slowest cold boot here, from {} s to {} s, "
                     "or {} s for a kernel never booted here ($TRACEBED_BOOT_TIMEOUT overrides)",
                     kBootTimeoutFactor, kBootTimeoutFloor.count(), kFirstBootTimeout.count(),
                     kFirstBootTimeout.count());
}

}  // namespace tracebed::vm
