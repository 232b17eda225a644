// ftracetest trigger/trigger-hist.tc and trigger-hist-mod.tc: compound
// keys, string keys, sort on a key, .hex, .execname, .sym and .sym-offset.
// The .tc greps for a line; here each entry is compared with the events
// decoded from the same window (fork events of a shell whose pid and name
// it printed) and .sym with /proc/kallsyms.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/hist/hist_fixture.h"

namespace tracebed::suites {
namespace {

using ::testing::Pointee;

constexpr int kForks = 20;

// The decoded forks of the shell `pid` (parent_pid), in order.
std::vector<int64_t> children_of(const std::vector<DecodedEvent>& forks, int pid) {
  std::vector<int64_t> out;
  for (const DecodedEvent& e : forks)
    if (int_field(e, "parent_pid") == pid) out.push_back(int_field(e, "child_pid"));
  return out;
}

const HistSection* section_with(const HistFile& f, std::string_view spec_part) {
  for (const HistSection& s : f.sections)
    if (s.trigger_info.find(spec_part) != std::string::npos) return &s;
  ADD_FAILURE() << "no hist section whose trigger has " << spec_part;
  return nullptr;
}

// keys=parent_pid:vals=child_pid sums the children; keys=parent_pid,child_pid
// has one entry per child; sort=child_pid.ascending orders by the child.
TEST_F(Hist, CompoundKeysHaveOneEntryPerParentAndChild) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-hist.tc");
  TRACEBED_REQUIRE(fork_event);
  Event ev = inst().event("sched", "sched_process_fork");
  Forker shell;
  record(ev,
         {HistTrigger().key("parent_pid").val("child_pid"), HistTrigger().key("parent_pid").key("child_pid"),
          HistTrigger().key("parent_pid").key("child_pid").sort(HistField("child_pid").ascending())},
         [&] { shell = fork_work(kForks, unique("forker")); });
  std::vector<int64_t> children = children_of(decoded(ev), shell.pid);
  ASSERT_THAT(children, SizeIs(kForks)) << "the shell forked " << kForks << " subshells";
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(3));

  const HistSection* sum = section_with(file, "vals=hitcount,child_pid");
  ASSERT_NE(sum, nullptr);
  uint64_t child_sum = 0;
  for (int64_t c : children) child_sum += static_cast<uint64_t>(c);
  EXPECT_THAT(sum->entries, Contains(AllOf(HistKeyEq("parent_pid", shell.pid), HitCount(kForks),
                                           HistValueThat("child_pid", child_sum))));

  std::map<int64_t, uint64_t> per_child;
  for (const HistSection& s : file.sections) {
    if (&s == sum) continue;
    SCOPED_TRACE(s.trigger_info);
    per_child.clear();
    std::vector<uint64_t> order;
    for (const auto& entry : s.entries) {
      const tracefs::HistKey* child = entry.key("child_pid");
      ASSERT_TRUE(child && child->number) << "no child_pid key";
      order.push_back(*child->number);
      if (::testing::Matches(HistKeyEq("parent_pid", shell.pid))(entry))
        per_child[static_cast<int64_t>(*child->number)] += entry.hitcount();
    }
    std::map<int64_t, uint64_t> expected;
    for (int64_t c : children) expected[c] = 1;
    EXPECT_EQ(per_child, expected);
    if (!s.trigger.sort_keys().empty() && s.trigger.sort_keys()[0].name() == "child_pid") {
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end())) << "sort=child_pid.ascending";
    }
  }
}

// A string key (parent_comm), .hex and .execname print what the shell is:
// its name as it read it back from /proc, its pid in hex.
TEST_F(Hist, StringHexAndExecnameKeysShowTheShell) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-hist.tc", "ftracetest: trigger/trigger-hist-mod.tc");
  TRACEBED_REQUIRE(fork_event);
  Event ev = inst().event("sched", "sched_process_fork");
  Forker shell;
  record(ev,
         {HistTrigger().key("parent_comm"), HistTrigger().key(HistField("parent_pid").hex()),
          HistTrigger().key(HistField("common_pid").execname())},
         [&] { shell = fork_work(kForks, unique("forker")); });
  uint64_t by_comm = 0;
  for (const DecodedEvent& e : decoded(ev)) by_comm += str_field(e, "parent_comm") == shell.comm;
  EXPECT_EQ(by_comm, static_cast<uint64_t>(kForks)) << "decoded forks by " << shell.comm;
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(3));

  const HistSection* comm = section_with(file, "keys=parent_comm");
  ASSERT_NE(comm, nullptr);
  auto is_shell = [&](const tracefs::HistEntry& e) { return e.key("parent_comm") && e.key("parent_comm")->text == shell.comm; };
  auto it = std::find_if(comm->entries.begin(), comm->entries.end(), is_shell);
  ASSERT_NE(it, comm->entries.end()) << "no parent_comm: " << shell.comm;
  EXPECT_EQ(it->hitcount(), by_comm);

  const HistSection* hex = section_with(file, "parent_pid.hex");
  ASSERT_NE(hex, nullptr);
  char hex_pid[32];
  std::snprintf(hex_pid, sizeof hex_pid, "%x", shell.pid);
  auto hex_it = std::find_if(hex->entries.begin(), hex->entries.end(), [&](const tracefs::HistEntry& e) {
    return ::testing::Matches(HistKeyEq("parent_pid", shell.pid))(e);
  });
  ASSERT_NE(hex_it, hex->entries.end()) << "no parent_pid " << hex_pid;
  EXPECT_EQ(hex_it->key("parent_pid")->text, hex_pid);
  EXPECT_EQ(hex_it->hitcount(), static_cast<uint64_t>(kForks));

  const HistSection* exec = section_with(file, "common_pid.execname");
  ASSERT_NE(exec, nullptr);
  EXPECT_THAT(entries_of_pid(*exec, shell.pid), ElementsAre(Pointee(HitCount(kForks))));
  auto target = entries_of_pid(*exec, shell.pid);
  if (!target.empty()) {
    EXPECT_EQ(target[0]->key("common_pid")->symbol, shell.comm);
  }
}

