// The print fmt's arguments, parsed as libtraceevent 1.7.1's
// event_read_print_args does, quirks included: the tree rotates on operator
// priority (so `a * (b + 1)` is a*b + 1, as there), constants fold, and only
// the helper functions its plugins register are known.
#include <fmt/format.h>

#include "framework/decode/print_fmt_internal.h"
#include "framework/decode/print_fmt_lexer.h"

namespace tracebed::decode::print_fmt {

using namespace std::string_view_literals;

namespace {

NodePtr make_atom(std::string text) {
  auto n = std::make_unique<Node>();
  n->kind = K::atom;
  n->number = c_strtoull(text);
  n->text = std::move(text);
  return n;
}

int op_prio(std::string_view op) {
  if (op.size() == 1) {
    switch (op[0]) {
      case '~': case '!': return 4;
      case '*': case '/': case '%': return 6;
      case '+': case '-': return 7;
      case '<': case '>': return 9;
      case '&': return 11;
      case '^': return 12;
      case '|': return 13;
      case '?': return 16;
      default: return -1;
    }
  }
  if (op == "++" || op == "--") return 3;
  if (op == ">>" || op == "<<") return 8;
  if (op == ">=" || op == "<=") return 9;
  if (op == "==" || op == "!=") return 10;
  if (op == "&&") return 14;
  if (op == "||") return 15;
  return -1;
}

bool is_binary_op(std::string_view t) {
  static constexpr std::string_view kOps[] = {">>", "<<", "&", "|", "&&", "||", "-", "+", "*",
                                              "^",  "/",  "%", "<", ">", "<=", ">=", "==", "!="};
  for (auto o : kOps)
    if (t == o) return true;
  return false;
}

// libtraceevent eval_flag: numbers, or a few names old kernels left unconverted.
long long eval_flag(const std::string& s) {
  if (!s.empty() && c_isdigit(static_cast<unsigned char>(s[0]))) return static_cast<long long>(c_strtoull(s));
  static constexpr std::pair<std::string_view, long long> kFlags[] = {
      {"HI_SOFTIRQ", 0},     {"TIMER_SOFTIRQ", 1},   {"NET_TX_SOFTIRQ", 2},  {"NET_RX_SOFTIRQ", 3},
      {"BLOCK_SOFTIRQ", 4},  {"IRQ_POLL_SOFTIRQ", 5}, {"TASKLET_SOFTIRQ", 6}, {"SCHED_SOFTIRQ", 7},
      {"HRTIMER_SOFTIRQ", 8}, {"RCU_SOFTIRQ", 9},    {"HRTIMER_NORESTART", 0}, {"HRTIMER_RESTART", 1},
  };
  for (auto& [name, v] : kFlags)
    if (s == name) return v;
  return -1;
}

// Makes `arg` the operator `op` with what it was as its left operand.
void push_left(Node* arg, std::string op) {
  auto left = std::make_unique<Node>(std::move(*arg));
  *arg = Node{};
  arg->kind = K::op;
  arg->text = std::move(op);
  arg->left = std::move(left);
}

// Helper functions libtraceevent's plugins register and trace-cmd report
// loads (plugin_jbd2.c, plugin_xen.c): print fmts that call them parse.
struct HelperFunction {
  std::string_view name;
  int nr_args;
};
constexpr HelperFunction kHelpers[] = {
    {"jiffies_to_msecs", 1},
    {"jbd2_dev_to_name", 1},
    {"xen_hypercall_name", 1},
};

const HelperFunction* find_helper(std::string_view name) {
  for (const HelperFunction& h : kHelpers)
    if (h.name == name) return &h;
  return nullptr;
}

class Parser {
 public:
  Parser(std::string_view text, const EventFormat& ev) : lex_(text), ev_(ev) {}

