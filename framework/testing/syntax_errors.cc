#include "framework/testing/syntax_errors.h"

#include <utility>

namespace tracebed::testlib {
namespace {

// `text` with every `from` replaced by `to`.
std::string replaced(std::string text, std::string_view from, std::string_view to) {
  for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
    text.replace(p, from.size(), to);
  return text;
}

// Rows written with `P` for the probe text ("p vfs_read"), `T` for its
// letter and `S` for what it probes.
std::vector<SyntaxErrorRow> expanded(std::vector<SyntaxErrorRow> rows, std::string_view placeholder,
                                     std::string_view value) {
  for (SyntaxErrorRow& r : rows) r.marked = replaced(std::move(r.marked), placeholder, value);
  return rows;
}

namespace f = tracefs::features;

}  // namespace

std::vector<SyntaxErrorRow> name_rows(std::string_view type, std::string_view target) {
  const std::string long_name = "12345678901234567890123456789012345678901234567890123456789012345";
  std::vector<SyntaxErrorRow> rows = {
      {"NO_GROUP_NAME", "T:^/bar S", "Group name is not specified"},
      {"GROUP_TOO_LONG", "T:^" + long_name + "/bar S", "Group name is too long"},
      {"BAD_GROUP_NAME", "T:^foo.1/bar S", "Group name must follow the same rules as C identifiers"},
      {"NO_EVENT_NAME", "T:^ S", "Event name is not specified"},
      {"EVENT_TOO_LONG", "T:foo/^" + long_name + " S", "Event name is too long"},
      {"BAD_EVENT_NAME", "T:foo/^bar.1 S", "Event name must follow the same rules as C identifiers"},
  };
  return expanded(expanded(std::move(rows), "S", target), "T", type);
}

std::vector<SyntaxErrorRow> fetch_arg_rows(std::string_view probe) {
  // MAX_ARGSTR_LEN (trace_probe.h) was 63 until 7.3 made it 255, with the
  // typecasts; no README line tells the limit, so the typecasts say which
  // row a kernel gets. The row is refused before it is parsed.
  std::string too_long = "^";
  for (int i = 0; i < 26; ++i) too_long += "+1234567(";
  too_long += "@1234" + std::string(26, ')');
  std::vector<SyntaxErrorRow> rows = {
      {"BAD_STACK_NUM", "P ^$stack10000", "Invalid stack number"},
      {.name = "BAD_ARG_NUM",
       .marked = "P ^$arg10000",
       .error = "Invalid argument number",
       .needs = f::fetcharg_argn,
       .with_btf = "This variable is not found at this probe point"},
      {.name = "BAD_VAR",
       .marked = "P ^$none_var",
       .error = "Invalid $-variable specified",
       .also = {"Invalid $-valiable specified"}},  // sic, before 5.16
      {"BAD_MEM_ADDR", "P ^@12345678abcde", "Invalid memory address"},
      {.name = "FILE_ON_KPROBE",
       .marked = "P ^@+10",
       .error = "File offset is not available for kernel probes",
       .also = {"File offset is not available with kprobe"}},  // before 7.3
      {"BAD_IMM", "P arg1=\\^x", "Invalid immediate value", f::fetcharg_immediate},
      {"IMMSTR_NO_CLOSE", "P arg1=\\\"abcd^", "String is not closed with '\"'", f::fetcharg_immediate_string},
      {"DEREF_NEED_BRACE", "P ^+0@0)", "Dereference needs a brace"},
      {"BAD_DEREF_OFFS", "P ^+0ab1(@0)", "Invalid dereference offset"},
      {"DEREF_OPEN_BRACE", "P +0(+0(@0^)", "Dereference brace is not closed"},
      {"COMM_CANT_DEREF", "P +0(^$comm)", "$comm can not be dereferenced", f::fetcharg_comm},
      {"BAD_FETCH_ARG", "P ^&1", "Invalid fetch argument"},
      // Before 7.3 the limit was the 16 fetch instructions of one argument,
      // found at the second dereference of fourteen; 7.3 counts nesting
      // and stops at the ninth.
      {.name = "TOO_MANY_OPS",
       .marked = "P +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))",
       .error = "Dereference is too much nested",
       .needs = f::type_array,
       .unless = f::probe_typecast},
      {"TOO_MANY_NESTED", "P +0(+0(+0(+0(+0(+0(+0(+0(^+0(@0)))))))))", "Too many nested typecasts/dereferences",
       f::probe_typecast},
      {"ARRAY_NO_CLOSE", "P +0(@11):u8[10^", "Array is not closed", f::type_array},
      {"BAD_ARRAY_SUFFIX", "P +0(@11):u8[10]^a", "Array has wrong suffix", f::type_array},
      {"BAD_ARRAY_NUM", "P +0(@11):u8[^10a]", "Invalid array size", f::type_array},
      {"ARRAY_TOO_BIG", "P +0(@11):u8[^256]", "Array number is too big", f::type_array},
      {"BAD_TYPE", "P @11:^unknown_type", "Unknown type is specified"},
      {"BAD_STRING", "P $stack0:^string", "String accepts only memory argument"},
      {"BAD_BITFIELD", "P @11:^b10@a/16", "Invalid bitfield"},
      {"ARG_NAME_TOO_LONG", "P ^arg123456789012345678901234567890=@11", "Argument name is too long"},
      {"NO_ARG_NAME", "P ^=@11", "Argument name is not specified"},
      {"BAD_ARG_NAME", "P ^var.1=@11", "Argument name must follow the same rules as C identifiers"},
      {"USED_ARG_NAME", "P var1=@11 ^var1=@12", "This argument name is already used"},
      {.name = "ARG_TOO_LONG",
       .marked = "P ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))",
       .error = "Argument expression is too long",
       .unless = f::probe_typecast},
      {"ARG_TOO_LONG_255", "P " + too_long, "Argument expression is too long", f::probe_typecast},
      {"NO_ARG_BODY", "P arg1=^", "No argument expression"},
  };
  return expanded(std::move(rows), "P ", std::string(probe) + " ");
}

std::vector<SyntaxErrorRow> typecast_rows(std::string_view type) {
  const std::optional<tracefs::Feature> tc = f::probe_typecast;
  std::vector<SyntaxErrorRow> rows = {
      {"TYPECAST_REQ_FIELD", "T vfs_read arg1=(task_struct)file^", "Typecast requires a field access", tc},
      {"TOO_MANY_NESTED_typecast",
       "T vfs_read "
       "arg1=(a)((b)((c)((d)((e)((f)((g)((h)(^(i)file->i)->h)->g)->f)->e)->d)->"
       "c)->b)->a",
       "Too many nested typecasts/dereferences", tc},
      {"TYPECAST_NOT_ALIGNED", "T vfs_read arg1=(task_struct,^in_execve)file->comm",
       "Typecast field option is not byte-aligned", tc},
      {"NO_BTF_FIELD_typecast", "T vfs_read arg1=(task_struct,^foo_bar)file->pid", "This field is not found.", tc},
      {"NO_PTR_STRCT_typecast", "T vfs_read arg1=(^task_struct1234)file->pid",
       "This is not a pointer to union/structure.", tc},
      {"TYPECAST_BAD_ARROW", "T vfs_read arg1=(task_struct,se^->group_node)file->comm",
       "Typecast field option does not support -> operator", tc},
      {"NO_BTF_FIELD_arrow", "T vfs_read arg1=(task_struct,^->pid)file->comm", "This field is not found.", tc},
      {"NO_BTF_FIELD_dot", "T vfs_read arg1=(task_struct,^.pid)file->comm", "This field is not found.", tc},
      {"NO_BTF_FIELD_empty", "T vfs_read arg1=(task_struct,^.)file->comm", "This field is not found.", tc},
      {"TYPECAST_SYM_OFFSET", "T vfs_read arg1=(task_struct)^@symbol+10->comm",
       "@SYM+/-OFFSET with typecast needs parentheses", tc},
  };
  return expanded(std::move(rows), "T ", std::string(type) + " ");
}

std::vector<SyntaxErrorRow> join(std::initializer_list<std::vector<SyntaxErrorRow>> parts) {
  std::vector<SyntaxErrorRow> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

RawDefinition SyntaxErrorTest::raw(std::string command, std::optional<std::string> event) const {
  tracefs::DynEventKind kind = table_.kind;
  if (kind == tracefs::DynEventKind::fprobe || kind == tracefs::DynEventKind::tprobe)
    kind = command.starts_with('t') ? tracefs::DynEventKind::tprobe : tracefs::DynEventKind::fprobe;
  return {kind, std::move(command), table_.group, event.value_or(table_.event)};
}

void SyntaxErrorTest::ExpectRowRefused() {
  const SyntaxErrorRow& row = GetParam();
  if (row.needs) TRACEBED_REQUIRE(*row.needs);
  if (row.unless && features().has(*row.unless))
    GTEST_SKIP() << "the row is for kernels without " << row.unless->name << "; this one has it";
  const std::string& error = !row.with_btf.empty() && features().has(f::btf_args) ? row.with_btf : row.error;
  std::vector<::testing::Matcher<const std::string&>> words = {::testing::HasSubstr(error)};
  for (const std::string& other : row.also) words.push_back(::testing::HasSubstr(other));
  Marked m = unmark(row.marked);
  // The kernel logs its argv joined by blanks: a trailing blank ("if ")
  // is not in the logged command.
  while (m.command.ends_with(' ')) m.command.pop_back();
  auto entry = ExpectRefused(raw(m.command), ::testing::AnyOfArray(words), m.caret);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->location, table_.location) << row.marked;
}

void SyntaxErrorTest::ExpectAppendsRefused(const std::string& point, const std::vector<AppendRefusal>& refusals) {
  const std::string event = unique("testevent");
  const std::string name = table_.group + "/" + event;
  auto existing = create(raw(replaced(point, "NAME", name) + " abcd=\\1", event).def());
  ASSERT_OK(existing);
  for (const AppendRefusal& a : refusals) {
    SCOPED_TRACE(a.marked);
    Marked m = unmark(replaced(a.marked, "NAME", name));
    ExpectRefused(raw(m.command), a.error, m.caret);
  }
}

std::vector<AppendRefusal> argument_appends(const std::string& point, const std::string& other,
                                            bool immediate_strings) {
  const std::string different = "Argument type or name is different from existing probe";
  std::vector<AppendRefusal> rows = {
      {other + " ^bcd=\\1", different},
      {other + " ^abcd=\\1:u8", different},
  };
  if (immediate_strings) rows.push_back({other + " ^abcd=\\\"foo\"", different});
  rows.push_back({"^" + point + " abcd=\\1", "There is already the exact same probe event"});
  return rows;
}

}  // namespace tracebed::testlib
