#include "framework/bpf/program.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/base/text.h"

#ifndef TRACEBED_MULTIARCH
#define TRACEBED_MULTIARCH "x86_64-linux-gnu"
#endif

namespace tracebed::bpf {
namespace {

constexpr uint32_t kHeaderWords = 3;  // prog, cpu, pid_tgid
constexpr uint32_t kMaxWords = 64;

// The object's shared part: the ring buffer, the lost counter and the
// macro every program starts with. Records are submitted without waking the
// helper, which drains the buffer on its own poll timeout: a wakeup per
// record would make every sched_switch record cause two more switches (the
// helper waking and sleeping again), a storm that fills ftrace's buffer in
// the tests that compare sched_switch. x86-64's pt_regs is spelled out (as
// arch/x86/include/uapi/asm/ptrace.h has it), since -target bpf selects no
// architecture's headers.
constexpr std::string_view kPreamble = R"(#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} tb_records SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tb_lost SEC(".maps");

struct tb_pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

static __always_inline void tb_count_lost(void)
{
	__u32 key = 0;
	__u64 *n = bpf_map_lookup_elem(&tb_lost, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* A record of N value words after the header; returns 0 when full. */
#define TB_RESERVE(ID, N)                                                   \
	struct { __u64 prog, cpu, pid_tgid, v[N]; } *r =                    \
		bpf_ringbuf_reserve(&tb_records, sizeof(*r), 0);            \
	if (!r) {                                                           \
		tb_count_lost();                                            \
		return 0;                                                   \
	}                                                                   \
	r->prog = ID;                                                       \
	r->cpu = bpf_get_smp_processor_id();                                \
	r->pid_tgid = bpf_get_current_pid_tgid();
)";

Program program(std::string name, std::string section) {
  Program p;
  p.name = std::move(name);
  p.section = std::move(section);
  return p;
}

uint32_t words_of(uint32_t size) { return (size + 7) / 8; }

void add_word(Program& p, std::string name, std::string expr, uint32_t size = 8, bool is_signed = true) {
  p.body += fmt::format("\tr->v[{}] = {};\n", p.words, expr);
  p.slots.push_back({.name = std::move(name), .word = p.words, .size = size, .is_signed = is_signed});
  p.words += 1;
}

// pt_regs members that hold the syscall / function arguments on x86-64.
constexpr const char* kSyscallArgRegs[] = {"di", "si", "dx", "r10", "r8", "r9"};
constexpr const char* kCallArgRegs[] = {"di", "si", "dx", "cx", "r8", "r9"};

}  // namespace

Program tracepoint_program(const Context& ctx, std::string name) {
  Program p = program(std::move(name), fmt::format("tracepoint/{}/{}", ctx.system, ctx.event));
  p.params = fmt::format("struct {} *ctx", ctx.struct_name());
  p.preamble = c_struct(ctx);
  for (const Member& m : ctx.members) {
    if (m.kind == MemberKind::pad || m.offset < kFirstReadableOffset) continue;
    const uint32_t n = m.kind == MemberKind::scalar || m.kind == MemberKind::data_loc ? 1 : words_of(m.size);
    if (p.words + n > kMaxWords) break;
    if (n == 1 && (m.kind == MemberKind::scalar || m.kind == MemberKind::data_loc)) {
      add_word(p, m.name, "ctx->" + m.name, m.size, m.is_signed);
      continue;
    }
    for (uint32_t k = 0; k < n; ++k) p.body += fmt::format("\tr->v[{}] = 0;\n", p.words + k);
    p.body += fmt::format("\t__builtin_memcpy(&r->v[{}], ctx->{}, {});\n", p.words, m.name, m.size);
    p.slots.push_back({.name = m.name, .word = p.words, .size = m.size, .text = m.kind == MemberKind::char_array});
    p.words += n;
  }
  return p;
}

Program raw_sys_enter_program(int nr, const std::string& id_name, const std::vector<Arg>& args, std::string name) {
  Program p = program(std::move(name), "raw_tracepoint/sys_enter");
  p.params = "struct bpf_raw_tracepoint_args *ctx";
  p.filter = fmt::format("\tif (ctx->args[1] != {})\n\t\treturn 0;\n", nr);
  p.body = "\tstruct tb_pt_regs *regs = (struct tb_pt_regs *)ctx->args[0];\n";
  add_word(p, id_name, "ctx->args[1]");
  for (size_t i = 0; i < args.size() && i < 6; ++i) {
    p.body += fmt::format("\tbpf_probe_read_kernel(&r->v[{}], 8, &regs->{});\n", p.words, kSyscallArgRegs[i]);
    p.slots.push_back({.name = args[i].name, .word = p.words, .size = args[i].size, .is_signed = args[i].is_signed});
    p.words += 1;
  }
  return p;
}

Program raw_sched_switch_program(std::string name) {
  Program p = program(std::move(name), "raw_tracepoint/sched_switch");
  p.params = "struct bpf_raw_tracepoint_args *ctx";
  p.preamble =
      "/* Only what the program reads; CO-RE finds it in the kernel's BTF. */\n"
      "struct task_struct {\n\tint pid;\n\tchar comm[16];\n} __attribute__((preserve_access_index));\n";
  p.body =
      "\tstruct task_struct *prev = (struct task_struct *)ctx->args[1];\n"
      "\tstruct task_struct *next = (struct task_struct *)ctx->args[2];\n";
  for (const char* task : {"prev", "next"}) {
    add_word(p, fmt::format("{}_pid", task), fmt::format("BPF_CORE_READ({}, pid)", task), 4, true);
    p.body += fmt::format("\tr->v[{0}] = r->v[{1}] = 0;\n\tbpf_core_read(&r->v[{0}], sizeof({2}->comm), &{2}->comm);\n",
                          p.words, p.words + 1, task);
    p.slots.push_back({.name = fmt::format("{}_comm", task), .word = p.words, .size = 16, .text = true});
    p.words += 2;
  }
  return p;
}

Program kprobe_program(const std::string& function, const std::vector<Arg>& args, std::string name) {
  Program p = program(std::move(name), "kprobe/" + function);
  p.params = "struct tb_pt_regs *ctx";
  for (size_t i = 0; i < args.size() && i < 6; ++i)
    add_word(p, args[i].name, fmt::format("ctx->{}", kCallArgRegs[i]), args[i].size, args[i].is_signed);
  return p;
}

Program kretprobe_program(const std::string& function, const Arg& ret, std::string name) {
  Program p = program(std::move(name), "kretprobe/" + function);
  p.params = "struct tb_pt_regs *ctx";
  add_word(p, ret.name, "ctx->ax", ret.size, ret.is_signed);
  return p;
}

Program kprobe_multi_program(std::string name) {
  Program p = program(std::move(name), "kprobe.multi");
  p.params = "struct tb_pt_regs *ctx";
  add_word(p, "ip", "bpf_get_func_ip(ctx)", 8, false);
  return p;
}

Program fentry_program(const std::string& function, const std::vector<Arg>& args, std::string name) {
  Program p = program(std::move(name), "fentry/" + function);
  p.params = "__u64 *ctx";
  for (size_t i = 0; i < args.size(); ++i)
    add_word(p, args[i].name, fmt::format("ctx[{}]", i), args[i].size, args[i].is_signed);
  return p;
}

Program fexit_program(const std::string& function, int nargs, const Arg& ret, std::string name) {
  Program p = program(std::move(name), "fexit/" + function);
  p.params = "__u64 *ctx";
  add_word(p, ret.name, fmt::format("ctx[{}]", nargs), ret.size, ret.is_signed);
  return p;
}

uint64_t ObjectSource::add(Program p) {
  programs_.push_back(std::move(p));
  return programs_.size();
}

std::string ObjectSource::text() const {
  std::string out(kPreamble);
  for (size_t i = 0; i < programs_.size(); ++i) {
    const Program& p = programs_[i];
    if (!p.preamble.empty()) out += "\n" + p.preamble;
    out += fmt::format(
        "\nSEC(\"{}\")\nint {}({})\n{{\n{}\tTB_RESERVE({}, {})\n{}\tbpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);\n\treturn 0;\n}}\n",
        p.section, c_ident(p.name), p.params, p.filter, i + 1, std::max<uint32_t>(p.words, 1), p.body);
  }
  return out;
}

Result<Values> ObjectSource::values(const Record& r) const {
  if (r.prog == 0 || r.prog > programs_.size()) return Error{fmt::format("no program {}: \"{}\"", r.prog, r.line)};
  const Program& p = programs_[r.prog - 1];
  if (r.words.size() < p.words)
    return Error{fmt::format("{} wrote {} words, the record has {}: \"{}\"", p.name, p.words, r.words.size(), r.line)};
  Values out;
  for (const Slot& s : p.slots) {
    if (s.text) {
      std::string bytes(s.size, '\0');
      for (uint32_t i = 0; i < s.size; ++i) bytes[i] = static_cast<char>(r.words[s.word + i / 8] >> (8 * (i % 8)));
      out[s.name] = bytes.substr(0, bytes.find('\0'));
      continue;
    }
    uint64_t v = r.words[s.word];
    if (s.size < 8) {
      const uint64_t mask = (uint64_t{1} << (8 * s.size)) - 1;
      v &= mask;
      if (s.is_signed && (v >> (8 * s.size - 1)) != 0) v |= ~mask;
    }
    out[s.name] = static_cast<int64_t>(v);
  }
  return out;
}

Result<std::vector<Record>> parse_records(std::string_view output) {
  std::vector<Record> out;
  size_t line_no = 0;
  for (std::string_view line : base::split_lines(output)) {
    ++line_no;
    if (!line.starts_with("rec ")) continue;
    std::vector<uint64_t> w;
    for (std::string_view word : base::split_words(line.substr(4))) {
      uint64_t v = 0;
      auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v, 16);
      if (ec != std::errc() || end != word.data() + word.size())
        return Error{fmt::format("line {}: \"{}\" is not a hex word: {}", line_no, word, line)};
      w.push_back(v);
    }
    if (w.size() < kHeaderWords)
      return Error{fmt::format("line {}: a record of {} words: {}", line_no, w.size(), line)};
    out.push_back({.prog = w[0],
                   .cpu = static_cast<uint32_t>(w[1]),
                   .pid = static_cast<uint32_t>(w[2]),
                   .tgid = static_cast<uint32_t>(w[2] >> 32),
                   .words = std::vector<uint64_t>(w.begin() + kHeaderWords, w.end()),
                   .line = std::string(line)});
  }
  return out;
}

Status compile(const std::string& source, const std::filesystem::path& object) {
  std::filesystem::path src = object;
  src.replace_extension(".c");
  TRACEBED_TRY(base::write_file_atomic(src, source));
  TRACEBED_ASSIGN_OR_RETURN(
      base::ProcessResult r,
      base::run_process({"clang", "-target", "bpf", "-O2", "-g", "-Wall", "-Wno-unused-function",
                         "-I/usr/include/" TRACEBED_MULTIARCH, "-c", src.string(), "-o", object.string()},
                        std::chrono::seconds(120)));
  if (r.status == 0) return {};
  std::string numbered;
  size_t n = 0;
  for (std::string_view line : base::split_lines(source)) numbered += fmt::format("{:4} {}\n", ++n, line);
  return Error{fmt::format("clang -target bpf {} failed ({}):\n{}\n{}", src.string(), r.status, r.output, numbered)};
}

}  // namespace tracebed::bpf