  Status parse(std::string& format, std::vector<NodePtr>& args) {
    std::string tok;
    Tok t = lex_.read_item(tok);
    if (t != Tok::item || tok != "print") {
      // Callers pass the text after "print fmt: "; accept both.
      if (t != Tok::dquote) return fail("expected the format string in double quotes");
    } else {
      if (lex_.read(tok) != Tok::item || tok != "fmt") return fail("expected `print fmt:`");
      if (lex_.read(tok) != Tok::op || tok != ":") return fail("expected `print fmt:`");
      if (lex_.read(tok) != Tok::dquote) return fail("expected the format string in double quotes");
    }
    format = tok;
    t = lex_.read_item(tok);
    if (t == Tok::none) return {};
    if (t != Tok::delim || tok != ",") return fail(fmt::format("expected `,` after the format string, got `{}`", tok));

    // event_read_print_args
    t = Tok::error;
    do {
      if (t == Tok::newline) {
        t = lex_.read_item(tok);
        continue;
      }
      auto arg = std::make_unique<Node>();
      t = process_arg(arg.get(), tok);
      if (t == Tok::error) return fail(error_);
      Node* raw = arg.get();
      args.push_back(std::move(arg));
      if (t == Tok::op) {
        t = process_op(raw, tok);
        if (t == Tok::error) return fail(error_);
        consolidate(raw);
        continue;
      }
      if (t == Tok::delim && tok == ",") continue;
      break;
    } while (t != Tok::none);
    return {};
  }

 private:
  Status fail(std::string why) {
    if (why.empty()) why = "cannot parse print fmt";
    return Error{std::move(why)};
  }
  Tok err(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return Tok::error;
  }
  bool expect(Tok got, const std::string& tok, Tok want, std::string_view want_tok) {
    if (got != want || tok != want_tok) {
      err(fmt::format("expected `{}` but read `{}`", want_tok, tok));
      return false;
    }
    return true;
  }

  int find_any_field(std::string_view name) const {
    for (size_t i = 0; i < ev_.fields.size(); ++i)
      if (ev_.fields[i].name == name) return static_cast<int>(i);
    return -1;
  }
  // tep_find_field: the event's own fields only.
  int find_field(std::string_view name) const {
    for (size_t i = ev_.common_count; i < ev_.fields.size(); ++i)
      if (ev_.fields[i].name == name) return static_cast<int>(i);
    return -1;
  }

  Tok process_arg(Node* arg, std::string& tok) {
    Tok t = lex_.read(tok);
    return process_arg_token(arg, tok, t);
  }

  Tok process_arg_token(Node* arg, std::string& tok, Tok type) {
    Depth depth(this);
    if (depth.too_deep()) return err(fmt::format("print fmt nests deeper than {} levels", kMaxDepth));
    switch (type) {
      case Tok::item: {
        if (tok == "REC") return process_entry(arg, tok);
        std::string atom = tok;
        Tok t = lex_.read_item(tok);
        if (t == Tok::delim && tok == "(") return process_function(arg, atom, tok);
        while (t == Tok::item) {  // "unsigned long" is one atom
          atom += " "sv;
          atom += tok;
          t = lex_.read_item(tok);
        }
        *arg = std::move(*make_atom(std::move(atom)));
        return t;
      }
      // 1.7.1 keeps a character constant as text, like a string: 'F' is
      // the atom "F", which evaluates to 0 as a number.
      case Tok::squote:
      case Tok::dquote:
        *arg = std::move(*make_atom(tok));
        return lex_.read_item(tok);
      case Tok::delim:
        if (tok == "(") return process_paren(arg, tok);
        [[fallthrough]];
      case Tok::op:
        arg->kind = K::op;
        arg->text = tok;
        arg->left.reset();
        return process_op(arg, tok);
      default:
        return err(fmt::format("unexpected token `{}`", tok));
    }
  }

  // REC->field, or "(REC)->field" (returns item ")" for the caller to finish).
  Tok process_entry(Node* arg, std::string& tok) {
    Tok t = lex_.read_item(tok);
    if (t == Tok::delim && tok == ")") return Tok::item;
    if (!expect(t, tok, Tok::op, "->")) return Tok::error;
    if (lex_.read(tok) != Tok::item) return err(fmt::format("expected a field name after REC->, got `{}`", tok));
    arg->kind = K::field;
    arg->text = tok;
    arg->field = find_any_field(tok);
    return lex_.read(tok);
  }

