#include "framework/decode/plugins.h"

#include <array>
#include <iterator>
#include <optional>
#include <tuple>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "framework/decode/report_text.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode {

// Literals as string_views: appending one per record then costs no strlen.
using namespace std::string_view_literals;
namespace {

// tep_find_function: the name of the function containing addr.
std::optional<Symbol> function_at(const TraceContext& ctx, uint64_t addr) { return ctx.lookup_symbol(addr); }

// libtraceevent's plugin_sched_switch write_and_save_comm: the comm is
// printed and registered for the pid (CommStore decides which name wins).
void print_and_learn_comm(const Field& field, const Record& record, TraceContext& ctx, uint64_t pid,
                          TextOut& out) {
  // printf("%.*s", field->size, comm): stops at the first NUL.
  std::string_view comm = field.read_string(record.data, ctx.endian);
  out += comm;
  // Even pid 0: before the first lookup it takes a place in the list, and
  // places decide which duplicate glibc's bsearch finds.
  ctx.set_comm(static_cast<int>(pid), comm);
}

void write_task_state(uint64_t state, TextOut& out) {
  static constexpr std::string_view kStates = "SDTtZXxW";
  bool found = false;
  for (size_t i = 0; i < kStates.size(); ++i) {
    if (!(state & (1ull << i))) continue;
    if (found) out += '|';
    found = true;
    out += kStates[i];
  }
  if (!found) out += 'R';
}

// plugin_futex's operations: after "op=NAME", each argument printed or
// not, in decimal or as "0x%08x" (its formats, printed by hand).
struct FutexArg {
  const char* label = nullptr;  // null: not printed
  bool hex = false;
};
constexpr FutexArg futex_dec(const char* label) { return {label, false}; }
constexpr FutexArg futex_hex(const char* label) { return {label, true}; }
struct FutexOp {
  std::string_view name;
  FutexArg val, utime, uaddr2, val3;
};
constexpr FutexOp kFutexOps[] = {
    {"FUTEX_WAIT", futex_hex(" val="), futex_hex(" utime="), {}, {}},
    {"FUTEX_WAKE", futex_dec(" val="), {}, {}, {}},
    {"FUTEX_FD", futex_dec(" val="), {}, {}, {}},
    {"FUTEX_REQUEUE", futex_dec(" val="), futex_dec(" val2="), futex_hex(" uaddr2="), {}},
    {"FUTEX_CMP_REQUEUE", futex_dec(" val="), futex_dec(" val2="), futex_hex(" uaddr2="), futex_hex(" val3=")},
    {"FUTEX_WAKE_OP", futex_dec(" val="), futex_dec(" val2="), futex_hex(" uaddr2="), futex_hex(" val3=")},
    {"FUTEX_LOCK_PI", {}, futex_hex(" utime="), {}, {}},
    {"FUTEX_UNLOCK_PI", {}, {}, {}, {}},
    {"FUTEX_TRYLOCK_PI", {}, {}, {}, {}},
    {"FUTEX_WAIT_BITSET", futex_hex(" val="), futex_hex(" utime="), {}, futex_hex(" val3=")},
    {"FUTEX_WAKE_BITSET", futex_dec(" val="), {}, {}, futex_hex(" val3=")},
    {"FUTEX_WAIT_REQUEUE_PI", futex_hex(" val="), futex_hex(" utime="), futex_hex(" uaddr2="), futex_hex(" val3=")},
    {"FUTEX_CMP_REQUEUE_PI", futex_dec(" val="), futex_dec(" val2="), futex_hex(" uaddr2="), futex_hex(" val3=")},
};

void put_futex_arg(const FutexArg& arg, uint64_t v, TextOut& out) {
  if (!arg.label) return;
  out += arg.label;
  if (arg.hex) {
    out += "0x"sv;
    append_hex(out, v, 8);
  } else {
    append_uint(out, v);
  }
}

}  // namespace

