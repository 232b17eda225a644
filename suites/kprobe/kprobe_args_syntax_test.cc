// ftracetest kprobe/kprobe_args_syntax.tc: every fetch-argument form the
// .tc tries on vfs_read (x86), taken or refused. A taken one is listed as
// the probe's one argument; a refused one leaves no event and, where the
// kernel logs why, an error_log entry whose command is the definition.
#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

struct FetchForm {
  const char* name;
  std::string arg;  // {SYM} and {ADDR}: a data symbol and its address
  bool good;
  bool needs_comm = false;
  const char* type = "p";
  // Why the kernel takes this bad form (kSymbolAtRegister: where it has no
  // modules; kTrailing: always), so the test expects it taken.
  const char* taken_because = nullptr;
};

// register_trace_kprobe (trace_kprobe.c) reads a symbol argument that
// does not resolve (-ENOENT) as "the module is not loaded yet" and keeps
// the event, never registered, when trace_kprobe_module_exist() is false,
// which it always is without CONFIG_MODULES (tracebed-7.2).
constexpr const char* kSymbolAtRegister = "without module support an unresolved @symbol is kept for a module to come";
// parse_probe_arg (trace_probe.c) parses up to the last ')' (strrchr) and
// drops the rest, on 6.1 and 6.12 alike. ftracetest's `! echo` never fails
// its case under set -e, so the .tc cannot see this.
constexpr const char* kTrailing = "what follows the last ')' of a dereference is dropped, not refused";

void PrintTo(const FetchForm& f, std::ostream* os) { *os << f.type << " vfs_read " << f.arg; }

const std::vector<FetchForm> kForms = {
    {"register", "%ax", true},
    {"bad_register", "%ex", false},
    {"symbol", "@{SYM}", true},
    {"address", "@{ADDR}", true},
    {"symbol_plus", "@{SYM}+10", true},
    {"symbol_minus", "@{SYM}-10", true},
    {"bare_at", "@", false, false, "p", kSymbolAtRegister},
    {"unknown_symbol", "@deaqswdefr", false, false, "p", kSymbolAtRegister},
    {"symbol_times", "@{SYM}*10", false, false, "p", kSymbolAtRegister},
    {"symbol_div", "@{SYM}/10", false, false, "p", kSymbolAtRegister},
    {"symbol_mod", "@{SYM}%10", false, false, "p", kSymbolAtRegister},
    {"symbol_and", "@{SYM}&10", false, false, "p", kSymbolAtRegister},
    {"symbol_or", "@{SYM}|10", false, false, "p", kSymbolAtRegister},
    {"stack", "$stack", true},
    {"stack0", "$stack0", true},
    {"stack1", "$stack1", true},
    {"stackp", "$stackp", false},
    {"stack0_plus", "$stack0+10", false},
    {"stack1_minus", "$stack1-10", false},
    {"retval_on_return", "$retval", true, false, "r"},
    {"retval_on_entry", "$retval", false},
    {"comm", "$comm", true, true},
    {"deref_register", "+0(%ax)", true},
    {"deref_register_minus", "-0(%ax)", true},
    {"deref_stack", "+10($stack)", true},
    {"deref_stack1", "+0($stack1)", true},
    {"deref_symbol", "+10(@{SYM}-10)", true},
    {"deref_nested", "+0(+10(+20($stack)))", true},
    {"deref_no_offset", "+(%ax)", false},
    {"deref_offset_inside", "(%ax+10)", false},
    {"deref_minus_no_offset", "-(%ax)", false},
    {"deref_no_sign", "(%ax)", false},
    {"deref_comm", "+10($comm)", false, true},
    {"deref_trailing", "+0(%ax)+10", false, false, "p", kTrailing},
    {"name", "varname=%ax", true},
    {"double_name", "varname=varname2=%ax", false},
    {"type", "%ax:x16", true},
    {"double_colon", "%ax::x16", false},
    {"bad_type", "%ax:y16", false},
    {"type_first", "x16:%ax", false},
    {"comm_string", "$comm:string", true, true},
    {"stack_deref_string", "+0($stack):string", true},
    {"comm_x64", "$comm:x64", false, true},
    {"stack_string", "$stack:string", false},
    {"register_string", "%ax:string", false},
};