  Tok process_paren(Node* arg, std::string& tok) {
    Tok t = process_arg(arg, tok);
    if (t == Tok::error) return t;
    if (t == Tok::op) t = process_op(arg, tok);
    if (t == Tok::error) return t;
    if (t == Tok::item && tok == ")") return process_entry(arg, tok);
    if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
    t = lex_.read_item(tok);
    if (is_item_type(t) || (t == Tok::delim && tok == "(")) {
      // "(type)item": a cast.
      if (arg->kind != K::atom) return err("a cast needs a type name");
      auto item = std::make_unique<Node>();
      Node* item_raw = item.get();
      std::string type = std::move(arg->text);
      *arg = Node{};
      arg->kind = K::type;
      arg->text = std::move(type);
      arg->left = std::move(item);
      t = process_arg_token(item_raw, tok, t);
    }
    return t;
  }

  Tok process_op(Node* arg, std::string& tok) {
    Depth depth(this);
    if (depth.too_deep()) return err(fmt::format("print fmt nests deeper than {} levels", kMaxDepth));
    Node* right_raw = nullptr;
    Tok t;
    if (arg->kind == K::op && !arg->left) {
      // unary
      if (tok.size() != 1 || (tok[0] != '~' && tok[0] != '!' && tok[0] != '+' && tok[0] != '-'))
        return err(fmt::format("bad op token {}", tok));
      arg->left = std::make_unique<Node>();  // K::null
      arg->right = std::make_unique<Node>();
      right_raw = arg->right.get();
      t = process_arg(right_raw, tok);
    } else if (tok == "?") {
      push_left(arg, "?");
      t = process_cond(arg, tok);
    } else if (is_binary_op(tok)) {
      push_left(arg, tok);
      arg->prio = arg->left->kind == K::null ? 0 : op_prio(arg->text);
      if (arg->prio < 0) return err(fmt::format("unknown op '{}'", tok));
      t = lex_.read_item(tok);
      if (arg->text == "*" && t == Tok::delim && tok == ")") {
        // "(void *)": a pointer type, not a multiplication.
        if (arg->left->kind != K::atom) return err("bad pointer type");
        NodePtr l = std::move(arg->left);
        l->text += " *"sv;
        *arg = std::move(*l);
        return t;
      }
      auto right = std::make_unique<Node>();
      right_raw = right.get();
      t = process_arg_token(right_raw, tok, t);
      if (t == Tok::error) return t;
      if (right->kind == K::op && op_prio(arg->text) < op_prio(right->text)) {
        // Rotate by priority, exactly as libtraceevent does (this is what
        // makes `a * (b + c)` evaluate as `(a * b) + c` there).
        arg->right = std::move(right->left);
        std::swap(*arg, *right);
        arg->left = std::move(right);
      } else {
        arg->right = std::move(right);
      }
    } else if (tok == "[") {
      push_left(arg, "[");
      t = process_array(arg, tok);
    } else {
      return err(fmt::format("unknown op '{}'", tok));
    }
    if (t == Tok::op && tok != ":") {
      // An unknown op ("[") has priority -1 and so binds to the right operand.
      int prio = op_prio(tok);
      if (prio > arg->prio) return process_op(arg, tok);
      if (!right_raw) return err(fmt::format("unexpected op '{}'", tok));
      return process_op(right_raw, tok);
    }
    return t;
  }

  Tok process_cond(Node* top, std::string& tok) {
    auto colon = std::make_unique<Node>();
    colon->kind = K::op;
    colon->left = std::make_unique<Node>();
    colon->right = std::make_unique<Node>();
    Tok t = process_arg(colon->left.get(), tok);
    for (;;) {
      if (t == Tok::error) return t;
      if (t == Tok::op && tok != ":") {
        t = process_op(colon->left.get(), tok);
        continue;
      }
      break;
    }
    if (!expect(t, tok, Tok::op, ":")) return Tok::error;
    colon->text = ":";
    t = process_arg(colon->right.get(), tok);
    top->right = std::move(colon);
    return t;
  }

  Tok process_array(Node* top, std::string& tok) {
    auto index = std::make_unique<Node>();
    Tok t = process_arg(index.get(), tok);
    if (!expect(t, tok, Tok::op, "]")) return Tok::error;
    top->right = std::move(index);
    return lex_.read_item(tok);
  }

