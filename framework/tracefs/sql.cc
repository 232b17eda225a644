#include "framework/tracefs/sql.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/sql_statement.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

// The compiler: a parsed statement (sql_statement.h) to the hist triggers
// and synthetic event libtracefs's tracefs_sql() would make.

namespace {

using sql::EventRef;
using sql::excerpt;
using sql::FieldRef;
using sql::iequals;
using sql::Item;
using sql::Match;
using sql::Statement;
using sql::Tok;
using sql::Token;

std::string join_ref(const FieldRef& f) {
  std::string s;
  for (const std::string& p : f) s += (s.empty() ? "" : ".") + p;
  return s;
}

// TIMESTAMP, TIMESTAMP_USECS, STACKTRACE: what the hist trigger calls them.
std::optional<std::string> special_field(std::string_view f) {
  if (iequals(f, "TIMESTAMP")) return std::string("common_timestamp");
  if (iequals(f, "TIMESTAMP_USECS")) return std::string("common_timestamp.usecs");
  if (iequals(f, "STACKTRACE")) return std::string("common_stacktrace");
  return std::nullopt;
}

uint32_t name_tag(std::string_view name) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h % 32768;  // the range of libtracefs's make_rand()
}

struct Side {
  EventName event;
  std::string alias;
  SqlFormat format;
};

struct Resolved {
  int side = 0;        // 0 start, 1 end
  std::string field;   // as the trigger names it: "pid", "common_timestamp.usecs"
  std::string name;    // the bare name: "pid", "TIMESTAMP_USECS"
  const SqlFormatField* format = nullptr;  // null for the special fields
  bool special = false;
};

class Compiler {
 public:
  Compiler(std::string_view sql, std::string_view name, const SqlResolver& r, SqlOptions o)
      : sql_(sql), name_(name), r_(r), opts_(o), tag_(name_tag(name)) {}

  Result<SqlHistDef> compile(const Statement& s) {
    TRACEBED_ASSIGN_OR_RETURN(Side start, side(s.from));
    sides_.push_back(std::move(start));
    if (s.join) {
      TRACEBED_ASSIGN_OR_RETURN(Side end, side(*s.join));
      sides_.push_back(std::move(end));
      return synthetic(s);
    }
    return histogram(s);
  }

 private:
  Error error(size_t pos, std::string_view what) const {
    return Error{fmt::format("sql: {} at {}", what, excerpt(sql_, pos))};
  }

  Result<Side> side(const EventRef& e) {
    Side s;
    s.alias = e.alias;
    if (e.system.empty()) {
      auto ev = r_.event(e.name);
      if (!ev) return error(e.pos, fmt::format("unknown event \"{}\" ({})", e.name, ev.error().message));
      s.event = *ev;
    } else {
      s.event = {e.system, e.name};
    }
    auto f = r_.format(s.event);
    if (!f) return error(e.pos, fmt::format("no format for {}.{} ({})", s.event.system, s.event.name, f.error().message));
    s.format = std::move(*f);
    return s;
  }

  bool names_side(const std::string& x, const Side& s) const {
    return (!s.alias.empty() && x == s.alias) || (s.alias.empty() && x == s.event.name);
  }

  Result<Resolved> resolve(const FieldRef& f, size_t pos) const {
    Resolved r;
    std::string field;
    if (f.size() == 1) {
      if (sides_.size() > 1) return error(pos, fmt::format("\"{}\" needs its event: <alias>.{}", f[0], f[0]));
      r.side = 0;
      field = f[0];
    } else if (f.size() == 2 || f.size() == 3) {
      std::string ev = f.size() == 2 ? f[0] : f[1];
      std::string sys = f.size() == 3 ? f[0] : "";
      int found = -1;
      for (size_t i = 0; i < sides_.size(); ++i) {
        bool match = f.size() == 2 ? names_side(ev, sides_[i])
                                   : sides_[i].event.system == sys && sides_[i].event.name == ev;
        if (!match) continue;
        if (found >= 0)
          return error(pos, fmt::format("\"{}\" could be either event: give them aliases with AS", join_ref(f)));
        found = static_cast<int>(i);
      }
      if (found < 0) return error(pos, fmt::format("\"{}\" names no event of the statement", join_ref(f)));
      r.side = found;
      field = f.back();
    } else {
      return error(pos, fmt::format("\"{}\": expected [<event>.]<field>", join_ref(f)));
    }
    r.name = field;
    if (auto sp = special_field(field)) {
      r.field = *sp;
      r.special = true;
      return r;
    }
    const SqlFormat& fmt_ = sides_[r.side].format;
    r.format = fmt_.field(field);
    if (!r.format) {
      std::string names;
      for (const SqlFormatField& g : fmt_.fields)
        if (!g.name.starts_with("common_")) names += (names.empty() ? "" : " ") + g.name;
      return error(pos, fmt::format("{}.{} has no field \"{}\" (fields: {})", fmt_.event.system, fmt_.event.name,
                                    field, names));
    }
    r.field = field;
    return r;
  }

