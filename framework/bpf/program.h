// BPF programs as C source, generated on the host for one kernel, and the
// records they write.
//
// Every program writes one fixed record of u64 words into the ring buffer
// map tb_records: its id, the CPU, bpf_get_current_pid_tgid(), then its
// values. A Slot says which words hold which value, so the host reads a
// record the guest helper (vmimages/bpf_helper) printed as hex words
// without the helper knowing any layout.
//
//   auto ctx = bpf::context_of(*format);
//   bpf::ObjectSource src;
//   uint64_t id = src.add(bpf::tracepoint_program(*ctx));
//   auto obj = bpf::compile(src.text(), dir / "sched_switch.bpf.o");
//   // run `tracebed-bpf OBJ -- CMD` in the guest, then:
//   auto records = bpf::parse_records(output);
//   bpf::Values v = src.values(records->at(0));   // "prev_pid" -> 42, ...
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "framework/base/result.h"
#include "framework/bpf/context.h"

namespace tracebed::bpf {

// Where a value sits in a record.
struct Slot {
  std::string name;
  uint32_t word = 0;  // the first word, after the 3 header words
  uint32_t size = 0;  // bytes
  bool is_signed = false;
  bool text = false;  // a char array: the bytes up to the first NUL
};

struct Program {
  std::string name;      // the C function
  std::string section;   // SEC("..."): how libbpf attaches it
  std::string params;    // the C parameters
  std::string filter;    // what drops a call before a record is reserved
  std::string body;      // fills r->v[...]; r is the reserved record
  std::string preamble;  // types or includes the body needs (CO-RE structs)
  std::vector<Slot> slots;
  uint32_t words = 0;
};

// Reads every field of the context that a BPF program can read (from
// offset 8 on), through the generated struct: scalars widened to a word,
// char and byte arrays copied whole. Skipped: __data_loc payloads (the u32
// itself is read) and fields past the record's first `max_words` words.
Program tracepoint_program(const Context& ctx, std::string name = "on_tp");

// A value a program reads from an argument: its name in the record and how
// many of the register's bytes are its (an int's upper half is not).
struct Arg {
  std::string name;
  uint32_t size = 8;
  bool is_signed = true;
};

// BPF_PROG_TYPE_RAW_TRACEPOINT on sys_enter: for syscall `nr` only, the
// raw arguments (struct pt_regs *regs, long id): id as `id_name`, then the
// syscall's arguments from regs as x86-64 passes them (di, si, dx, r10,
// r8, r9; arch/x86/include/uapi/asm/ptrace.h), one per `args`.
Program raw_sys_enter_program(int nr, const std::string& id_name, const std::vector<Arg>& args,
                              std::string name = "on_raw_sys_enter");

// BPF_PROG_TYPE_RAW_TRACEPOINT on sched_switch: (bool preempt, struct
// task_struct *prev, struct task_struct *next, ...): prev_pid, prev_comm,
// next_pid, next_comm from the tasks, read with CO-RE relocations against
// the kernel's BTF (task_struct's layout is the kernel's own).
Program raw_sched_switch_program(std::string name = "on_raw_sched_switch");

// kprobe / kretprobe on `function`: its arguments from pt_regs (kprobe), or
// the return value (kretprobe) as `ret`.
Program kprobe_program(const std::string& function, const std::vector<Arg>& args, std::string name = "on_kprobe");
Program kretprobe_program(const std::string& function, const Arg& ret, std::string name = "on_kretprobe");

// kprobe.multi, attached by the helper to a list of functions: the
// function's address (bpf_get_func_ip) per hit, as "ip".
Program kprobe_multi_program(std::string name = "on_multi");

// fentry / fexit on `function` (BTF-typed arguments, one u64 each): its
// first arguments; fexit reads the return value after all `nargs` of them.
Program fentry_program(const std::string& function, const std::vector<Arg>& args, std::string name = "on_fentry");
Program fexit_program(const std::string& function, int nargs, const Arg& ret, std::string name = "on_fexit");

// A record as the helper printed it.
struct Record {
  uint64_t prog = 0;
  uint32_t cpu = 0;
  uint32_t pid = 0;  // the thread (bpf_get_current_pid_tgid's low half)
  uint32_t tgid = 0;
  std::vector<uint64_t> words;  // the values, after the header
  std::string line;             // as printed
};

// A value by name: integers (sign-extended from the field's size when it is
// signed, else zero-extended) and text.
using Value = std::variant<int64_t, std::string>;
using Values = std::map<std::string, Value>;

// One BPF object: its programs, the ring buffer and the lost counter.
class ObjectSource {
 public:
  // Adds a program; returns its id (the record's first word).
  uint64_t add(Program p);
  const Program& program(uint64_t id) const { return programs_.at(id - 1); }
  std::string text() const;
  // The record's values by the slots of the program that wrote it; an error
  // when no program has its id or it is too short.
  Result<Values> values(const Record& r) const;

 private:
  std::vector<Program> programs_;
};

// The helper's "rec" lines, in order. An error names a line that does not
// parse.
Result<std::vector<Record>> parse_records(std::string_view output);

// Compiles `source` with clang -target bpf -O2 -g into `object`. An error
// carries clang's messages and the source, with line numbers.
Status compile(const std::string& source, const std::filesystem::path& object);

}  // namespace tracebed::bpf
