#include "framework/tracefs/sql.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/tracefs/text.h"

namespace tracebed::tracefs {

// ---- formats ----

const SqlFormatField* SqlFormat::field(std::string_view name) const {
  for (const SqlFormatField& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

namespace {

std::optional<uint64_t> to_uint(std::string_view s) { return base::parse_number<uint64_t>(trim(s)); }

// "offset:8;\tsize:16;" -> the number after key.
std::optional<uint64_t> attr(std::string_view line, std::string_view key) {
  size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + key.size());
  return to_uint(rest.substr(0, rest.find(';')));
}

}  // namespace

Result<SqlFormat> parse_sql_format(const EventName& event, std::string_view format_text) {
  SqlFormat out;
  out.event = event;
  size_t line_no = 0;
  for (std::string_view line : split_lines(format_text)) {
    ++line_no;
    std::string_view t = trim(line);
    if (!t.starts_with("field:")) continue;
    // "field:char next_comm[16];\toffset:8;\tsize:16;\tsigned:0;"
    std::string_view decl = t.substr(6, t.find(';') - 6);
    size_t sp = decl.find_last_of(" \t");
    if (sp == std::string_view::npos)
      return Error{fmt::format("{} format line {}: expected \"field:<type> <name>;\", read \"{}\"", event.str(),
                               line_no, t)};
    SqlFormatField f;
    f.type = trim(decl.substr(0, sp));
    std::string_view name = decl.substr(sp + 1);
    if (size_t br = name.find('['); br != std::string_view::npos) {
      f.array_len = static_cast<uint32_t>(to_uint(name.substr(br + 1, name.find(']') - br - 1)).value_or(0));
      name = name.substr(0, br);
    }
    f.name = name;
    f.dynamic = f.type.starts_with("__data_loc") || f.type.starts_with("__rel_loc");
    auto size = attr(t, "size:");
    auto is_signed = attr(t, "signed:");
    if (!size || !is_signed)
      return Error{fmt::format("{} format line {}: no size or signed in \"{}\"", event.str(), line_no, t)};
    f.size = static_cast<uint32_t>(*size);
    f.is_signed = *is_signed != 0;
    if (f.array_len == 0 && !f.dynamic && f.type.ends_with("]")) f.array_len = f.size;
    out.fields.push_back(std::move(f));
  }
  if (out.fields.empty()) return Error{fmt::format("{} format: no fields", event.str())};
  return out;
}

SqlFormat synth_format(const SynthDef& ev) {
  SqlFormat out;
  out.event = {"synthetic", ev.name()};
  // The common fields every event has (kernel/trace/trace_events.c).
  out.fields = {{"common_type", "unsigned short", 2, false, 0, false},
                {"common_flags", "unsigned char", 1, false, 0, false},
                {"common_preempt_count", "unsigned char", 1, false, 0, false},
                {"common_pid", "int", 4, true, 0, false}};
  for (const SynthField& f : ev.fields()) {
    SqlFormatField g;
    g.name = f.name;
    g.type = f.type;
    switch (f.kind) {
      case SynthField::Kind::string:
        g.size = f.size;
        g.array_len = f.size;
        g.is_signed = true;
        break;
      case SynthField::Kind::dynamic:
        g.type = "__data_loc char[]";
        g.size = 4;
        g.dynamic = true;
        break;
      case SynthField::Kind::stack:
        g.type = "__data_loc unsigned long[]";
        g.size = 4;
        g.dynamic = true;
        break;
      case SynthField::Kind::scalar: {
        // kernel/trace/trace_events_synth.c synth_field_size/synth_field_signed.
        const std::string& t = f.type;
        if (t == "u8" || t == "unsigned char") g.size = 1;
        else if (t == "s8" || t == "char" || t == "bool") g.size = 1, g.is_signed = true;
        else if (t == "u16") g.size = 2;
        else if (t == "s16") g.size = 2, g.is_signed = true;
        else if (t == "u32" || t == "unsigned int" || t == "gfp_t") g.size = 4;
        else if (t == "s32" || t == "int" || t == "pid_t") g.size = 4, g.is_signed = true;
        else if (t == "s64" || t == "long") g.size = 8, g.is_signed = true;
        else g.size = 8;  // u64, unsigned long
        break;
      }
    }
    out.fields.push_back(std::move(g));
  }
  return out;
}

SqlResolver SqlResolver::with(std::vector<SynthDef> synthetic) const {
  auto known = std::make_shared<std::vector<SynthDef>>(std::move(synthetic));
  SqlResolver base = *this;
  SqlResolver r;
  r.event = [known, base](std::string_view name) -> Result<EventName> {
    for (const SynthDef& s : *known)
      if (s.name() == name) return EventName{"synthetic", s.name()};
    return base.event(name);
  };
  r.format = [known, base](const EventName& ev) -> Result<SqlFormat> {
    if (ev.system == "synthetic")
      for (const SynthDef& s : *known)
        if (s.name() == ev.name) return synth_format(s);
    return base.format(ev);
  };
  return r;
}

SqlResolver tracefs_resolver(const Tracefs& fs) {
  auto events = std::make_shared<std::optional<std::vector<EventName>>>();
  SqlResolver r;
  r.event = [fs, events](std::string_view name) -> Result<EventName> {
    if (!*events) {
      TRACEBED_ASSIGN_OR_RETURN(std::vector<EventName> all, fs.available_events());
      *events = std::move(all);
    }
    std::vector<EventName> found;
    for (const EventName& e : **events)
      if (e.name == name) found.push_back(e);
    if (found.empty()) return Error{fmt::format("no event \"{}\" in {}/available_events", name, fs.root())};
    if (found.size() > 1) {
      std::string all;
      for (const EventName& e : found) all += (all.empty() ? "" : ", ") + e.system + "." + e.name;
      return Error{fmt::format("event \"{}\" is in several systems ({}): write <system>.<event>", name, all)};
    }
    return found.front();
  };
  r.format = [fs](const EventName& ev) -> Result<SqlFormat> {
    TRACEBED_ASSIGN_OR_RETURN(std::string text, fs.top().event(ev.system, ev.name).format());
    return parse_sql_format(ev, text);
  };
  return r;
}

// ---- tokens ----

namespace {

enum class Tok { ident, number, string, op, end };

struct Token {
  Tok kind = Tok::end;
  std::string text;
  size_t pos = 0;
  bool escaped = false;  // "\from": a field, not the keyword
};

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string excerpt(std::string_view sql, size_t pos) {
  std::string_view rest = sql.substr(std::min(pos, sql.size()));
  std::string s(rest.substr(0, 40));
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (rest.size() > 40) s += " ...";
  return s.empty() ? "the end" : "\"" + s + "\"";
}

Result<std::vector<Token>> tokenize(std::string_view sql) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.pos = i;
    if (c == '\\' && i + 1 < sql.size() && is_ident_start(sql[i + 1])) {
      t.escaped = true;
      ++i;
      c = sql[i];
    }
    if (is_ident_start(c)) {
      size_t e = i;
      while (e < sql.size() && is_ident_char(sql[e])) ++e;
      t.kind = Tok::ident;
      t.text = sql.substr(i, e - i);
      i = e;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t e = i;
      while (e < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[e])))) ++e;
      t.kind = Tok::number;
      t.text = sql.substr(i, e - i);
      i = e;
    } else if (c == '"' || c == '\'') {
      size_t e = sql.find(c, i + 1);
      if (e == std::string_view::npos)
        return Error{fmt::format("sql: unterminated string at {}", excerpt(sql, i))};
      t.kind = Tok::string;
      t.text = sql.substr(i + 1, e - i - 1);
      i = e + 1;
    } else {
      static constexpr std::string_view two[] = {"&&", "||", "==", "!=", "<=", ">=", "=~"};
      t.kind = Tok::op;
      for (std::string_view op : two)
        if (sql.substr(i, 2) == op) t.text = op;
      if (t.text.empty()) {
        if (std::string_view("(),.+-*/&|!<>=~").find(c) == std::string_view::npos)
          return Error{fmt::format("sql: unexpected '{}' at {}", c, excerpt(sql, i))};
        t.text = std::string(1, c);
      }
      i += t.text.size();
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.pos = sql.size();
  out.push_back(end);
  return out;
}