  // libtracefs src/tracefs-hist.c add_synth_field: the synthetic type of
  // an event field.
  Result<SynthField> synth_field(const Resolved& r, const std::string& name, size_t pos) const {
    SynthField f;
    f.name = name;
    if (r.special) {
      if (r.field == "common_stacktrace") {
        f.type = "long";
        f.kind = SynthField::Kind::stack;
      } else {
        f.type = "u64";
      }
      return f;
    }
    const SqlFormatField& g = *r.format;
    bool is_char = g.type.find("char") != std::string::npos;
    if (g.dynamic) {
      if (!is_char) return error(pos, fmt::format("{}: only char[] dynamic arrays can be passed", r.name));
      f.type = "char";
      f.kind = SynthField::Kind::dynamic;
      return f;
    }
    if (g.array_len) {
      if (!is_char) return error(pos, fmt::format("{}: only char arrays can be passed", r.name));
      f.type = "char";
      f.kind = SynthField::Kind::string;
      f.size = g.size;
      return f;
    }
    if (g.type == "pid_t" || g.type == "gfp_t" || g.type == "bool") {
      f.type = g.type;
      return f;
    }
    switch (g.size) {
      case 1: f.type = g.is_signed ? "char" : "unsigned char"; break;
      case 2: f.type = g.is_signed ? "s16" : "u16"; break;
      case 4: f.type = g.is_signed ? "s32" : "u32"; break;
      case 8: f.type = g.is_signed ? "s64" : "u64"; break;
      default: return error(pos, fmt::format("{}: a {}-byte field has no synthetic type", r.name, g.size));
    }
    return f;
  }

  std::string new_name(std::string_view prefix) { return fmt::format("__{}_{}_{}", prefix, tag_, ++count_); }
  std::string hash_name(const std::string& name) {
    auto it = hashed_.find(name);
    if (it != hashed_.end()) return it->second;
    return hashed_[name] = new_name(name);
  }

  Result<std::pair<std::string, std::string>> filters(const Statement& s) const {
    std::string parts[2];
    if (s.where.empty()) return std::make_pair(std::string(), std::string());
    // Split at the top-level "&&".
    std::vector<std::vector<Token>> conds(1);
    int depth = 0;
    for (const Token& t : s.where) {
      if (t.kind == Tok::op && t.text == "(") ++depth;
      if (t.kind == Tok::op && t.text == ")") --depth;
      bool and_ = (t.kind == Tok::op && t.text == "&&") || (t.kind == Tok::ident && !t.escaped && iequals(t.text, "AND"));
      if (and_ && depth == 0) {
        conds.emplace_back();
        continue;
      }
      conds.back().push_back(t);
    }
    for (const auto& cond : conds) {
      if (cond.empty()) return error(s.where.front().pos, "empty condition in WHERE");
      std::set<int> sides;
      std::string text;
      auto add = [&](const std::string& piece, bool space_before) {
        if (!text.empty() && space_before && text.back() != '(' && text.back() != '!') text += ' ';
        text += piece;
      };
      for (size_t i = 0; i < cond.size(); ++i) {
        const Token& t = cond[i];
        if (t.kind == Tok::ident && !(i + 1 < cond.size() && cond[i + 1].kind == Tok::op && cond[i + 1].text == "(")) {
          bool kw_or = !t.escaped && iequals(t.text, "OR");
          bool kw_and = !t.escaped && iequals(t.text, "AND");
          if (kw_or || kw_and) {
            add(kw_or ? "||" : "&&", true);
            continue;
          }
          FieldRef ref{t.text};
          size_t pos = t.pos;
          while (i + 2 < cond.size() && cond[i + 1].kind == Tok::op && cond[i + 1].text == "." &&
                 cond[i + 2].kind == Tok::ident) {
            ref.push_back(cond[i + 2].text);
            i += 2;
          }
          TRACEBED_ASSIGN_OR_RETURN(Resolved r, resolve(ref, pos));
          sides.insert(r.side);
          add(r.field, true);
        } else if (t.kind == Tok::string) {
          add("\"" + t.text + "\"", true);
        } else if (t.kind == Tok::op && t.text == ")") {
          add(")", false);
        } else {
          add(t.text, true);
        }
      }
      if (sides.size() > 1)
        return error(cond.front().pos,
                     "a condition mixes both events; conditions on different events may only be joined by a "
                     "top-level &&");
      int side = sides.empty() ? 0 : *sides.begin();
      parts[side] += (parts[side].empty() ? "" : " && ") + text;
    }
    return std::make_pair(parts[0], parts[1]);
  }

