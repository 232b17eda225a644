// Dynamic probe events: kprobes, uprobes, eprobes, fprobes and tprobes, as
// builders that show exactly what they write, a move-only DynamicEvent that
// removes what it created, and the lines read back from dynamic_events.
//
//   auto open = KprobeDef::at("tbopen", "do_sys_openat2")
//                 .arg(FetchArg::arg(1).name("dfd"))
//                 .arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring()));
//   open.command()         // "p:tbopen do_sys_openat2 dfd=$arg1 path=+0($arg2):ustring"
//   open.remove_command()  // "-:kprobes/tbopen"
//   auto ev = DynamicEvent::create(fs, open);   // appended to dynamic_events
//   ev->enable(inst);                            // events/kprobes/tbopen/enable
//   ...                                          // ~DynamicEvent: disable, "-:kprobes/tbopen"
//
// Written syntax (Documentation/trace/kprobetrace.rst, uprobetracer.rst,
// eprobetrace.rst, fprobetrace.rst; README "event-definitions"):
//   p[:[GRP/]EVENT] [MOD:]SYM[+offs]|MEMADDR [FETCHARGS]
//   r[MAXACTIVE][:[GRP/]EVENT] [MOD:]SYM[+0] [FETCHARGS]
//   p[:[GRP/]EVENT] [MOD:]SYM[+0]%return [FETCHARGS]
//   p|r[:[GRP/]EVENT] PATH:OFFSET[%return][(REF_CTR_OFFSET)] [FETCHARGS]
//   e[:[GRP/]EVENT] SYS.EVENT [FETCHARGS] [if FILTER]
//   f[MAXACTIVE][:[GRP/]EVENT] SYM[%return] [FETCHARGS]
//   t[:[GRP/]EVENT] TRACEPOINT [FETCHARGS]
//   -:[GRP/]EVENT
// Read back (kernel/trace/trace_kprobe.c trace_kprobe_show and the
// uprobe/eprobe/fprobe twins): the group is always there, arguments carry
// their names ("arg1=$retval"), uprobe offsets are zero-padded hex.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {

// The TYPE of FETCHARG:TYPE (kprobetrace.rst "Types").
class FetchType {
 public:
  static FetchType u8() { return FetchType("u8"); }
  static FetchType u16() { return FetchType("u16"); }
  static FetchType u32() { return FetchType("u32"); }
  static FetchType u64() { return FetchType("u64"); }
  static FetchType s8() { return FetchType("s8"); }
  static FetchType s16() { return FetchType("s16"); }
  static FetchType s32() { return FetchType("s32"); }
  static FetchType s64() { return FetchType("s64"); }
  static FetchType x8() { return FetchType("x8"); }
  static FetchType x16() { return FetchType("x16"); }
  static FetchType x32() { return FetchType("x32"); }
  static FetchType x64() { return FetchType("x64"); }
  static FetchType character() { return FetchType("char"); }  // README "char" (6.5+)
  static FetchType string() { return FetchType("string"); }
  static FetchType ustring() { return FetchType("ustring"); }
  static FetchType symbol() { return FetchType("symbol"); }
  static FetchType symstr() { return FetchType("symstr"); }  // README "symstr" (6.1+)
  // b<bit-width>@<bit-offset>/<container-size>: "b4@3/32".
  static FetchType bitfield(unsigned width, unsigned offset, unsigned container_bits);

  // TYPE[N]: an array of N (< 64) elements, memory fetchargs only.
  FetchType array(unsigned n) const;
  const std::string& str() const { return s_; }
  bool operator==(const FetchType&) const = default;

 private:
  explicit FetchType(std::string s) : s_(std::move(s)) {}
  std::string s_;
};