void append_event_time(uint64_t ts, int precision, uint64_t divisor, TextOut& out) {
  uint64_t time = ts;
  if (divisor) time = (time + divisor / 2) / divisor;
  uint64_t p10 = 1;
  for (int i = 0; i < precision; ++i) p10 *= 10;
  if (p10 > 1) {
    append_uint(out, time / p10, 5);  // "%5llu.%0*llu"
    out += '.';
    append_uint(out, time % p10, static_cast<size_t>(precision), '0');
  } else {
    append_uint(out, time, 12);
  }
}

struct Plugins::State {
  State(TraceContext& c, bool ns) : ctx(c), ns_stamps(ns) {}
  TraceContext& ctx;
  bool ns_stamps;

  // The field an event names, common or not (libtraceevent
  // tep_find_any_field), remembered by (event, name literal): the printers
  // ask for the same few fields of the same few events on every record.
  struct FieldSlot {
    const EventFormat* event = nullptr;
    const char* name = nullptr;
    size_t size = 0;
    const Field* field = nullptr;
  };
  std::array<FieldSlot, 256> field_slots{};

  const Field* any_field(const EventFormat& event, std::string_view name) {
    const uintptr_t key = reinterpret_cast<uintptr_t>(&event) ^ (reinterpret_cast<uintptr_t>(name.data()) << 7);
    FieldSlot& slot = field_slots[(key * 0x9e3779b97f4a7c15ull) >> 56];
    if (slot.event != &event || slot.name != name.data() || slot.size != name.size())
      slot = FieldSlot{&event, name.data(), name.size(), event.field(name)};
    return slot.field;
  }

  // tep_get_field_val: the field's bytes as an unsigned number. With `report`,
  // a missing field leaves libtraceevent's marker in the output.
  std::optional<uint64_t> field_value(const EventFormat& event, std::string_view name, const Record& record,
                                      const TraceContext& c, TextOut& out, bool report) {
    const Field* field = any_field(event, name);
    if (!field) {
      if (report) missing_field(name, out);
      return std::nullopt;
    }
    return field->read_uint(record.data, c.endian);
  }
  // Out of line: formatting it here made every field_value set up fmt's
  // frame, on every record.
  [[gnu::noinline, gnu::cold]] static void missing_field(std::string_view name, TextOut& out) {
    out += fmt::format("<CANT FIND FIELD {}>", name);
  }

  enum class Kind { sched_switch, sched_wakeup, function, kernel_stack, raw_data, func_repeats,
                    funcgraph_entry, funcgraph_exit, kmem_call_site, hrtimer_expire_entry, hrtimer_start,
                    tlb_flush, futex };
  std::unordered_map<const EventFormat*, Kind> handlers;
  // By event id: a handled event with that id and its kind (no event if
  // none has it). Every record asks; ids are unique in a well-formed file,
  // and the map answers for the others.
  struct Handler {
    const EventFormat* event = nullptr;
    Kind kind = Kind::sched_switch;
  };
  std::vector<Handler> handler_by_id;
  const EventFormat* funcgraph_exit = nullptr;

  // plugin_function's per-CPU guess of the call chain, grown in blocks of 10
  // and never shrunk; stale names past the current depth stay searchable,
  // exactly as in the plugin. Names are views into the context's kallsyms
  // (they live as long as it does); a null view is an empty slot.
  std::vector<std::vector<std::string_view>> function_stacks;

  static bool same_name(std::string_view a, std::string_view b) {
    return (a.data() == b.data() && a.size() == b.size()) || a == b;
  }

  void add_child(std::vector<std::string_view>& stack, const std::optional<std::string_view>& child, size_t pos) {
    if (!child) return;
    if (pos >= stack.size()) stack.resize(stack.size() + 10);
    stack[pos] = child->data() ? *child : std::string_view("", 0);
  }