  // The first argument of __print_flags/__print_symbolic, evaluated whole.
  Tok process_field_arg(Node* arg, std::string& tok) {
    Tok t = process_arg(arg, tok);
    while (t == Tok::op) t = process_op(arg, tok);
    return t;
  }

  // arg_num_eval: constant folding for flag/symbol values (signed).
  bool num_eval(const Node* a, long long& v) {
    long long l = 0, r = 0;
    switch (a->kind) {
      case K::atom:
        v = c_strtoll(a->text);
        return true;
      case K::type:
        if (!num_eval(a->left.get(), v)) return false;
        v = static_cast<long long>(eval_type_str(static_cast<uint64_t>(v), a->text, false));
        return true;
      case K::op: {
        const std::string& op = a->text;
        auto both = [&] { return num_eval(a->left.get(), l) && num_eval(a->right.get(), r); };
        switch (op[0]) {
          case '|':
            if (!both()) return false;
            v = op.size() > 1 ? (l || r) : (l | r);
            return true;
          case '&':
            if (!both()) return false;
            v = op.size() > 1 ? (l && r) : (l & r);
            return true;
          case '<':
            if (!both()) return false;
            if (op.size() == 1) v = l < r;
            else if (op[1] == '<') v = static_cast<long long>(static_cast<uint64_t>(l) << (r & 63));
            else if (op[1] == '=') v = l <= r;
            else return false;
            return true;
          case '>':
            if (!both()) return false;
            if (op.size() == 1) v = l > r;
            else if (op[1] == '>') v = l >> (r & 63);
            else if (op[1] == '=') v = l >= r;
            else return false;
            return true;
          case '=':
            if (!both() || op != "==") return false;
            v = l == r;
            return true;
          case '!':
            if (!both() || op != "!=") return false;
            v = l != r;
            return true;
          case '-':
          case '+':
            if (a->left->kind != K::null && !num_eval(a->left.get(), l)) return false;
            if (!num_eval(a->right.get(), r)) return false;
            v = op[0] == '-' ? static_cast<long long>(static_cast<uint64_t>(l) - static_cast<uint64_t>(r))
                             : static_cast<long long>(static_cast<uint64_t>(l) + static_cast<uint64_t>(r));
            return true;
          case '~':
            if (!num_eval(a->right.get(), r)) return false;
            v = ~r;
            return true;
          default:
            return false;
        }
      }
      default:
        return false;
    }
  }

  bool arg_eval(const Node* a, std::string& out) {
    switch (a->kind) {
      case K::atom:
        out = a->text;
        return true;
      case K::type:
        return arg_eval(a->left.get(), out);
      case K::op: {
        long long v;
        if (!num_eval(a, v)) return false;
        out = std::to_string(v);
        return true;
      }
      default:
        return false;
    }
  }

  // { value, "name" }, ... up to the closing ")" (returned in tok).
  Tok process_fields(std::vector<FlagSym>& list, std::string& tok) {
    Tok t;
    do {
      t = lex_.read_item(tok);
      if (!expect(t, tok, Tok::op, "{")) return Tok::error;
      Node value;
      t = process_arg(&value, tok);
      if (t == Tok::op) t = process_op(&value, tok);
      if (t == Tok::error) return t;
      if (!expect(t, tok, Tok::delim, ",")) return Tok::error;
      std::string v;
      if (!arg_eval(&value, v)) return err("cannot evaluate a flag value");
      Node str;
      t = process_arg(&str, tok);
      if (!expect(t, tok, Tok::op, "}")) return Tok::error;
      std::string s;
      if (!arg_eval(&str, s)) return err("cannot evaluate a flag name");
      list.push_back(FlagSym{eval_flag(v), std::move(s)});
      t = lex_.read_item(tok);
    } while (t == Tok::delim && tok == ",");
    return t;
  }

  Tok process_flags(Node* arg, std::string& tok, K kind) {
    *arg = Node{};
    arg->kind = kind;
    arg->left = std::make_unique<Node>();
    Tok t = process_field_arg(arg->left.get(), tok);
    if (!expect(t, tok, Tok::delim, ",")) return Tok::error;
    if (kind == K::flags) {
      t = lex_.read_item(tok);
      if (is_item_type(t)) {
        arg->text = tok;
        arg->has_delim = true;
        t = lex_.read_item(tok);
      }
      if (!expect(t, tok, Tok::delim, ",")) return Tok::error;
    }
    t = process_fields(arg->syms, tok);
    if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
    return lex_.read_item(tok);
  }