class KprobeFetchForm : public TracefsTest, public ::testing::WithParamInterface<FetchForm> {
 protected:
  KprobeFetchForm() : TracefsTest({features::kprobes}) {}

  // _sdata where kallsyms has it (the .tc's choice), else vfs_read. Looked
  // up once per guest: reading /proc/kallsyms takes ~1.5 s under TCG, and
  // the symbol does not move while the guest runs.
  const std::pair<std::string, std::string>& symbol() {
    static std::pair<std::string, std::string> found;
    if (!found.first.empty()) return found;
    // grep -F: busybox's -w is ~15x slower over kallsyms; names match exactly below.
    std::string out = sh("grep -F -e _sdata -e vfs_read /proc/kallsyms | cut -f1,3 -d' '");
    std::map<std::string, std::string> addr;
    for (auto line : base::split_lines(out))
      if (auto words = base::split_words(line); words.size() == 2)
        addr.emplace(std::string(words[1]), "0x" + std::string(words[0]));
    EXPECT_TRUE(addr.count("vfs_read")) << "vfs_read is not in /proc/kallsyms";
    if (addr.count("_sdata")) return found = {"_sdata", addr["_sdata"]};
    return found = {"vfs_read", addr["vfs_read"]};
  }

  // Whether the kernel loads modules (CONFIG_MODULES: /proc/modules),
  // asked once per guest.
  bool has_modules() {
    static const bool modules = sh("test -e /proc/modules && echo modules || true").find("modules") != std::string::npos;
    return modules;
  }
};

std::string substitute(std::string s, const std::string& key, const std::string& value) {
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size())) s.replace(at, key.size(), value);
  return s;
}

TEST_P(KprobeFetchForm, IsTakenOrRefused) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_args_syntax.tc");
  const FetchForm& f = GetParam();
  if (f.needs_comm) TRACEBED_REQUIRE(features::fetcharg_comm);
  auto [sym, addr] = symbol();
  std::string arg = substitute(substitute(f.arg, "{SYM}", sym), "{ADDR}", addr);
  std::string event = unique("syntax");
  RawDefinition def{DynEventKind::kprobe, std::string(f.type) + ":kprobes/" + event + " vfs_read " + arg, "kprobes",
                    event};
  // A bad form the kernel is known to take is taken here, and said why:
  // kTrailing on every kernel, kSymbolAtRegister where it has no modules
  // (no /proc/modules). Any other answer fails.
  const bool taken = f.good || f.taken_because == kTrailing ||
                     (f.taken_because == kSymbolAtRegister && !has_modules());
  if (taken) {
    SCOPED_TRACE(f.taken_because ? std::string("a bad form taken: ") + f.taken_because : std::string("a good form"));
    auto ev = create(def.def());
    ASSERT_OK(ev);
    auto entry = listed(*ev);
    ASSERT_TRUE(entry);
    EXPECT_THAT(entry->args, SizeIs(1)) << entry->line;
    return;
  }
  const bool logs = features().has(features::error_log);
  if (logs) ASSERT_OK(fs().top().clear_error_log());
  EXPECT_FALSE(create(def.def()).ok()) << "the kernel took " << def.text;
  if (!logs) return;
  // Where the kernel says why (5.10 refuses $comm:x64 without a word), the
  // entry is this definition's.
  auto log = fs().top().error_log();
  ASSERT_OK(log);
  if (!log->empty()) {
    EXPECT_EQ(log->back().command, def.text);
    EXPECT_EQ(log->back().location, "trace_kprobe");
  }
  EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/kprobes/" + event));
}

INSTANTIATE_TEST_SUITE_P(Kprobe, KprobeFetchForm, ::testing::ValuesIn(kForms),
                         [](const ::testing::TestParamInfo<FetchForm>& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace tracebed::suites
