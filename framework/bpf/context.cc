#include "framework/bpf/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace tracebed::bpf {
namespace {

bool is_scalar_size(uint32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

MemberKind kind_of(const decode::Field& f) {
  if (f.has(decode::kFieldDataLoc) || f.has(decode::kFieldRelLoc)) return MemberKind::data_loc;
  if (f.has(decode::kFieldArray)) {
    return f.has(decode::kFieldString) && f.elem_size == 1 ? MemberKind::char_array : MemberKind::byte_array;
  }
  if (!is_scalar_size(f.size)) return MemberKind::byte_array;
  // A scalar the compiler would align elsewhere: keep its bytes where they are.
  if (f.offset % f.size != 0) return MemberKind::byte_array;
  return MemberKind::scalar;
}

}  // namespace

std::string c_ident(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return out;
}

std::string Member::declaration() const {
  switch (kind) {
    case MemberKind::scalar:
      return fmt::format("__{}{} {}", is_signed ? 's' : 'u', size * 8, name);
    case MemberKind::char_array:
      // The format's signedness of char: 5.10 says signed:1, kernels built
      // with -funsigned-char (6.2 on) signed:0.
      return fmt::format("{} char {}[{}]", is_signed ? "signed" : "unsigned", name, size);
    case MemberKind::byte_array:
    case MemberKind::pad:
      return fmt::format("__u8 {}[{}]", name, size);
    case MemberKind::data_loc:
      return fmt::format("__u32 {}", name);
  }
  return name;
}

std::string Context::struct_name() const { return c_ident(fmt::format("tb_ctx_{}_{}", system, event)); }

const Member* Context::member(std::string_view name) const {
  for (const Member& m : members)
    if (m.name == name) return &m;
  return nullptr;
}

Result<Context> context_of(const decode::EventFormat& format) {
  Context ctx;
  ctx.system = format.system;
  ctx.event = format.name;
  ctx.id = format.id;
  std::vector<const decode::Field*> fields;
  for (const auto& f : format.fields) fields.push_back(&f);
  std::stable_sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->offset < b->offset; });
  uint32_t at = 0;
  for (const decode::Field* f : fields) {
    const std::string where =
        fmt::format("{}/{} field {} (offset {}, size {})", format.system, format.name, f->name, f->offset, f->size);
    if (f->size == 0) return Error{where + ": a field of size 0 has no place in a context struct"};
    if (f->offset < at) return Error{fmt::format("{}: overlaps the field before it, which ends at {}", where, at)};
    if ((f->has(decode::kFieldDataLoc) || f->has(decode::kFieldRelLoc)) && f->size != 4)
      return Error{where + ": a __data_loc field is a u32 (4 bytes)"};
    if (f->offset > at) {
      ctx.members.push_back({.name = fmt::format("__pad_{}", at),
                             .format_type = "",
                             .kind = MemberKind::pad,
                             .offset = at,
                             .size = f->offset - at});
    }
    Member m{.name = f->name,
             .format_type = f->type,
             .kind = kind_of(*f),
             .offset = f->offset,
             .size = f->size,
             .is_signed = f->has(decode::kFieldSigned),
             .common = f->has(decode::kFieldCommon)};
    ctx.members.push_back(std::move(m));
    at = f->offset + f->size;
  }
  ctx.size = at;
  return ctx;
}

std::string c_struct(const Context& ctx) {
  const std::string name = ctx.struct_name();
  std::string out = fmt::format(
      "/* {}/{} (ID {}): the record as events/{}/{}/format lays it out.\n"
      " * In a BPF tracepoint program the first 8 bytes hold the pt_regs\n"
      " * pointer, not the common fields (perf_trace_run_bpf_submit). */\n"
      "struct {} {{\n",
      ctx.system, ctx.event, ctx.id, ctx.system, ctx.event, name);
  // A fixed column, so two kernels' structs differ only where their formats do.
  constexpr size_t kWidth = 36;
  for (const Member& m : ctx.members) {
    std::string what = m.kind == MemberKind::pad ? "gap" : m.format_type;
    if (m.kind == MemberKind::data_loc) what += ": len << 16 | offset";
    if (m.kind == MemberKind::byte_array && !m.format_type.empty() && m.size <= 8) what += ": unaligned, kept as bytes";
    out += fmt::format("\t{:<{}} /* offset {:>3}, size {}: {} */\n", m.declaration() + ";", kWidth, m.offset, m.size,
                       what);
  }
  out += "};\n";
  for (const Member& m : ctx.members) {
    if (m.kind == MemberKind::pad) continue;
    out += fmt::format("_Static_assert(__builtin_offsetof(struct {}, {}) == {}, \"{} at offset {}\");\n", name, m.name,
                       m.offset, m.name, m.offset);
  }
  out += fmt::format("#define {}_SIZE {} /* the end of the last field */\n", name, ctx.size);
  return out;
}

}  // namespace tracebed::bpf
