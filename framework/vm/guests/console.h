// Reading a guest's serial console for kernel faults.
//
// The markers are the kernel's own: "Kernel panic - not syncing"
// (kernel/panic.c), "Oops:" / "general protection fault" (arch/x86/kernel/
// dumpstack.c, traps.c), "BUG:" and "kernel BUG at" (lib/bug.c and friends),
// "WARNING:" (kernel/panic.c __warn), hung tasks ("blocked for more than"),
// the OOM killer ("invoked oom-killer:", mm/oom_kill.c dump_header).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tracebed::vm {

enum class FaultKind { panic, oops, bug, warning, hung_task, out_of_memory };

std::string_view fault_name(FaultKind kind);

struct ConsoleFault {
  FaultKind kind;
  std::string line;     // the line that matched
  std::string excerpt;  // a few lines before, and what followed
  size_t offset = 0;    // byte offset of the line in the console text
  size_t end = 0;       // byte offset just past the line's newline
  // Panic, Oops and BUG leave the kernel unusable; a WARNING, a hung task
  // or the OOM killer's work does not.
  bool fatal() const {
    return kind != FaultKind::warning && kind != FaultKind::hung_task && kind != FaultKind::out_of_memory;
  }
};

// Finds the first fault in console text at or after `from`.
std::optional<ConsoleFault> find_fault(std::string_view console, size_t from = 0);

// Whether the kernel halted instead of powering off: x86 without ACPI (or
// with acpi=off) has no pm_power_off, so `poweroff -f` ends in
// kernel_halt(), which prints "reboot: Power off not available: System
// halted instead" (kernel/reboot.c) and leaves the CPUs halted; QEMU never
// exits by itself. A plain halt prints "reboot: System halted". Looks at or
// after `from`.
bool halted_instead_of_power_off(std::string_view console, size_t from = 0);

// The last `lines` lines of the console (for "the guest hung" messages).
std::string console_tail(std::string_view console, size_t lines = 30);

}  // namespace tracebed::vm