  size_t add_and_get_index(std::string_view parent, std::optional<std::string_view> child, int cpu) {
    if (cpu < 0) return 0;
    if (static_cast<size_t>(cpu) >= function_stacks.size()) function_stacks.resize(cpu + 1);
    auto& stack = function_stacks[cpu];
    for (size_t i = 0; i < stack.size() && stack[i].data(); ++i) {
      if (same_name(stack[i], parent)) {
        add_child(stack, child, i + 1);
        return i;
      }
    }
    add_child(stack, parent, 0);
    add_child(stack, child, 1);
    return 0;
  }

  // The fields function() reads, found once per event: with function
  // tracing nearly every record asks for them.
  struct FunctionFields {
    const EventFormat* event = nullptr;
    const Field* ip = nullptr;
    const Field* parent_ip = nullptr;
  };
  FunctionFields function_fields;

  void function(const Record& record, const EventFormat& event, TextOut& out) {
    FunctionFields& f = function_fields;
    if (f.event != &event) f = {&event, any_field(event, "ip"), any_field(event, "parent_ip")};
    if (!f.ip) { missing_field("ip", out); out += '!'; return; }
    const uint64_t ip = f.ip->read_uint(record.data, ctx.endian);
    auto func = function_at(ctx, ip);
    if (!f.parent_ip) { missing_field("parent_ip", out); out += '!'; return; }
    auto parent = function_at(ctx, f.parent_ip->read_uint(record.data, ctx.endian));
    size_t index = 0;
    if (parent) {
      std::optional<std::string_view> child;
      if (func) child = func->name;
      index = add_and_get_index(parent->name, child, record.cpu);
    }
    out.append(index * 3, ' ');
    if (func) {
      out += func->name;
    } else {
      out += "0x"sv;
      append_hex(out, ip);
    }
  }

  void kernel_stack(const Record& record, const EventFormat& event, TextOut& out) {
    const Field* caller = any_field(event, "caller");
    if (!caller) { out += "<CANT FIND FIELD caller>"sv; return; }
    out += "<stack trace >\n"sv;
    size_t long_size = ctx.long_size;
    for (size_t off = caller->offset; off + long_size <= record.data.size(); off += long_size) {
      uint64_t addr = load_uint(record.data.data() + off, long_size, ctx.endian);
      if ((long_size == 8 && addr == ~0ull) || static_cast<int32_t>(addr) == -1) break;
      out += "=> "sv;
      if (auto func = function_at(ctx, addr)) {
        out += func->name;
        out += " ("sv;
        append_hex(out, addr);
        out += ")\n"sv;
      } else {
        append_hex(out, addr);
        out += '\n';
      }
    }
  }

  void raw_data(const Record& record, const EventFormat& event, TextOut& out) {
    auto id = field_value(event, "id", record, ctx, out, true);
    if (!id) { out += '!'; return; }
    out += "# "sv;
    append_hex(out, *id);
    const Field* buf = any_field(event, "buf");
    if (!buf) { out += "<CANT FIND FIELD buf>"sv; return; }
    for (size_t off = buf->offset; off < record.data.size(); ++off) {
      out += ' ';
      append_hex(out, record.data[off], 2);
    }
  }

  void func_repeats(const Record& record, const EventFormat& event, TextOut& out) {
    function(record, event, out);
    auto count = field_value(event, "count", record, ctx, out, true);
    if (!count) { out += '!'; return; }
    auto top = field_value(event, "top_delta_ts", record, ctx, out, true);
    if (!top) { out += '!'; return; }
    auto bottom = field_value(event, "bottom_delta_ts", record, ctx, out, true);
    if (!bottom) { out += '!'; return; }
    out += " (count: "sv;
    append_int(out, static_cast<int64_t>(*count));
    out += "  last_ts: "sv;
    const uint64_t last_ts = record.ts - ((*top << 32) | *bottom);
    if (ns_stamps)
      append_event_time(last_ts, 9, 1, out);
    else
      append_event_time(last_ts, 6, 1000, out);
    out += ')';
  }