  // alloc_and_process_delim: one argument of __print_hex & co.
  bool process_delim_arg(NodePtr& out, std::string_view next, std::string& tok) {
    out = std::make_unique<Node>();
    Tok t = process_arg(out.get(), tok);
    if (t == Tok::op) {
      t = process_op(out.get(), tok);
      if (t == Tok::error) return false;
      consolidate(out.get());
    }
    return expect(t, tok, Tok::delim, next);
  }

  Tok process_function(Node* arg, const std::string& name, std::string& tok) {
    *arg = Node{};
    if (name == "__print_flags") return process_flags(arg, tok, K::flags);
    if (name == "__print_symbolic") return process_flags(arg, tok, K::symbol);
    if (name == "__print_hex" || name == "__print_hex_str") {
      arg->kind = name == "__print_hex" ? K::hex : K::hex_str;
      if (!process_delim_arg(arg->left, ",", tok) || !process_delim_arg(arg->right, ")", tok)) return Tok::error;
      return lex_.read_item(tok);
    }
    if (name == "__print_array") {
      arg->kind = K::int_array;
      if (!process_delim_arg(arg->left, ",", tok) || !process_delim_arg(arg->right, ",", tok) ||
          !process_delim_arg(arg->third, ")", tok))
        return Tok::error;
      return lex_.read_item(tok);
    }
    if (name.starts_with("__get_")) return process_get(arg, name, tok);
    if (name == "__builtin_expect") {
      Tok t = process_arg(arg, tok);
      if (t != Tok::delim || tok != ",") return err("__builtin_expect: expected `,`");
      if (lex_.read(tok) != Tok::item) return err("__builtin_expect: expected a value");
      t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      return lex_.read_item(tok);
    }
    if (name == "sizeof") return process_sizeof(arg, tok);
    if (const HelperFunction* h = find_helper(name)) {
      // process_func_handler: each argument is one operand (no operators).
      arg->kind = K::func;
      arg->text = name;
      for (int i = 0; i < h->nr_args; ++i) {
        auto farg = std::make_unique<Node>();
        Tok t = process_arg(farg.get(), tok);
        std::string_view want = i < h->nr_args - 1 ? "," : ")";
        if (t != Tok::delim || tok != want)
          return err(fmt::format("function '{}()' expects {} arguments", name, h->nr_args));
        arg->args.push_back(std::move(farg));
      }
      return lex_.read(tok);
    }
    return err(fmt::format("function {} not defined", name));
  }

  // __get_str(field) & co.: a reference to a dynamic field.
  Tok process_get(Node* arg, const std::string& name, std::string& tok) {
    if (name == "__get_str" || name == "__get_rel_str" || name == "__get_bitmask" || name == "__get_rel_bitmask" ||
        name == "__get_cpumask" || name == "__get_rel_cpumask") {
      if (lex_.read(tok) != Tok::item) return err(fmt::format("{}: expected a field name", name));
      arg->kind = name.find("str") != std::string::npos    ? K::string
                  : name.find("cpumask") != std::string::npos ? K::cpumask
                                                              : K::bitmask;
      arg->text = tok;
      arg->field = find_any_field(tok);
      Tok t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      return lex_.read(tok);
    }
    if (name == "__get_dynamic_array" || name == "__get_rel_dynamic_array" || name == "__get_sockaddr" ||
        name == "__get_sockaddr_rel") {
      arg->kind = K::dyn_array;
      if (lex_.read(tok) != Tok::item) return err(fmt::format("{}: expected a field name", name));
      arg->text = tok;
      arg->field = find_field(tok);
      if (arg->field < 0) return err(fmt::format("{}: no field {}", name, tok));
      Tok t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      t = lex_.read_item(tok);
      if (t != Tok::op || tok != "[") return t;
      // libtraceevent 1.7.1 rejects an index here (its check is inverted).
      return err(fmt::format("{}({})[...] is not supported", name, arg->text));
    }
    if (name == "__get_dynamic_array_len" || name == "__get_rel_dynamic_array_len") {
      if (lex_.read(tok) != Tok::item) return err(fmt::format("{}: expected a field name", name));
      arg->kind = K::dyn_array_len;
      arg->text = tok;
      arg->field = find_field(tok);
      if (arg->field < 0) return err(fmt::format("{}: no field {}", name, tok));
      Tok t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      return lex_.read(tok);
    }
    return err(fmt::format("function {} not defined", name));
  }

