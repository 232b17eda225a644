// -F / -v: which events a filter names (parse-filter.c find_event), how a
// record is tested (test_filter) and how trace-read.c combines the results.
#include "framework/decode/record_filter.h"

#include <cctype>

#include <fmt/format.h>

#include "framework/decode/line_head.h"
#include "framework/decode/record_filter_internal.h"

namespace tracebed::decode {

namespace filter {

Result<std::shared_ptr<Regex>> Regex::compile(const std::string& pattern) {
  std::shared_ptr<Regex> re(new Regex());
  if (regcomp(&re->re_, pattern.c_str(), REG_ICASE | REG_NOSUB) != 0)
    return Error{fmt::format("bad regular expression '{}'", pattern)};
  re->compiled_ = true;
  return re;
}

Regex::~Regex() {
  if (compiled_) regfree(&re_);
}

bool Regex::matches(const std::string& text) const { return regexec(&re_, text.c_str(), 0, nullptr, 0) == 0; }

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// find_event: "system/event" or "name" (a system or an event), anchored
// regular expressions without case; an error if nothing matches.
Status add_events(TraceContext& ctx, std::string_view spec, std::vector<const EventFormat*>& out) {
  // strtok_r on "/": empty parts are skipped.
  std::vector<std::string_view> parts;
  for (size_t pos = 0; pos <= spec.size();) {
    size_t slash = spec.find('/', pos);
    if (slash == std::string_view::npos) slash = spec.size();
    if (slash > pos) parts.push_back(spec.substr(pos, slash - pos));
    pos = slash + 1;
  }
  if (parts.empty()) return Error{"an empty event name"};
  const std::string event_re = fmt::format("^{}$", trim(parts.size() > 1 ? parts[1] : parts[0]));
  TRACEBED_ASSIGN_OR_RETURN(auto ereg, Regex::compile(event_re));
  std::shared_ptr<Regex> sreg;
  if (parts.size() > 1) {
    TRACEBED_ASSIGN_OR_RETURN(sreg, Regex::compile(fmt::format("^{}$", trim(parts[0]))));
  }
  bool any = false;
  for (const auto& e : ctx.events()) {
    const bool hit = sreg ? sreg->matches(e->system) && ereg->matches(e->name)
                          : ereg->matches(e->system) || ereg->matches(e->name);
    if (!hit) continue;
    any = true;
    out.push_back(e.get());
  }
  if (!any) return Error{fmt::format("no event matches '{}'", spec)};
  return {};
}

}  // namespace
}  // namespace filter

using filter::Expr;
using filter::Kind;
using filter::Node;

namespace {

// tep_filter_add_filter_str: "EVENTS[:EXPRESSION]", EVENTS split at ','.
Result<std::unique_ptr<RecordFilter::Tree>> parse_one(TraceContext& ctx, const std::string& text) {
  const size_t colon = text.find(':');
  const std::string_view events = std::string_view(text).substr(0, colon);
  std::vector<const EventFormat*> matched;
  for (size_t pos = 0;;) {
    const size_t comma = events.find(',', pos);
    TRACEBED_TRY(filter::add_events(ctx, events.substr(pos, comma - pos), matched));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  auto tree = std::make_unique<RecordFilter::Tree>();
  std::optional<Error> failed;
  for (const EventFormat* event : matched) {
    Expr expr;
    if (colon == std::string::npos) {
      Node all;
      all.boolean = true;  // the event with no expression: every record
      expr.nodes.push_back(std::move(all));
      expr.root = 0;
    } else {
      auto parsed = filter::parse_expression(*event, std::string_view(text).substr(colon + 1));
      if (!parsed) {
        // libtraceevent goes on with the other events, then fails.
        if (!failed) failed = parsed.error().within(fmt::format("event {}:{}", event->system, event->name));
        continue;
      }
      expr = std::move(parsed).value();
    }
    tree->by_id[event->id] = std::move(expr);  // a later mention wins
  }
  if (failed) return *failed;
  return tree;
}

}  // namespace

Result<std::shared_ptr<RecordFilter>> RecordFilter::make(TraceContext& ctx, const std::vector<Spec>& specs) {
  std::shared_ptr<RecordFilter> f(new RecordFilter(ctx));
  for (const Spec& spec : specs) {
    auto tree = parse_one(ctx, spec.text);
    if (!tree) return tree.error().within(fmt::format("filter '{}'", spec.text));
    (spec.inverted ? f->negative_ : f->positive_).push_back(std::move(tree).value());
  }
  if (const EventFormat* stack = ctx.event_by_name("ftrace", "kernel_stack")) f->kernel_stack_id_ = stack->id;
  if (const EventFormat* stack = ctx.event_by_name("ftrace", "user_stack")) f->user_stack_id_ = stack->id;
  return f;
}

RecordFilter::RecordFilter(TraceContext& ctx) : ctx_(ctx) {}
RecordFilter::~RecordFilter() = default;

namespace {

struct Eval {
  TraceContext& ctx;
  const Record& record;
  const Expr& expr;
  bool error = false;  // libtraceevent's err: the record is neither match nor miss

  const Node& node(int i) const { return expr.nodes[static_cast<size_t>(i)]; }

  // get_value: the field's bytes as a number, sign-extended when signed.
  uint64_t field_value(const Node& n) const {
    if (n.special == filter::Special::cpu) return static_cast<uint64_t>(static_cast<int64_t>(record.cpu));
    if (!n.field) return 0;  // COMM as a number: libtraceevent compares a pointer
    const Field& f = *n.field;
    if (f.size != 1 && f.size != 2 && f.size != 4 && f.size != 8) return 0;
    const uint64_t v = f.read_uint(record.data, ctx.endian);
    return f.has(kFieldSigned) ? static_cast<uint64_t>(f.read_int(record.data, ctx.endian)) : v;
  }