  void sched_wakeup(const Record& record, const EventFormat& event, TextOut& out) {
    auto pid = field_value(event, "pid", record, ctx, out, true);
    if (!pid) { out += '!'; return; }
    if (const Field* comm = any_field(event, "comm")) {
      print_and_learn_comm(*comm, record, ctx, *pid, out);
      out += ':';
    }
    append_int(out, static_cast<int64_t>(*pid));
    if (auto prio = field_value(event, "prio", record, ctx, out, true)) {
      out += " ["sv;
      append_int(out, static_cast<int64_t>(*prio));
      out += ']';
    }
    if (auto success = field_value(event, "success", record, ctx, out, false)) {
      out += " success="sv;
      append_int(out, static_cast<int64_t>(*success));
    }
    if (auto cpu = field_value(event, "target_cpu", record, ctx, out, true)) {
      out += " CPU:"sv;
      append_uint(out, *cpu, 3, '0');
    }
  }

  void sched_switch(const Record& record, const EventFormat& event, TextOut& out) {
    auto prev_pid = field_value(event, "prev_pid", record, ctx, out, true);
    if (!prev_pid) { out += '!'; return; }
    if (const Field* comm = any_field(event, "prev_comm")) {
      print_and_learn_comm(*comm, record, ctx, *prev_pid, out);
      out += ':';
    }
    append_int(out, static_cast<int64_t>(*prev_pid));
    out += ' ';
    if (auto prio = field_value(event, "prev_prio", record, ctx, out, true)) {
      out += '[';
      append_int(out, static_cast<int32_t>(*prio));
      out += "] "sv;
    }
    if (auto state = field_value(event, "prev_state", record, ctx, out, true)) write_task_state(*state, out);
    out += " ==> "sv;
    auto next_pid = field_value(event, "next_pid", record, ctx, out, true);
    if (!next_pid) { out += '!'; return; }
    if (const Field* comm = any_field(event, "next_comm")) {
      print_and_learn_comm(*comm, record, ctx, *next_pid, out);
      out += ':';
    }
    append_int(out, static_cast<int64_t>(*next_pid));
    if (auto prio = field_value(event, "next_prio", record, ctx, out, true)) {
      out += " ["sv;
      append_int(out, static_cast<int32_t>(*prio));
      out += ']';
    }
  }

  // plugin_kmem: "(func+0xoff) " before the usual text, when call_site resolves.
  void kmem_call_site(const Record& record, const EventFormat& event, TextOut& out) {
    const Field* field = any_field(event, "call_site");
    if (!field) return;
    uint64_t val = field->read_uint(record.data, ctx.endian);
    auto func = function_at(ctx, val);
    if (!func) return;
    out += '(';
    out += func->name;
    out += "+0x"sv;
    append_hex(out, static_cast<uint32_t>(static_cast<int32_t>(val - func->address)));
    out += ") "sv;
  }

  // tep_print_num_field / tep_print_func_field as plugin_hrtimer uses them.
  bool print_num(const EventFormat& event, std::string_view name, bool hex, const Record& record,
                 TextOut& out, bool report) {
    const Field* field = any_field(event, name);
    if (!field) {
      if (report) out += fmt::format("CAN'T FIND FIELD \"{}\"", name);
      return false;
    }
    uint64_t val = field->read_uint(record.data, ctx.endian);
    if (hex) {
      out += "0x"sv;
      append_hex(out, val);
    } else {
      append_uint(out, val);
    }
    return true;
  }

  void print_func(const EventFormat& event, std::string_view prefix, std::string_view name,
                  const Record& record, TextOut& out) {
    const Field* field = any_field(event, name);
    if (!field) return;
    uint64_t val = field->read_uint(record.data, ctx.endian);
    out += prefix;
    if (auto func = function_at(ctx, val)) {
      out += func->name;
      out += "/0x"sv;
      append_hex(out, func->address - val);
    } else {
      out += "0x"sv;
      append_hex(out, val, 8);
    }
  }