// One fetch argument: [NAME=]FETCHARG[:TYPE].
class FetchArg {
 public:
  static FetchArg reg(std::string_view name);  // %ax ("ax" or "%ax")
  static FetchArg arg(unsigned n);             // $argN, N >= 1 (entry probes)
  static FetchArg all_args() { return FetchArg("$arg*"); }  // BTF: every argument (fprobe, tprobe)
  static FetchArg retval() { return FetchArg("$retval"); }
  static FetchArg stack(unsigned n);           // $stackN
  static FetchArg stack() { return FetchArg("$stack"); }
  static FetchArg comm() { return FetchArg("$comm"); }
  static FetchArg field(std::string_view name);  // $FIELD of the attached event (eprobes)
  static FetchArg symbol(std::string_view sym, int64_t offset = 0);  // @SYM[+|-offs]
  static FetchArg address(uint64_t addr);      // @ADDR, in hex
  static FetchArg file_offset(uint64_t offset);  // @+OFFSET in the probed file (uprobes)
  static FetchArg immediate(int64_t value);    // \IMM
  static FetchArg immediate(std::string_view text);  // \"text"
  // A BTF argument or field by name: "count", "prev->pid", "$retval->name"
  // (fprobes and tprobes on kernels with BTF args).
  static FetchArg btf(std::string_view expr) { return FetchArg(std::string(expr)); }
  // Anything else, as written: what the builders do not cover.
  static FetchArg raw(std::string_view text) { return FetchArg(std::string(text)); }

  // +|-OFFS(this): memory at this plus offset; +|-uOFFS for user memory.
  FetchArg deref(int64_t offset) const;
  FetchArg user_deref(int64_t offset) const;

  FetchArg& name(std::string_view n) {
    name_ = n;
    return *this;
  }
  FetchArg& type(FetchType t) {
    type_ = std::move(t);
    return *this;
  }

  // "dfd=$arg1", "path=+0($arg2):ustring", "+u8(%si):x16[4]".
  std::string str() const;
  const std::string& fetch() const { return fetch_; }  // without name and type

 private:
  explicit FetchArg(std::string fetch) : fetch_(std::move(fetch)) {}
  std::string fetch_;
  std::string name_;
  std::optional<FetchType> type_;
};

// user: a user_events event ("u:NAME fields", shown once persistent or
// registered; user_events.h makes them).
enum class DynEventKind { kprobe, kretprobe, uprobe, uretprobe, eprobe, fprobe, fexit, tprobe, synth, user, unknown };
std::string_view to_string(DynEventKind k);

// What the builders hand to DynamicEvent::create.
struct DynEventDef {
  DynEventKind kind = DynEventKind::unknown;
  std::string group;    // as the kernel will name it (the default when unset)
  std::string event;
  std::string command;  // the definition line
  std::string remove_command() const { return "-:" + group + "/" + event; }
};

// The parts every probe definition shares: group, event name, arguments.
template <typename Self>
class ProbeDef {
 public:
  // The group; unset, the kernel's default ("kprobes", "uprobes", "eprobes",
  // "fprobes", "tracepoints") and nothing written.
  Self& group(std::string_view g) {
    group_ = g;
    return self();
  }
  Self& arg(FetchArg a) {
    args_.push_back(std::move(a));
    return self();
  }
  std::string group() const { return group_.empty() ? std::string(self().default_group()) : group_; }
  const std::string& event() const { return event_; }
  const std::vector<FetchArg>& args() const { return args_; }

  // "-:GRP/EVENT".
  std::string remove_command() const { return "-:" + group() + "/" + event_; }
  DynEventDef def() const { return {self().kind(), group(), event_, self().command()}; }

 protected:
  explicit ProbeDef(std::string_view event) : event_(event) {}
  // "p:EVENT" or "p:GRP/EVENT" after the type letters.
  std::string head(std::string_view type) const {
    return std::string(type) + ":" + (group_.empty() ? "" : group_ + "/") + event_;
  }
  std::string args_str() const {
    std::string s;
    for (const FetchArg& a : args_) s += " " + a.str();
    return s;
  }
  std::string group_;
  std::string event_;
  std::vector<FetchArg> args_;

 private:
  Self& self() { return static_cast<Self&>(*this); }
  const Self& self() const { return static_cast<const Self&>(*this); }
};

