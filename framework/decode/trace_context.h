// Everything needed to interpret records: event formats by id, the kernel's
// symbols, printk formats, pid -> comm, and the byte order and `long` size of
// the traced kernel. libtraceevent calls this the tep_handle.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/base/bytes.h"
#include "framework/base/result.h"
#include "framework/decode/event_format.h"

namespace tracebed {

struct Symbol {
  std::string_view name;
  std::string_view module;  // empty for the core kernel
  uint64_t address = 0;
};

class TraceContext {
 public:
  Endian endian = Endian::little;
  uint32_t long_size = 8;        // the kernel's long (header_page commit size)
  uint32_t page_size = 4096;     // sub-buffer size
  HeaderPage header_page;

  // Parses and registers one format file; `system` is "ftrace" for ftrace's own.
  Status add_event_format(std::string_view system, std::string_view text, std::string_view origin);
  const EventFormat* event_by_id(uint32_t id) const;
  const EventFormat* event_by_name(std::string_view system, std::string_view name) const;
  const std::vector<std::unique_ptr<EventFormat>>& events() const { return events_; }

  // /proc/kallsyms text ("ffffffff81000000 T _stext [module]" lines).
  void parse_kallsyms(std::string_view text);
  // The symbol at or below addr, if any.
  std::optional<Symbol> lookup_symbol(uint64_t addr) const;
  // The address of the first symbol (by address) with this name; print fmts
  // may name functions where a number is expected.
  std::optional<uint64_t> symbol_address(std::string_view name) const;

  // printk_formats text (`0xffffffff82a0c5d8 : "fmt\n"` lines) for bprint/bputs.
  void parse_printk_formats(std::string_view text);
  std::optional<std::string_view> printk_format(uint64_t addr) const;

  // saved_cmdlines text ("pid comm" lines); plugins may add more as they go.
  void parse_cmdlines(std::string_view text);
  void set_comm(int pid, std::string_view comm);
  std::optional<std::string_view> comm(int pid) const;

  // Offsets of the common fields every event shares, taken from the first
  // format registered (trace-cmd assumes they are the same for every event).
  const Field* common_type() const { return common_type_.size ? &common_type_ : nullptr; }
  const Field* common_pid() const { return common_pid_.size ? &common_pid_ : nullptr; }
  const Field* common_flags() const { return common_flags_.size ? &common_flags_ : nullptr; }
  const Field* common_preempt_count() const { return common_preempt_.size ? &common_preempt_ : nullptr; }

  // The event a record belongs to (via common_type), or null if unknown.
  const EventFormat* event_of(Bytes record) const;

 private:
  std::vector<std::unique_ptr<EventFormat>> events_;
  std::unordered_map<uint32_t, const EventFormat*> by_id_;
  struct KSym { uint64_t address; std::string name; std::string module; };
  std::vector<KSym> kallsyms_;   // sorted by address
  std::unordered_map<uint64_t, std::string> printk_;
  std::unordered_map<int, std::string> comms_;
  Field common_type_, common_pid_, common_flags_, common_preempt_;
};

}  // namespace tracebed