  void hrtimer_expire_entry(const Record& record, const EventFormat& event, TextOut& out) {
    out += "hrtimer="sv;
    if (!print_num(event, "timer", true, record, out, false)) print_num(event, "hrtimer", true, record, out, true);
    out += " now="sv;
    print_num(event, "now", false, record, out, true);
    print_func(event, " function=", "function", record, out);
  }

  void hrtimer_start(const Record& record, const EventFormat& event, TextOut& out) {
    out += "hrtimer="sv;
    if (!print_num(event, "timer", true, record, out, false)) print_num(event, "hrtimer", true, record, out, true);
    print_func(event, " function=", "function", record, out);
    out += " expires="sv;
    print_num(event, "expires", false, record, out, true);
    out += " softexpires="sv;
    print_num(event, "softexpires", false, record, out, true);
  }

  // plugin_tlb: the reason as words (only the four reasons it knows).
  // Returns false when the plugin gives up and the print fmt follows.
  bool tlb_flush(const Record& record, const EventFormat& event, TextOut& out) {
    out += "pages="sv;
    if (const Field* pages = any_field(event, "pages"))
      append_int(out, static_cast<int64_t>(pages->read_uint(record.data, ctx.endian)));
    else
      out += "CAN'T FIND FIELD \"pages\""sv;
    auto reason = field_value(event, "reason", record, ctx, out, true);
    if (!reason) return false;
    out += " reason="sv;
    static constexpr std::string_view kReasons[] = {"flush on task switch", "remote shootdown", "local shootdown",
                                                    "local mm shootdown"};
    if (*reason < std::size(kReasons)) out += kReasons[*reason];
    out += " ("sv;
    append_int(out, static_cast<int64_t>(*reason));
    out += ')';
    return true;
  }

  // plugin_futex: sys_enter_futex with the operation decoded. Returns false
  // (print fmt instead) when a field is missing or the command is unknown.
  bool futex(const Record& record, const EventFormat& event, TextOut& out) {
    uint64_t args[6];
    static constexpr std::string_view kArgs[] = {"uaddr", "op", "val", "utime", "uaddr2", "val3"};
    for (size_t i = 0; i < 6; ++i) {
      auto value = field_value(event, kArgs[i], record, ctx, out, true);
      if (!value) return false;
      args[i] = *value;
    }
    const auto [uaddr, op, val, utime, uaddr2, val3] = std::tuple(args[0], args[1], args[2], args[3], args[4], args[5]);
    constexpr uint64_t kPrivate = 128, kClockRealtime = 256;  // include/uapi/linux/futex.h
    uint64_t cmd = op & ~(kPrivate | kClockRealtime);
    if (cmd >= std::size(kFutexOps)) return false;
    const FutexOp& fop = kFutexOps[cmd];
    out += "op="sv;
    out += fop.name;
    if (op & kPrivate) out += "|FUTEX_PRIVATE_FLAG"sv;
    if (op & kClockRealtime) out += "|FUTEX_CLOCK_REALTIME"sv;
    put_futex_arg(futex_hex(" uaddr="), uaddr, out);
    put_futex_arg(fop.val, val, out);
    put_futex_arg(fop.utime, utime, out);
    put_futex_arg(fop.uaddr2, uaddr2, out);
    put_futex_arg(fop.val3, val3, out);
    return true;
  }

  // trace-cmd's function_graph printer (lib/trace-cmd/trace-ftrace.c).
  static void graph_overhead(uint64_t duration, TextOut& out) {
    if (duration == ~0ull) out += "  "sv;
    else if (duration > 1000000000ull) out += "$ "sv;
    else if (duration > 1000000ull) out += "# "sv;
    else if (duration > 100000ull) out += "! "sv;
    else if (duration > 10000ull) out += "+ "sv;
    else out += "  "sv;
  }