  Result<SqlHistDef> histogram(const Statement& s) {
    SqlHistDef out;
    out.start = sides_[0].event;
    bool any_key = false;
    for (const Item& it : s.items) {
      if (it.op || it.delta) return error(it.pos, "calculations need two events (JOIN ... ON)");
      TRACEBED_ASSIGN_OR_RETURN(Resolved r, resolve(it.a, it.pos));
      HistField f(r.field);
      std::string c = it.cast;
      if (c.empty()) {
      } else if (iequals(c, "_COUNTER_") || iequals(c, "__COUNTER__")) {
        out.start_hist.val(f);
        continue;
      } else if (iequals(c, "HEX")) f = f.hex();
      else if (iequals(c, "SYM")) f = f.sym();
      else if (iequals(c, "SYM-OFFSET")) f = f.sym_offset();
      else if (iequals(c, "SYSCALL")) f = f.syscall();
      else if (iequals(c, "EXECNAME") || iequals(c, "COMM")) f = f.execname();
      else if (iequals(c, "LOG") || iequals(c, "LOG2")) f = f.log2();
      else return error(it.pos, fmt::format("unknown CAST type \"{}\"", c));
      out.start_hist.key(f);
      any_key = true;
    }
    if (!any_key) return error(0, "a histogram needs at least one key (a field not CAST AS _COUNTER_)");
    TRACEBED_ASSIGN_OR_RETURN(auto f, filters(s));
    if (!f.first.empty()) out.start_hist.filter(f.first);
    return out;
  }