// kprobe_events: p/r on a kernel symbol or address.
class KprobeDef : public ProbeDef<KprobeDef> {
 public:
  // p:EVENT SYM[+offs]
  static KprobeDef at(std::string_view event, std::string_view symbol, uint64_t offset = 0);
  // p:EVENT 0xADDR
  static KprobeDef at_address(std::string_view event, uint64_t address);
  // r:EVENT SYM: a return probe (kretprobe).
  static KprobeDef on_return(std::string_view event, std::string_view symbol);

  // MOD:SYM.
  KprobeDef& module(std::string_view m) {
    module_ = m;
    return *this;
  }
  // r<MAXACTIVE>: instances of the function probed at once (return probes).
  KprobeDef& maxactive(unsigned n) {
    maxactive_ = n;
    return *this;
  }
  // Write a return probe as "p:EVENT SYM%return" (README "place
  // (kretprobe)", 5.7+) instead of "r:EVENT SYM".
  KprobeDef& percent_return() {
    percent_return_ = true;
    return *this;
  }

  std::string command() const;
  DynEventKind kind() const { return is_return_ ? DynEventKind::kretprobe : DynEventKind::kprobe; }
  static constexpr std::string_view default_group() { return "kprobes"; }

 private:
  using ProbeDef::ProbeDef;
  std::string place_;
  std::string module_;
  bool is_return_ = false;
  bool percent_return_ = false;
  std::optional<unsigned> maxactive_;
};

// uprobe_events: p/r at a file offset of an executable or library.
// find_elf_function (elf_symbols.h) gives the offset of a function.
class UprobeDef : public ProbeDef<UprobeDef> {
 public:
  // p:EVENT PATH:0xOFFSET
  static UprobeDef at(std::string_view event, std::string_view path, uint64_t offset);
  // r:EVENT PATH:0xOFFSET (uretprobe)
  static UprobeDef on_return(std::string_view event, std::string_view path, uint64_t offset);

  // PATH:0xOFFSET(0xREF): the reference counter of an SDT semaphore.
  UprobeDef& ref_ctr_offset(uint64_t offset) {
    ref_ctr_ = offset;
    return *this;
  }
  // Write the return probe as "p:EVENT PATH:0xOFFSET%return".
  UprobeDef& percent_return() {
    percent_return_ = true;
    return *this;
  }

  std::string command() const;
  DynEventKind kind() const { return is_return_ ? DynEventKind::uretprobe : DynEventKind::uprobe; }
  static constexpr std::string_view default_group() { return "uprobes"; }

 private:
  using ProbeDef::ProbeDef;
  std::string path_;
  uint64_t offset_ = 0;
  std::optional<uint64_t> ref_ctr_;
  bool is_return_ = false;
  bool percent_return_ = false;
};

// dynamic_events: an event probe on an existing event, whose fields are
// FetchArg::field("name").
class EprobeDef : public ProbeDef<EprobeDef> {
 public:
  // e:EVENT SYSTEM.ATTACHED
  static EprobeDef on(std::string_view event, std::string_view system, std::string_view attached);

  // "if FILTER" on the attached event's fields.
  EprobeDef& filter(std::string_view expr) {
    filter_ = expr;
    return *this;
  }

  std::string command() const;
  DynEventKind kind() const { return DynEventKind::eprobe; }
  static constexpr std::string_view default_group() { return "eprobes"; }

 private:
  using ProbeDef::ProbeDef;
  std::string target_;
  std::string filter_;
};

// dynamic_events: a probe on a function's entry or exit through fprobe.
class FprobeDef : public ProbeDef<FprobeDef> {
 public:
  // f:EVENT SYM
  static FprobeDef entry(std::string_view event, std::string_view function);
  // f:EVENT SYM%return
  static FprobeDef exit(std::string_view event, std::string_view function);

  // f<MAXACTIVE> (exit probes).
  FprobeDef& maxactive(unsigned n) {
    maxactive_ = n;
    return *this;
  }

  std::string command() const;
  DynEventKind kind() const { return is_return_ ? DynEventKind::fexit : DynEventKind::fprobe; }
  static constexpr std::string_view default_group() { return "fprobes"; }

 private:
  using ProbeDef::ProbeDef;
  std::string function_;
  bool is_return_ = false;
  std::optional<unsigned> maxactive_;
};