  static void indent_for_depth(uint64_t depth, TextOut& out) {
    int spaces = static_cast<int>(depth * 2);  // TRACE_GRAPH_INDENT, as an int like the C code
    if (spaces > 0) out.append(static_cast<size_t>(spaces), ' ');
  }

  static void graph_duration(uint64_t duration, TextOut& out) {
    size_t start = out.size();
    append_uint(out, duration / 1000);
    if (out.size() - start < 7) {
      out += '.';
      append_uint(out, duration % 1000, 3, '0');
    }
    size_t len = out.size() - start;
    out += " us "sv;
    if (len < 7) out.append(7 - len, ' ');
    out += "|  "sv;
  }

  void graph_function_name(uint64_t addr, std::string_view suffix, TextOut& out) {
    if (auto func = function_at(ctx, addr))
      out += func->name;
    else
      append_hex(out, addr);
    out += suffix;
  }

  void funcgraph_entry(const Record& record, const EventFormat& event, EventStream& stream, TextOut& out) {
    const Field* common_pid = ctx.common_pid();
    if (!common_pid) { out += '!'; return; }
    uint64_t pid = common_pid->read_uint(record.data, ctx.endian);
    auto func = field_value(event, "func", record, ctx, out, true);
    if (!func) { out += '!'; return; }

    const Record* exit = nullptr;
    if (funcgraph_exit) {
      auto peeked = stream.peek_next_in_buffer();
      if (peeked.ok() && *peeked && is_matching_exit(**peeked, pid, *func)) exit = *peeked;
    }
    if (exit) {
      const Field* rettime = any_field(*funcgraph_exit, "rettime");
      const Field* calltime = any_field(*funcgraph_exit, "calltime");
      if (!rettime || !calltime) { out += '!'; return; }
      uint64_t duration = rettime->read_uint(exit->data, ctx.endian) - calltime->read_uint(exit->data, ctx.endian);
      stream.consume_peeked();
      graph_overhead(duration, out);
      graph_duration(duration, out);
      auto depth = field_value(event, "depth", record, ctx, out, true);
      if (!depth) { out += '!'; return; }
      indent_for_depth(*depth, out);
      graph_function_name(*func, "();", out);
      return;
    }
    graph_overhead(~0ull, out);
    out += "           |  "sv;
    auto depth = field_value(event, "depth", record, ctx, out, true);
    if (!depth) { out += '!'; return; }
    indent_for_depth(*depth, out);
    graph_function_name(*func, "() {", out);
  }

  bool is_matching_exit(const Record& next, uint64_t pid, uint64_t func) {
    const Field* type = ctx.common_type();
    const Field* common_pid = ctx.common_pid();
    if (!type || !common_pid) return false;
    if (type->read_uint(next.data, ctx.endian) != funcgraph_exit->id) return false;
    if (common_pid->read_uint(next.data, ctx.endian) != pid) return false;
    const Field* exit_func = any_field(*funcgraph_exit, "func");
    return exit_func && exit_func->read_uint(next.data, ctx.endian) == func;
  }

  void funcgraph_exit_line(const Record& record, const EventFormat& event, TextOut& out) {
    auto rettime = field_value(event, "rettime", record, ctx, out, true);
    if (!rettime) { out += '!'; return; }
    auto calltime = field_value(event, "calltime", record, ctx, out, true);
    if (!calltime) { out += '!'; return; }
    uint64_t duration = *rettime - *calltime;
    graph_overhead(duration, out);
    graph_duration(duration, out);
    auto depth = field_value(event, "depth", record, ctx, out, true);
    if (!depth) { out += '!'; return; }
    indent_for_depth(*depth, out);
    out += '}';
  }
};

