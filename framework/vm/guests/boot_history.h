// How long a kernel's cold boots took, kept in the cache, so that the wait
// for a guest's agent fits the kernel: a few times its slowest boot so far,
// where a fixed 240 s made a kernel that hangs cost four minutes a suite.
//
//   record_cold_boot("debian-6.12", "tcg", 6.8);
//   auto wait = boot_timeout_for("debian-6.12", "tcg");  // 90 s: the floor
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

namespace tracebed::vm {

// The wait for a kernel never booted here (under this accelerator).
inline constexpr std::chrono::seconds kFirstBootTimeout{240};
// A kernel with a history waits kBootTimeoutFactor times its slowest boot,
// but never less than kBootTimeoutFloor: a loaded host slows TCG down by
// more than the history shows.
inline constexpr int kBootTimeoutFactor = 4;
inline constexpr std::chrono::seconds kBootTimeoutFloor{90};

// The slowest cold boot recorded for this kernel and accelerator.
std::optional<double> slowest_cold_boot(const std::string& kernel, const std::string& accel);
void record_cold_boot(const std::string& kernel, const std::string& accel, double seconds);

// $TRACEBED_BOOT_TIMEOUT (whole seconds) when set, else the history's
// wait, else kFirstBootTimeout.
std::chrono::seconds boot_timeout_for(const std::string& kernel, const std::string& accel);

// One line for --help and errors: how the wait is chosen.
std::string boot_timeout_rule();

// Where the history of one kernel lives (for tests).
std::filesystem::path boot_history_file(const std::string& kernel, const std::string& accel);

}  // namespace tracebed::vm