  Result<SqlHistDef> synthetic(const Statement& s) {
    SqlHistDef out;
    out.start = sides_[0].event;
    out.end = sides_[1].event;
    SynthDef ev(name_);
    HistTrigger start, end;
    std::vector<std::string> args;
    if (s.on.empty()) return error(0, "JOIN needs ON <start>.<field> = <end>.<field>");
    for (const Match& m : s.on) {
      TRACEBED_ASSIGN_OR_RETURN(Resolved a, resolve(m.a, m.pos));
      TRACEBED_ASSIGN_OR_RETURN(Resolved b, resolve(m.b, m.pos));
      if (a.side == b.side) return error(m.pos, "ON must match a field of each event");
      if (a.side == 1) std::swap(a, b);
      if (a.format && b.format && a.format->size != b.format->size)
        return error(m.pos, fmt::format("{} ({} bytes) and {} ({} bytes) cannot be matched", a.name, a.format->size,
                                        b.name, b.format->size));
      start.key(a.field);
      end.key(b.field);
    }
    for (const Item& it : s.items) {
      if (!it.cast.empty()) return error(it.pos, "CAST is for histograms (no JOIN)");
      if (it.delta || it.op) {
        Resolved a, b;
        char op = '-';
        if (it.delta) {
          std::string ts = it.delta == 2 ? "TIMESTAMP_USECS" : "TIMESTAMP";
          TRACEBED_ASSIGN_OR_RETURN(a, resolve({sides_[1].alias.empty() ? sides_[1].event.name : sides_[1].alias, ts},
                                               it.pos));
          TRACEBED_ASSIGN_OR_RETURN(b, resolve({sides_[0].alias.empty() ? sides_[0].event.name : sides_[0].alias, ts},
                                               it.pos));
        } else {
          TRACEBED_ASSIGN_OR_RETURN(a, resolve(it.a, it.pos));
          TRACEBED_ASSIGN_OR_RETURN(b, resolve(it.b, it.pos));
          op = it.op;
        }
        if (a.side == b.side) return error(it.pos, "a calculation takes one field of each event");
        std::string name = it.as.empty() && it.delta ? "delta" : it.as;
        if (name.empty()) return error(it.pos, "a calculation needs a name: AS <name>");
        bool start_first = a.side == 0;
        const Resolved& st = start_first ? a : b;
        const Resolved& en = start_first ? b : a;
        if (st.format && (st.format->array_len || st.format->dynamic))
          return error(it.pos, "calculations are not allowed on strings");
        // libtracefs tracefs_synth_add_compare_field: the start value in a
        // variable, the end side computes.
        std::string arg = new_name("arg");
        start.var(arg, st.field);
        std::string expr = op == '+' ? fmt::format("{}+${}", en.field, arg)
                           : start_first ? fmt::format("${}-{}", arg, en.field)
                                         : fmt::format("{}-${}", en.field, arg);
        std::string var = hash_name(name);
        end.var(var, expr);
        TRACEBED_ASSIGN_OR_RETURN(SynthField f, synth_field(st, name, it.pos));
        ev.add(std::move(f));
        args.push_back("$" + var);
        continue;
      }
      TRACEBED_ASSIGN_OR_RETURN(Resolved r, resolve(it.a, it.pos));
      std::string name = it.as.empty() ? r.name : it.as;
      if (r.special && it.as.empty()) return error(it.pos, fmt::format("{} needs a name: AS <name>", r.name));
      TRACEBED_ASSIGN_OR_RETURN(SynthField f, synth_field(r, name, it.pos));
      if (r.side == 1) {
        std::string var = hash_name(name);
        end.var(var, r.field);
        args.push_back("$" + var);
      } else {
        // libtracefs synth_add_start_field: saved by the start event,
        // passed on by the end event.
        std::string var = hash_name(name);
        std::string arg = new_name("arg");
        start.var(arg, r.field);
        end.var(var, "$" + arg);
        args.push_back("$" + var);
      }
      ev.add(std::move(f));
    }
    HistAction match = HistAction::onmatch(sides_[0].event.system, sides_[0].event.name);
    if (opts_.old_action_form) match.synth(name_, args);
    else match.trace(name_, args);
    end.action(std::move(match));
    TRACEBED_ASSIGN_OR_RETURN(auto f, filters(s));
    if (!f.first.empty()) start.filter(f.first);
    if (!f.second.empty()) end.filter(f.second);
    out.synth = std::move(ev);
    out.start_hist = std::move(start);
    out.end_hist = std::move(end);
    return out;
  }

  std::string_view sql_;
  std::string name_;
  const SqlResolver& r_;
  SqlOptions opts_;
  uint32_t tag_;
  int count_ = 0;
  std::map<std::string, std::string> hashed_;
  std::vector<Side> sides_;
};

}  // namespace

Result<SqlHistDef> compile_sql(std::string_view sql, std::string_view name, const SqlResolver& resolver,
                            SqlOptions options) {
  if (name.empty()) return Error{"sql: the synthetic event needs a name"};
  TRACEBED_ASSIGN_OR_RETURN(Statement s, sql::parse_statement(sql));
  Compiler c(sql, name, resolver, options);
  return c.compile(s);
}

std::vector<std::string> SqlHistDef::commands(std::string_view root, bool dynamic_events) const {
  std::vector<std::string> out;
  if (synth) {
    if (dynamic_events) out.push_back(fmt::format("echo '{}' >> {}/dynamic_events", synth->dynamic_command(), root));
    else out.push_back(fmt::format("echo '{}' >> {}/synthetic_events", synth->command(), root));
  }
  out.push_back(
      fmt::format("echo '{}' >> {}/events/{}/{}/trigger", start_hist.command(), root, start.system, start.name));
  if (end && end_hist)
    out.push_back(
        fmt::format("echo '{}' >> {}/events/{}/{}/trigger", end_hist->command(), root, end->system, end->name));
  return out;
}

Result<Synth> SqlHistDef::create(const Instance& top, const Instance* inst, Synth::Via via) const {
  if (!synth || !end || !end_hist)
    return Error{fmt::format("sql: a plain histogram on {}: add start_hist.trigger() to the event", start.str())};
  const Instance& where = inst ? *inst : top;
  TRACEBED_ASSIGN_OR_RETURN(Synth s, Synth::create(top, *synth, via));
  TRACEBED_TRY(s.add_trigger(where.event(start.system, start.name), start_hist.trigger()));
  TRACEBED_TRY(s.add_trigger(where.event(end->system, end->name), end_hist->trigger()));
  return s;
}

}  // namespace tracebed::tracefs