  uint64_t value(int i) {
    if (i < 0) {  // an operator without its operand ("pid =="): libtraceevent crashes
      error = true;
      return 0;
    }
    const Node& n = node(i);
    switch (n.kind) {
      case Kind::field: return field_value(n);
      case Kind::value:
        if (n.value_type != filter::ValueType::number) error = true;
        return n.number;
      case Kind::exp: return exp(n);
      default: error = true; return 0;
    }
  }

  uint64_t exp(const Node& n) {
    const uint64_t l = value(n.left), r = value(n.right);
    if (error) return 0;
    using filter::Exp;
    switch (n.exp) {
      case Exp::add: return l + r;
      case Exp::sub: return l - r;
      case Exp::mul: return l * r;
      case Exp::div: return r ? l / r : (error = true, 0);
      case Exp::mod: return r ? l % r : (error = true, 0);
      case Exp::rshift: return r < 64 ? l >> r : 0;
      case Exp::lshift: return r < 64 ? l << r : 0;
      case Exp::and_: return l & r;
      case Exp::or_: return l | r;
      case Exp::xor_: return l ^ r;
      default: error = true; return 0;
    }
  }

  bool compare(const Node& n) {
    const uint64_t l = value(n.left), r = value(n.right);
    if (error) return false;
    using filter::Cmp;
    switch (n.cmp) {
      case Cmp::eq: return l == r;
      case Cmp::ne: return l != r;
      case Cmp::gt: return l > r;
      case Cmp::lt: return l < r;
      case Cmp::ge: return l >= r;
      case Cmp::le: return l <= r;
      default: error = true; return false;
    }
  }

  // get_field_str: a string field's text (cut at its size when its last
  // byte is not NUL, as libtraceevent's copy does), a pointer or long as
  // the function it points into, anything else as hex.
  std::string field_text(const Node& n) const {
    if (n.special == filter::Special::comm) {
      const Field* pid = ctx.common_pid();
      return std::string(task_comm(ctx, pid ? static_cast<int>(pid->read_int(record.data, ctx.endian)) : 0));
    }
    if (!n.field) return fmt::format("{:#x}", field_value(n));  // CPU
    const Field& f = *n.field;
    if (f.has(kFieldString)) {
      const Bytes p = f.payload(record.data, ctx.endian);
      std::string_view s(reinterpret_cast<const char*>(p.data()), p.size());
      if (!s.empty() && s.back() != '\0') s = s.substr(0, f.size);
      return std::string(s.substr(0, s.find('\0')));
    }
    const uint64_t v = field_value(n);
    if (f.has(kFieldPointer) || f.has(kFieldLong))
      if (auto sym = ctx.lookup_symbol(v)) return std::string(sym->name);
    return fmt::format("{:#x}", v);
  }

  bool string_compare(const Node& n) const {
    const std::string v = field_text(n);
    using filter::Cmp;
    switch (n.cmp) {
      case Cmp::match: return v == n.text;
      case Cmp::not_match: return v != n.text;
      case Cmp::regex: return n.regex->matches(v);
      case Cmp::not_regex: return !n.regex->matches(v);
      default: return false;
    }
  }

  bool test(int i) {
    if (error || i < 0) {
      error = true;
      return false;
    }
    const Node& n = node(i);
    switch (n.kind) {
      case Kind::boolean: return n.boolean;
      case Kind::op:
        if (n.op == filter::Op::not_) return !test(n.right);
        if (n.op == filter::Op::and_) return test(n.left) && test(n.right);
        return test(n.left) || test(n.right);
      case Kind::num: return compare(n);
      case Kind::str: return string_compare(n);
      default: return value(i) != 0;
    }
  }
};

}  // namespace

RecordFilter::Outcome RecordFilter::match(const Tree& filter, const Record& record, uint32_t id) const {
  if (filter.by_id.empty()) return Outcome::none;
  auto it = filter.by_id.find(id);
  if (it == filter.by_id.end()) return Outcome::not_found;
  Eval eval{ctx_, record, it->second};
  const bool hit = eval.test(it->second.root);
  if (eval.error) return Outcome::error;
  return hit ? Outcome::match : Outcome::miss;
}

// libtracecmd's tracecmd_filter_match (trace-cmd 3.1.x): a record is
// printed when a filter before -v matches it (or there is none) and no
// filter after -v does. A kernel_stack or user_stack record no filter names
// goes with what its CPU printed last.
bool RecordFilter::keep(const Record& record, const EventFormat* event) {
  const Field* type = ctx_.common_type();
  const auto id = event ? event->id : type ? static_cast<uint32_t>(type->read_uint(record.data, ctx_.endian)) : 0;
  auto any_match = [&](const std::vector<std::unique_ptr<Tree>>& filters) {
    for (const auto& f : filters) {
      const Outcome r = match(*f, record, id);
      if (r == Outcome::none || r == Outcome::match) return true;
    }
    return false;
  };
  const uint64_t cpu_key = uint64_t{record.buffer} << 32 | static_cast<uint32_t>(record.cpu);
  if (!positive_.empty() && !any_match(positive_)) {
    const bool stack = (kernel_stack_id_ && id == *kernel_stack_id_) || (user_stack_id_ && id == *user_stack_id_);
    if (!stack || !last_printed_[cpu_key]) return false;
  }
  const bool printed = !any_match(negative_);
  last_printed_[cpu_key] = printed;
  return printed;
}

}  // namespace tracebed::decode