  Tok process_sizeof(Node* arg, std::string& tok) {
    Tok t = lex_.read_item(tok);
    bool token_has_paren = false;
    std::string size;
    if (tok == "unsigned") {
      t = lex_.read_item(tok);
      if (t == Tok::error) return t;
      if (t != Tok::item) token_has_paren = true;
    }
    if (token_has_paren || tok == "int") {
      size = "4";
    } else if (tok == "long") {
      t = lex_.read_item(tok);
      if (tok == "long") {
        size = "8";
      } else {
        // The kernel's long is not known while parsing; trace.dat files
        // from 64-bit kernels are what we read.
        size = "8";
        token_has_paren = true;
      }
    } else if (tok == "REC") {  // 1.7.1 knows no sizeof(u64) & co.
      t = lex_.read_item(tok);
      if (!expect(t, tok, Tok::op, "->")) return Tok::error;
      if (lex_.read(tok) != Tok::item) return err("sizeof(REC->...): expected a field");
      int f = find_any_field(tok);
      if (f < 0 || ev_.fields[f].has(kFieldArray)) return err(fmt::format("sizeof(REC->{}) unsupported", tok));
      size = std::to_string(ev_.fields[f].size);
    } else {
      return err(fmt::format("sizeof({}) unsupported", tok));
    }
    *arg = std::move(*make_atom(size));
    if (!token_has_paren) t = lex_.read_item(tok);
    if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
    return lex_.read_item(tok);
  }

  // consolidate_op_arg: fold operations on two constants (unsigned).
  void consolidate(Node* a) {
    if (a->kind != K::op) return;
    if (a->left) consolidate(a->left.get());
    if (a->right) consolidate(a->right.get());
    if (!a->left || !a->right || a->left->kind != K::atom || a->right->kind != K::atom) return;
    uint64_t l = c_strtoull(a->left->text), r = c_strtoull(a->right->text), v;
    const std::string& op = a->text;
    switch (op[0]) {
      case '>':
        v = op.size() > 1 && op[1] == '>' ? l >> (r & 63) : op.size() > 1 && op[1] == '=' ? l >= r : l > r;
        break;
      case '<':
        v = op.size() > 1 && op[1] == '<' ? l << (r & 63) : op.size() > 1 && op[1] == '=' ? l <= r : l < r;
        break;
      case '&': v = op.size() > 1 ? (l && r) : (l & r); break;
      case '|': v = op.size() > 1 ? (l || r) : (l | r); break;
      case '-': v = l - r; break;
      case '+': v = l + r; break;
      case '*': v = l * r; break;
      case '^': v = l ^ r; break;
      case '/': v = r ? l / r : 0; break;
      case '%': v = r ? l % r : 0; break;
      case '=': v = l == r; break;
      case '!': v = l != r; break;
      default: return;
    }
    *a = std::move(*make_atom(std::to_string(static_cast<long long>(v))));
  }

  // Parsing and evaluating recurse; a hostile format must not exhaust the
  // stack. Real formats need a few dozen levels (long `|` chains of flags).
  static constexpr int kMaxDepth = 200;  // ASan frames are large: 1000 overflowed an 8 MiB stack
  struct Depth {
    explicit Depth(Parser* p) : p_(p) { ++p_->depth_; }
    ~Depth() { --p_->depth_; }
    bool too_deep() const { return p_->depth_ > kMaxDepth; }
    Parser* p_;
  };

  Lexer lex_;
  const EventFormat& ev_;
  std::string error_;
  int depth_ = 0;
};

}  // namespace

Status parse_print_args(std::string_view text, const EventFormat& event, std::string& format,
                        std::vector<NodePtr>& args) {
  return Parser(text, event).parse(format, args);
}

}  // namespace tracebed::decode::print_fmt
