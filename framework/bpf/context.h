// The C context struct of a tracepoint, for a BPF_PROG_TYPE_TRACEPOINT
// program, generated from the event's format file.
//
// Such a program reads the record through a struct that must match
// TP_STRUCT__entry exactly: every field at the offset and with the size
// events/<sys>/<event>/format gives, and these change between kernels. The
// rule (docs/bpf.md):
//   - every field of the format, common_* fields first, in offset order;
//   - a gap between fields is an explicit `__u8 __pad_<offset>[n]`;
//   - a scalar of 1, 2, 4 or 8 bytes is __u8..__u64 (__s8..__s64 when the
//     format says signed:1), whatever its C type (pointers, long, pid_t);
//   - char arrays stay char arrays, `signed char` or `unsigned char` as the
//     format says; other arrays and odd sizes are `__u8 name[size]`;
//   - __data_loc and __rel_loc are their u32 (len << 16 | offset);
//   - a field whose offset is not a multiple of its natural alignment is
//     `__u8 name[size]`, so the compiler never moves it;
//   - each member's offset is checked with _Static_assert, so a struct that
//     does not say what the format says does not compile.
//
//   auto ctx = bpf::context_of(format);       // Result<Context>
//   std::string c = bpf::c_struct(*ctx);       // the struct and its asserts
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/decode/event_format.h"

namespace tracebed::bpf {

enum class MemberKind {
  scalar,      // __u8..__u64 / __s8..__s64
  char_array,  // [un]signed char name[N]: text up to the first NUL
  byte_array,  // __u8 name[size]
  data_loc,    // __u32: len << 16 | offset (from the record, or from the field for __rel_loc)
  pad,         // a gap the format leaves between fields
};

struct Member {
  std::string name;
  std::string format_type;  // as the format file wrote it ("" for a pad)
  MemberKind kind = MemberKind::scalar;
  uint32_t offset = 0;
  uint32_t size = 0;
  bool is_signed = false;
  bool common = false;  // common_*: in BPF, the first 8 bytes hold the pt_regs pointer instead

  // The C declaration, without the trailing ";": "__s32 prev_pid".
  std::string declaration() const;
};

struct Context {
  std::string system;
  std::string event;
  uint32_t id = 0;
  std::vector<Member> members;  // in offset order, pads included
  uint32_t size = 0;            // the end of the last field

  // "tb_ctx_sched_sched_switch".
  std::string struct_name() const;
  const Member* member(std::string_view name) const;
};

// The layout of `format`; an error names the event and the field when two
// fields overlap or a size is zero.
Result<Context> context_of(const decode::EventFormat& format);

// s with every character a C identifier cannot hold made '_': event and
// field names may hold them.
std::string c_ident(std::string_view s);

// The C text: a comment naming the event, the struct with each member's
// offset and size, and the _Static_asserts. Needs <linux/types.h>.
std::string c_struct(const Context& ctx);

// In a BPF tracepoint program the first 8 bytes of the context are not the
// common fields: perf_trace_run_bpf_submit() (kernel/trace/bpf_trace.c)
// stores the pt_regs pointer there, and the verifier refuses reads below
// sizeof(void *) (tp_prog_is_valid_access).
inline constexpr uint32_t kFirstReadableOffset = 8;

}  // namespace tracebed::bpf