Plugins::Plugins(TraceContext& ctx, bool ns_stamps) : state_(std::make_unique<State>(ctx, ns_stamps)) {
  using Kind = State::Kind;
  auto add = [&](std::string_view system, std::string_view name, Kind kind) {
    if (const EventFormat* event = ctx.event_by_name(system, name)) state_->handlers[event] = kind;
  };
  add("sched", "sched_switch", Kind::sched_switch);
  add("sched", "sched_wakeup", Kind::sched_wakeup);
  add("sched", "sched_wakeup_new", Kind::sched_wakeup);
  add("ftrace", "function", Kind::function);
  add("ftrace", "kernel_stack", Kind::kernel_stack);
  add("ftrace", "raw_data", Kind::raw_data);
  add("ftrace", "func_repeats", Kind::func_repeats);
  add("ftrace", "funcgraph_entry", Kind::funcgraph_entry);
  add("ftrace", "funcgraph_exit", Kind::funcgraph_exit);
  for (std::string_view name : {"kfree", "kmalloc", "kmalloc_node", "kmem_cache_alloc", "kmem_cache_alloc_node",
                                "kmem_cache_free"})
    add("kmem", name, Kind::kmem_call_site);
  add("timer", "hrtimer_expire_entry", Kind::hrtimer_expire_entry);
  add("timer", "hrtimer_start", Kind::hrtimer_start);
  add("tlb", "tlb_flush", Kind::tlb_flush);
  add("syscalls", "sys_enter_futex", Kind::futex);
  state_->funcgraph_exit = ctx.event_by_name("ftrace", "funcgraph_exit");
  state_->handler_by_id.resize(ctx.dense_id_bound());
  for (const auto& [event, kind] : state_->handlers)
    if (event->id < state_->handler_by_id.size() && !state_->handler_by_id[event->id].event)
      state_->handler_by_id[event->id] = {event, kind};
}

Plugins::~Plugins() = default;

Plugins::Outcome Plugins::print(const Record& record, const EventFormat& event, EventStream& stream,
                                TextOut& out) {
  State& s = *state_;
  // A table by event id answers most records; the map the rest.
  State::Kind kind;
  const State::Handler* by_id = event.id < s.handler_by_id.size() ? &s.handler_by_id[event.id] : nullptr;
  if (by_id && !by_id->event) return Outcome::not_handled;
  if (by_id && by_id->event == &event) {
    kind = by_id->kind;
  } else {
    auto it = s.handlers.find(&event);
    if (it == s.handlers.end()) return Outcome::not_handled;
    kind = it->second;
  }
  switch (kind) {
    case State::Kind::sched_switch: s.sched_switch(record, event, out); break;
    case State::Kind::sched_wakeup: s.sched_wakeup(record, event, out); break;
    case State::Kind::function: s.function(record, event, out); break;
    case State::Kind::kernel_stack: s.kernel_stack(record, event, out); break;
    case State::Kind::raw_data: s.raw_data(record, event, out); break;
    case State::Kind::func_repeats: s.func_repeats(record, event, out); break;
    case State::Kind::funcgraph_entry: s.funcgraph_entry(record, event, stream, out); break;
    case State::Kind::funcgraph_exit: s.funcgraph_exit_line(record, event, out); break;
    case State::Kind::kmem_call_site: s.kmem_call_site(record, event, out); return Outcome::print_fmt_next;
    case State::Kind::hrtimer_expire_entry: s.hrtimer_expire_entry(record, event, out); break;
    case State::Kind::hrtimer_start: s.hrtimer_start(record, event, out); break;
    case State::Kind::tlb_flush:
      return s.tlb_flush(record, event, out) ? Outcome::printed : Outcome::print_fmt_next;
    case State::Kind::futex:
      return s.futex(record, event, out) ? Outcome::printed : Outcome::print_fmt_next;
  }
  return Outcome::printed;
}

}  // namespace tracebed::decode