// dynamic_events: a probe on a tracepoint, with its raw (BTF) arguments.
class TprobeDef : public ProbeDef<TprobeDef> {
 public:
  // t:EVENT TRACEPOINT
  static TprobeDef on(std::string_view event, std::string_view tracepoint);

  std::string command() const;
  DynEventKind kind() const { return DynEventKind::tprobe; }
  static constexpr std::string_view default_group() { return "tracepoints"; }

 private:
  using ProbeDef::ProbeDef;
  std::string tracepoint_;
};

// A dynamic event this object created: when it dies it is disabled where
// it was enabled, at the top level and (if the kernel says it is busy) in
// every instance, then removed with "-:GRP/EVENT" through the file it was
// written to. Move-only; release() leaves it in the kernel.
class DynamicEvent {
 public:
  // Appends def.command to dynamic_events where the kernel has it, else to
  // kprobe_events (kprobes) or uprobe_events (uprobes). A rejected
  // definition carries the kernel's error_log entry.
  static Result<DynamicEvent> create(const Tracefs& fs, const DynEventDef& def);
  template <typename Builder>
  static Result<DynamicEvent> create(const Tracefs& fs, const Builder& b) {
    return create(fs, b.def());
  }

  DynamicEvent(DynamicEvent&& other) noexcept;
  DynamicEvent& operator=(DynamicEvent&& other) noexcept;
  DynamicEvent(const DynamicEvent&) = delete;
  DynamicEvent& operator=(const DynamicEvent&) = delete;
  ~DynamicEvent();

  const DynEventDef& def() const { return def_; }
  const std::string& group() const { return def_.group; }
  const std::string& name() const { return def_.event; }
  // The file the definition went to: "dynamic_events", "kprobe_events", ...
  const std::string& file() const { return file_; }
  bool owned() const { return owned_; }

  // The event in an instance (events/GRP/EVENT/).
  Event event(const Instance& inst) const { return inst.event(def_.group, def_.event); }
  // Enables it in inst, and remembers to disable it there before removal.
  Status enable(const Instance& inst);
  Status disable(const Instance& inst) const { return event(inst).disable(); }

  // Disable and remove now; reports what failed. Idempotent.
  Status destroy();
  // Leave the event in the kernel.
  void release() { owned_ = false; }

 private:
  DynamicEvent(Files top, DynEventDef def, std::string file)
      : top_(std::move(top)), def_(std::move(def)), file_(std::move(file)), owned_(true) {}
  Status disable_everywhere();

  Files top_;
  DynEventDef def_;
  std::string file_;
  std::vector<std::string> enabled_in_;  // instance directories
  bool owned_ = false;
};

// One line of dynamic_events, kprobe_events or uprobe_events.
struct DynEventEntry {
  std::string line;       // as read, without the newline
  DynEventKind kind = DynEventKind::unknown;
  std::optional<unsigned> maxactive;  // "r10:", "f4:"
  std::string group;
  std::string event;
  // What it is on: "vfs_read", "vfs_read+16", "0xffffffff81234560",
  // "/bin/sh:0x0000000000001234", "sched.sched_switch", "vfs_read%return",
  // "sched_switch". Empty for synthetic events.
  std::string target;
  std::vector<std::string> args;  // "arg1=$retval"; synthetic: "u64 lat"
  std::string filter;             // eprobes: after " if "

  bool is_return() const {
    return kind == DynEventKind::kretprobe || kind == DynEventKind::uretprobe || kind == DynEventKind::fexit;
  }
  // "-:GRP/EVENT"; a user event is matched by its fields too
  // ("-:user_events/NAME u32 a; u32 b").
  std::string remove_command() const;
};

// Parses dynamic_events, kprobe_events or uprobe_events; `file` names it
// in errors. Blank lines and '#' comments are skipped.
Result<std::vector<DynEventEntry>> parse_dynamic_events(std::string_view text, std::string_view file = "dynamic_events");

// The dynamic events of a tracefs: dynamic_events, or where the kernel has
// none, kprobe_events and uprobe_events.
Result<std::vector<DynEventEntry>> read_dynamic_events(const Tracefs& fs);

}  // namespace tracebed::tracefs