// Each address as 16 hex digits, the name of the text symbol that holds it
// (the nearest at or below it in /proc/kallsyms) and that symbol's address.
// Fixed-width hex compares as text, so awk needs no hex arithmetic.
std::map<uint64_t, std::pair<std::string, uint64_t>> kallsyms_lookup(TracefsTest& t, const std::set<uint64_t>& addrs) {
  // grep keeps the 64 KiB blocks of the addresses and the blocks below
  // them (a function may start in one): awk then reads a few hundred
  // lines, not all of kallsyms, which is slow under TCG.
  std::string want, blocks;
  for (uint64_t a : addrs) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%016llx ", static_cast<unsigned long long>(a));
    want += buf;
    for (uint64_t block : {a >> 16, (a >> 16) - 1}) {
      std::snprintf(buf, sizeof buf, "%s%012llx", blocks.empty() ? "" : "|", static_cast<unsigned long long>(block));
      blocks += buf;
    }
  }
  std::string out = t.sh("grep -E '^(" + blocks + ")' /proc/kallsyms | awk -v want='" + want +
                         "' 'BEGIN{n=split(want,w,\" \")} $2 ~ /^[tT]$/ {for(i=1;i<=n;i++) "
                         "if (($1 \"\") <= w[i] && ($1 \"\") > (best[i] \"\")) {best[i]=$1; name[i]=$3}} "
                         "END{for(i=1;i<=n;i++) print w[i], best[i], name[i]}'");
  std::map<uint64_t, std::pair<std::string, uint64_t>> found;
  std::istringstream in(out);
  std::string addr, sym, name;
  while (in >> addr >> sym >> name) found[std::stoull(addr, nullptr, 16)] = {name, std::stoull(sym, nullptr, 16)};
  return found;
}

// .sym and .sym-offset name each kmalloc call site as /proc/kallsyms does,
// and each address counts the kmallocs decoded from it.
TEST_F(Hist, SymKeysNameTheCallSiteAsKallsyms) {
  TRACEBED_COVERS("ftracetest: trigger/trigger-hist.tc");
  TRACEBED_REQUIRE(kmalloc_event);
  Event ev = inst().event("kmem", "kmalloc");
  // Keyed by pid too: the hist counts kmallocs before the event is enabled
  // (adding the second trigger allocates), the buffer does not.
  ProbeRun probe;
  record(ev,
         {HistTrigger().key("common_pid").key(HistField("call_site").sym()),
          HistTrigger().key("common_pid").key(HistField("call_site").sym_offset())},
         [&] { probe = kmalloc_work(); });
  std::map<uint64_t, uint64_t> decoded_sites;
  for (const DecodedEvent& e : of_pid(decoded(ev), probe.pid))
    decoded_sites[static_cast<uint64_t>(int_field(e, "call_site"))]++;
  ASSERT_THAT(decoded_sites, Not(IsEmpty()));
  std::set<uint64_t> addrs;
  for (const auto& [a, n] : decoded_sites) addrs.insert(a);
  auto syms = kallsyms_lookup(*this, addrs);
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(2));
  for (const HistSection& s : file.sections) {
    SCOPED_TRACE(s.trigger_info);
    bool with_offset = s.trigger.keys().at(1).has("sym-offset");
    std::map<uint64_t, uint64_t> shown;
    for (const auto* entry : entries_of_pid(s, probe.pid)) {
      const tracefs::HistKey* key = entry->key("call_site");
      ASSERT_TRUE(key && key->number) << (key ? key->text : "no call_site key");
      shown[*key->number] = entry->hitcount();
      auto sym = syms.find(*key->number);
      ASSERT_NE(sym, syms.end()) << key->text << " was not decoded";
      char offset[32];
      std::snprintf(offset, sizeof offset, "+0x%llx/", static_cast<unsigned long long>(*key->number - sym->second.second));
      if (with_offset)
        EXPECT_THAT(key->symbol, StartsWith(sym->second.first + offset)) << key->text;
      else
        EXPECT_EQ(key->symbol, sym->second.first) << key->text;
    }
    EXPECT_EQ(shown, decoded_sites);
  }
}

}  // namespace
}  // namespace tracebed::suites