// ---- the statement ----

using FieldRef = std::vector<std::string>;  // "start.pid" -> {"start", "pid"}

struct Item {
  size_t pos = 0;
  FieldRef a;
  char op = 0;  // '+' or '-' between a and b
  FieldRef b;
  std::string cast;  // CAST(a AS <cast>)
  int delta = 0;     // TIMESTAMP_DELTA (1) / TIMESTAMP_DELTA_USECS (2)
  std::string as;
};

struct EventRef {
  size_t pos = 0;
  std::string system, name, alias;
};

struct Match {
  size_t pos = 0;
  FieldRef a, b;
};

struct Statement {
  std::vector<Item> items;
  EventRef from;
  std::optional<EventRef> join;
  std::vector<Match> on;
  std::vector<Token> where;
};

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> toks) : sql_(sql), t_(std::move(toks)) {}

  Result<Statement> parse() {
    Statement s;
    TRACEBED_TRY(expect_keyword("SELECT"));
    do {
      TRACEBED_ASSIGN_OR_RETURN(Item it, item());
      s.items.push_back(std::move(it));
    } while (accept_op(","));
    TRACEBED_TRY(expect_keyword("FROM"));
    TRACEBED_ASSIGN_OR_RETURN(s.from, event_ref());
    if (accept_keyword("JOIN")) {
      TRACEBED_ASSIGN_OR_RETURN(EventRef j, event_ref());
      s.join = j;
      TRACEBED_TRY(expect_keyword("ON"));
      do {
        Match m;
        m.pos = cur().pos;
        TRACEBED_ASSIGN_OR_RETURN(m.a, field_ref());
        if (!accept_op("=") && !accept_op("==")) return error("expected '=' between the matched fields");
        TRACEBED_ASSIGN_OR_RETURN(m.b, field_ref());
        s.on.push_back(std::move(m));
      } while (accept_op("&&") || accept_keyword("AND"));
    }
    if (accept_keyword("WHERE")) {
      while (cur().kind != Tok::end) s.where.push_back(t_[i_++]);
      if (s.where.empty()) return error("expected a filter after WHERE");
    }
    if (cur().kind != Tok::end) return error("unexpected text");
    return s;
  }

 private:
  const Token& cur() const { return t_[i_]; }
  Error error(std::string_view what) const {
    return Error{fmt::format("sql: {} at {}", what, excerpt(sql_, cur().pos))};
  }
  bool is_keyword(std::string_view kw) const {
    return cur().kind == Tok::ident && !cur().escaped && iequals(cur().text, kw);
  }
  bool accept_keyword(std::string_view kw) {
    if (!is_keyword(kw)) return false;
    ++i_;
    return true;
  }
  Status expect_keyword(std::string_view kw) {
    if (!accept_keyword(kw)) return error(fmt::format("expected {}", kw));
    return {};
  }
  bool accept_op(std::string_view op) {
    if (cur().kind != Tok::op || cur().text != op) return false;
    ++i_;
    return true;
  }
  bool is_reserved() const {
    for (std::string_view kw : {"SELECT", "FROM", "JOIN", "ON", "WHERE", "AS", "AND", "OR", "CAST"})
      if (is_keyword(kw)) return true;
    return false;
  }
  Result<std::string> ident(std::string_view what) {
    if (cur().kind != Tok::ident || is_reserved()) return error(fmt::format("expected {}", what));
    return t_[i_++].text;
  }
  Result<FieldRef> field_ref() {
    FieldRef f;
    TRACEBED_ASSIGN_OR_RETURN(std::string first, ident("a field"));
    f.push_back(std::move(first));
    while (accept_op(".")) {
      TRACEBED_ASSIGN_OR_RETURN(std::string next, ident("a field after '.'"));
      f.push_back(std::move(next));
    }
    return f;
  }
  Result<EventRef> event_ref() {
    EventRef e;
    e.pos = cur().pos;
    TRACEBED_ASSIGN_OR_RETURN(e.name, ident("an event"));
    if (accept_op(".") || accept_op(":")) {
      e.system = e.name;
      TRACEBED_ASSIGN_OR_RETURN(e.name, ident("an event after its system"));
    }
    if (accept_keyword("AS")) {
      TRACEBED_ASSIGN_OR_RETURN(e.alias, ident("an alias after AS"));
    }
    return e;
  }
  Result<Item> item() {
    Item it;
    it.pos = cur().pos;
    if (accept_keyword("CAST")) {
      if (!accept_op("(")) return error("expected '(' after CAST");
      TRACEBED_ASSIGN_OR_RETURN(it.a, field_ref());
      TRACEBED_TRY(expect_keyword("AS"));
      TRACEBED_ASSIGN_OR_RETURN(it.cast, ident("a type after AS"));
      if (accept_op("-")) {  // SYM-OFFSET
        TRACEBED_ASSIGN_OR_RETURN(std::string more, ident("a type"));
        it.cast += "-" + more;
      }
      if (!accept_op(")")) return error("expected ')' to close CAST");
    } else if (accept_keyword("TIMESTAMP_DELTA")) {
      it.delta = 1;
    } else if (accept_keyword("TIMESTAMP_DELTA_USECS")) {
      it.delta = 2;
    } else {
      int parens = 0;
      while (accept_op("(")) ++parens;
      TRACEBED_ASSIGN_OR_RETURN(it.a, field_ref());
      if (cur().kind == Tok::op && (cur().text == "+" || cur().text == "-")) {
        it.op = t_[i_++].text[0];
        TRACEBED_ASSIGN_OR_RETURN(it.b, field_ref());
      }
      for (; parens > 0; --parens)
        if (!accept_op(")")) return error("expected ')'");
    }
    if (accept_keyword("AS")) {
      TRACEBED_ASSIGN_OR_RETURN(it.as, ident("a name after AS"));
    }
    return it;
  }

  std::string_view sql_;
  std::vector<Token> t_;
  size_t i_ = 0;
};

// ---- the compiler ----

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
  TRACEBED_ASSIGN_OR_RETURN(std::vector<Token> toks, tokenize(sql));
  Parser p(sql, std::move(toks));
  TRACEBED_ASSIGN_OR_RETURN(Statement s, p.parse());
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
