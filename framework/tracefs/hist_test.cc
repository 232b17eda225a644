#include "framework/tracefs/hist.h"
#include "framework/tracefs/hist_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::tracefs {
namespace {

using ::testing::ElementsAre;
using testlib::testdata;

// Lines written to debian-6.12 and read back [active] (see
// testdata/trigger-kmalloc-hists-6.12.txt, trigger-kmem_cache_alloc-hists).
TEST(HistTrigger, CommandsTheKernelAccepted) {
  EXPECT_EQ(HistTrigger().key(HistField("common_pid").execname()).val("bytes_req").command(),
            "hist:keys=common_pid.execname:vals=bytes_req");
  EXPECT_EQ(HistTrigger()
                .key(HistField("call_site").sym_offset())
                .val("bytes_req")
                .val("bytes_alloc")
                .sort(HistField("bytes_alloc").descending())
                .size(256)
                .command(),
            "hist:keys=call_site.sym-offset:vals=bytes_req,bytes_alloc:sort=bytes_alloc.descending:size=256");
  EXPECT_EQ(HistTrigger().key(HistField("bytes_req").log2()).command(), "hist:keys=bytes_req.log2");
  EXPECT_EQ(HistTrigger().key(HistField("bytes_req").buckets(64)).command(), "hist:keys=bytes_req.buckets=64");
  EXPECT_EQ(HistTrigger().key(HistField("call_site").sym()).val("bytes_req").nohitcount().command(),
            "hist:keys=call_site.sym:vals=bytes_req:nohitcount");
  EXPECT_EQ(HistTrigger().key(HistField("gfp_flags").hex()).val("hitcount").sort("gfp_flags").command(),
            "hist:keys=gfp_flags.hex:vals=hitcount:sort=gfp_flags");
  EXPECT_EQ(HistTrigger()
                .key(HistField("id").syscall())
                .key(HistField("common_pid").execname())
                .val("hitcount")
                .sort(HistField("hitcount").descending())
                .command(),
            "hist:keys=id.syscall,common_pid.execname:vals=hitcount:sort=hitcount.descending");
  EXPECT_EQ(HistTrigger().key("common_stacktrace").val("hitcount").command(),
            "hist:keys=common_stacktrace:vals=hitcount");
  // Accepted by debian-7.2; debian-6.12 refuses .percent and .graph
  // ("Invalid field modifier") although its README lists them.
  EXPECT_EQ(HistTrigger()
                .key(HistField("common_pid").execname())
                .val(HistField("hitcount").percent())
                .val(HistField("bytes_req").graph())
                .command(),
            "hist:keys=common_pid.execname:vals=hitcount.percent,bytes_req.graph");
}

// Documentation/trace/histogram.rst 2.2.3 "Hist trigger 'handlers' and
// 'actions'": the wakeup latency examples, for 'wakeup_latency u64 lat;
// pid_t pid; int prio'. Accepted by debian-6.12 and 7.2 (onmatch forms
// with the event's three fields).
TEST(HistTrigger, ActionsAsDocumented) {
  EXPECT_EQ(HistTrigger().key("pid").var("ts0", "common_timestamp.usecs").command(),
            "hist:keys=pid:ts0=common_timestamp.usecs");
  // The sched_switch end of each: the latency variable, then the action.
  auto at_switch = [](HistAction action) {
    HistTrigger t;
    t.key("next_pid").var("wakeup_lat", "common_timestamp.usecs-$ts0").action(std::move(action));
    return t.command();
  };
  const std::string head = "hist:keys=next_pid:wakeup_lat=common_timestamp.usecs-$ts0:";
  const std::vector<std::string> args = {"$wakeup_lat", "next_pid", "next_prio"};
  EXPECT_EQ(at_switch(HistAction::onmatch("sched", "sched_waking").synth("wakeup_latency", args)),
            head + "onmatch(sched.sched_waking).wakeup_latency($wakeup_lat,next_pid,next_prio)");
  EXPECT_EQ(at_switch(HistAction::onmatch("sched", "sched_waking").trace("wakeup_latency", args)),
            head + "onmatch(sched.sched_waking).trace(wakeup_latency,$wakeup_lat,next_pid,next_prio)");
  EXPECT_EQ(at_switch(HistAction::onmax("wakeup_lat").save({"next_comm", "prev_pid", "prev_prio", "prev_comm"})),
            head + "onmax($wakeup_lat).save(next_comm,prev_pid,prev_prio,prev_comm)");
  EXPECT_EQ(HistAction::onmax("$wakeup_lat").snapshot().str(), "onmax($wakeup_lat).snapshot()");
  EXPECT_EQ(HistAction::onchange("$cwnd").save({"snd_wnd", "srtt", "rcv_wnd"}).str(),
            "onchange($cwnd).save(snd_wnd,srtt,rcv_wnd)");
  EXPECT_EQ(HistAction::onchange("cwnd").snapshot().str(), "onchange($cwnd).snapshot()");
}

// histogram.rst: "pause", "cont", "clear" act on the trigger with the same
// spec; removal names the spec (without them) and, for hist triggers, the
// filter (kernel/trace/trace_events_hist.c hist_trigger_match).
TEST(HistTrigger, PauseContClearAndRemoval) {
  HistTrigger h;
  h.key("call_site").val("bytes_req").name("foo").filter("bytes_req > 256");
  EXPECT_EQ(h.command(), "hist:keys=call_site:vals=bytes_req:name=foo if bytes_req > 256");
  EXPECT_EQ(HistTrigger(h).pause().command(), "hist:keys=call_site:vals=bytes_req:name=foo:pause if bytes_req > 256");
  EXPECT_EQ(HistTrigger(h).cont().command(), "hist:keys=call_site:vals=bytes_req:name=foo:cont if bytes_req > 256");
  EXPECT_EQ(HistTrigger(h).clear().command(), "hist:keys=call_site:vals=bytes_req:name=foo:clear if bytes_req > 256");
  EXPECT_EQ(HistTrigger(h).pause().remove_command(), "!hist:keys=call_site:vals=bytes_req:name=foo if bytes_req > 256");
  Trigger t = HistTrigger(h).pause().trigger();
  EXPECT_TRUE(t.is_hist());
  EXPECT_EQ(t.command(), "hist:keys=call_site:vals=bytes_req:name=foo:pause if bytes_req > 256");
  EXPECT_EQ(t.remove_command(), "!hist:keys=call_site:vals=bytes_req:name=foo if bytes_req > 256");
}

// README: "enable_hist and disable_hist ... analogous to the enable_event
// and disable_event triggers"; histogram.rst 2.2's example.
TEST(HistTrigger, EnableAndDisableHist) {
  EXPECT_EQ(Trigger::enable_hist("net", "netif_receive_skb").filter("filename==/usr/bin/wget").command(),
            "enable_hist:net:netif_receive_skb if filename==/usr/bin/wget");
  EXPECT_EQ(Trigger::disable_hist("net", "netif_receive_skb").count(1).command(),
            "disable_hist:net:netif_receive_skb:1");
  EXPECT_EQ(Trigger::disable_hist("net", "netif_receive_skb").count(1).remove_command(),
            "!disable_hist:net:netif_receive_skb:0");
}

// The trigger file of sched_switch after the onmatch + onmax trigger
// (debian-6.12), through TriggerEntry as reset and tests read it.
TEST(HistTrigger, ParsesATriggerReadBack) {
  auto entries = parse_trigger_file(testdata("trigger-sched_switch-onmatch-onmax-6.12.txt"));
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 1u);
  const TriggerEntry& e = (*entries)[0];
  EXPECT_TRUE(e.is_hist());
  EXPECT_TRUE(e.is_action());
  auto h = HistTrigger::parse(e.line);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_THAT(h->keys(), ElementsAre(HistField("next_pid")));
  EXPECT_THAT(h->vals(), ElementsAre(HistField("hitcount")));
  ASSERT_EQ(h->vars().size(), 1u);
  EXPECT_EQ(h->vars()[0].first, "lat");
  EXPECT_EQ(h->vars()[0].second, "common_timestamp.usecs-$ts0");
  EXPECT_EQ(h->size_value(), 2048u);
  EXPECT_EQ(h->clock_value(), "global");
  ASSERT_EQ(h->actions().size(), 2u);
  EXPECT_EQ(h->actions()[0].str(), "onmatch(sched.sched_waking).trace(wakeup_lat,next_comm,next_pid,$lat)");
  EXPECT_EQ(h->actions()[1].str(), "onmax($lat).save(next_comm,prev_pid)");
  // Written back, it is the line the kernel shows.
  EXPECT_EQ(h->command() + " [active]", e.line);

  auto kmalloc = parse_trigger_file(testdata("trigger-kmalloc-hists-6.12.txt"));
  ASSERT_TRUE(kmalloc.ok()) << kmalloc.error().message;
  for (const TriggerEntry& k : *kmalloc) {
    auto p = HistTrigger::parse(k.line);
    ASSERT_TRUE(p.ok()) << p.error().message;
    EXPECT_EQ(p->command() + " [active]", k.line);
  }
  auto h2 = HistTrigger::parse((*kmalloc)[1].line);
  ASSERT_TRUE(h2.ok());
  EXPECT_TRUE(h2->keys()[0].has("sym-offset"));
  EXPECT_THAT(h2->sort_keys(), ElementsAre(HistField("bytes_alloc").descending()));
}

TEST(HistTrigger, BadSpecsAreErrors) {
  EXPECT_FALSE(HistTrigger::parse("traceoff").ok());
  EXPECT_FALSE(HistTrigger::parse("hist:vals=hitcount").ok());
  EXPECT_FALSE(HistTrigger::parse("hist:keys=pid:size=x").ok());
}

// Every captured hist file: each table lists as many entries as its
// Totals say.
TEST(HistFile, EntriesAgreeWithTotals) {
  for (const char* name :
       {"hist-kmalloc-three-6.12.txt", "hist-kmem_cache_alloc-nohitcount-hex-6.12.txt",
        "hist-sys_enter-syscall-execname-6.12.txt", "hist-sched_process_exec-stacktrace-6.12.txt",
        "hist-sched_switch-onmax-save-6.12.txt", "hist-wakeup_lat-6.12.txt", "hist-kmalloc-buckets-6.12.txt",
        "hist-sched_waking-onchange-snapshot-7.2.txt"}) {
    SCOPED_TRACE(name);
    auto f = parse_hist_file(testdata(name));
    ASSERT_TRUE(f.ok()) << f.error().message;
    ASSERT_FALSE(f->sections.empty());
    for (const HistSection& s : f->sections) {
      EXPECT_EQ(s.entries.size(), s.totals.entries) << s.trigger_info;
      uint64_t hits = 0;
      for (const HistEntry& e : s.entries) hits += e.hitcount();
      if (!s.trigger.has_nohitcount()) {
        EXPECT_EQ(hits, s.totals.hits) << s.trigger_info;
      }
    }
  }
}

// onchange().snapshot(): the saved values stay with their entry, the
// snapshot's details are the section's, not another entry's.
TEST(HistFile, SnapshotDetailsBeforeTheTotals) {
  auto f = parse_hist_file(testdata("hist-sched_waking-onchange-snapshot-7.2.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->sections.size(), 1u);
  const HistSection& s = f->sections[0];
  ASSERT_EQ(s.entries.size(), 1u);
  ASSERT_EQ(s.entries[0].saved.size(), 3u);
  EXPECT_EQ(s.entries[0].saved[0].field, "changed");
  EXPECT_EQ(s.entries[0].saved[0].number, 121u);
  ASSERT_TRUE(s.snapshot.has_value());
  EXPECT_EQ(s.snapshot->handler, "onchange($newprio)");
  EXPECT_EQ(s.snapshot->value, 121u);
  EXPECT_EQ(s.snapshot->key, "{ comm: tracebed-probe-                                    }");
  EXPECT_EQ(s.totals.hits, 14u);
  EXPECT_FALSE(parse_hist_file("# event histogram\n\nSnapshot taken (see tracing/snapshot).  Details:\n\tbad\n").ok());
}

TEST(HistFile, ThreeTriggersOnKmalloc) {
  auto f = parse_hist_file(testdata("hist-kmalloc-three-6.12.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->sections.size(), 3u);

  const HistSection& exec = f->sections[0];
  EXPECT_EQ(exec.trigger_info, "hist:keys=common_pid.execname:vals=hitcount,bytes_req:sort=hitcount:size=2048 [active]");
  EXPECT_EQ(exec.totals.hits, 52547u);
  EXPECT_EQ(exec.totals.entries, 8u);
  EXPECT_EQ(exec.totals.dropped, 0u);
  // { common_pid: ls              [       156] } hitcount:          2  bytes_req:        114
  const HistKey& pid = exec.entries[0].keys[0];
  EXPECT_EQ(pid.field, "common_pid");
  EXPECT_EQ(pid.symbol, "ls");
  EXPECT_EQ(pid.number, 156u);
  EXPECT_EQ(exec.entries[0].hitcount(), 2u);
  EXPECT_EQ(exec.entries[0].value("bytes_req")->number, 114u);

  // { call_site: [ffffffffaec27cc9] tracing_map_init+0x79/0x250  } hitcount: 12288 ...
  const HistSection& sym = f->sections[1];
  EXPECT_EQ(sym.entries.size(), 40u);
  EXPECT_EQ(sym.entries[0].keys[0].number, 0xffffffffaec27cc9u);
  EXPECT_EQ(sym.entries[0].keys[0].symbol, "tracing_map_init+0x79/0x250");
  EXPECT_EQ(sym.entries[0].value("bytes_alloc")->number, 786432u);

  // { bytes_req: ~ 2^13 } hitcount:          1
  const HistSection& log2 = f->sections[2];
  EXPECT_EQ(log2.entries[0].keys[0].log2, 13u);
  EXPECT_EQ(log2.entries[0].keys[0].text, "~ 2^13");
  EXPECT_EQ(log2.entries.back().keys[0].log2, 5u);
  EXPECT_EQ(log2.entries.back().hitcount(), 16541u);
}

TEST(HistFile, SyscallAndExecnameKeys) {
  auto f = parse_hist_file(testdata("hist-sys_enter-syscall-execname-6.12.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  const HistEntry& e = f->sections[0].entries[0];
  // { id: sys_newfstatat                [262], common_pid: ls              [       156] } hitcount:      12751
  EXPECT_EQ(e.key("id")->symbol, "sys_newfstatat");
  EXPECT_EQ(e.key("id")->number, 262u);
  EXPECT_EQ(e.key("common_pid")->symbol, "ls");
  EXPECT_EQ(e.key("common_pid")->number, 156u);
  EXPECT_EQ(e.hitcount(), 12751u);
  EXPECT_EQ(f->sections[0].entries[14].key("common_pid")->symbol, "tracebed-agent");
}

TEST(HistFile, NohitcountSymAndHex) {
  auto f = parse_hist_file(testdata("hist-kmem_cache_alloc-nohitcount-hex-6.12.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->sections.size(), 2u);
  const HistEntry& e = f->sections[0].entries[0];
  EXPECT_TRUE(f->sections[0].trigger.has_nohitcount());
  EXPECT_EQ(e.keys[0].symbol, "seq_open");
  EXPECT_EQ(e.value("hitcount"), nullptr);
  EXPECT_EQ(e.value("bytes_req")->number, 480u);
  // { gfp_flags: 820 } hitcount:         11
  EXPECT_EQ(f->sections[1].entries[0].keys[0].number, 0x820u);
  EXPECT_EQ(f->sections[1].entries[4].keys[0].number, 0x2800u);
}

TEST(HistFile, BucketsAndStacktraceKeys) {
  auto b = parse_hist_file(testdata("hist-kmalloc-buckets-6.12.txt"));
  ASSERT_TRUE(b.ok()) << b.error().message;
  // { bytes_req: ~ 1984-2047 } hitcount:          1
  EXPECT_EQ(b->sections[0].entries[0].keys[0].bucket, std::make_pair(uint64_t{1984}, uint64_t{2047}));
  EXPECT_EQ(b->sections[0].entries.back().keys[0].bucket, std::make_pair(uint64_t{0}, uint64_t{63}));

  auto s = parse_hist_file(testdata("hist-sched_process_exec-stacktrace-6.12.txt"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->sections[0].entries.size(), 1u);
  const HistEntry& e = s->sections[0].entries[0];
  EXPECT_THAT(e.keys[0].stack, ElementsAre("do_execveat_common.isra.0+0x182/0x1c0", "__x64_sys_execve+0x36/0x40",
                                           "do_syscall_64+0x87/0x180", "entry_SYSCALL_64_after_hwframe+0x76/0x7e"));
  EXPECT_EQ(e.hitcount(), 10u);
}

TEST(HistFile, OnmaxSavesFollowTheirEntry) {
  auto f = parse_hist_file(testdata("hist-sched_switch-onmax-save-6.12.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  // { next_pid:         12 } hitcount:          1
  //	max:        373  next_comm: kworker/u8:0                      prev_pid:          0
  const HistEntry& e = f->sections[0].entries[0];
  EXPECT_EQ(e.key("next_pid")->number, 12u);
  ASSERT_EQ(e.saved.size(), 3u);
  EXPECT_EQ(e.saved[0].field, "max");
  EXPECT_EQ(e.saved[0].number, 373u);
  EXPECT_EQ(e.saved[1].field, "next_comm");
  EXPECT_EQ(e.saved[1].text, "kworker/u8:0");
  EXPECT_EQ(e.saved[2].number, 0u);
}

TEST(HistFile, SyntheticEventHistogram) {
  auto f = parse_hist_file(testdata("hist-wakeup_lat-6.12.txt"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  const HistEntry& e = f->sections[0].entries[0];
  EXPECT_EQ(e.key("pid")->number, 27u);
  EXPECT_EQ(e.value("latency")->number, 31u);
}

TEST(HistFile, BadInputIsAnError) {
  EXPECT_FALSE(parse_hist_file("{ pid: 1 } hitcount: 1\n").ok());  // before "# event histogram"
  auto f = parse_hist_file("# event histogram\n#\n# trigger info: hist:keys=pid:vals=hitcount [active]\n#\n\n"
                           "{ next_pid: 1 } hitcount: 1\n");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message, ::testing::HasSubstr("key \"pid\" not in"));
  EXPECT_FALSE(parse_hist_file("# event histogram\nTotals:\n    Hits: x\n").ok());
}

}  // namespace
}  // namespace tracebed::tracefs

namespace tracebed::tracefs {
namespace {

// debian-7.2 after 'hist:keys=common_pid.execname:vals=hitcount.percent,bytes_req.graph'.
TEST(HistFile, PercentAndGraphValues) {
  auto f = testlib::testdata("hist-kmalloc-percent-graph-7.2.txt");
  auto h = parse_hist_file(f);
  ASSERT_TRUE(h.ok()) << h.error().message;
  const HistSection& s = h->sections[0];
  ASSERT_EQ(s.entries.size(), 4u);
  // { common_pid: sh [ 118] } hitcount: 32  hitcount (%):  65.30  bytes_req: ####################
  const HistEntry& e = s.entries[3];
  ASSERT_EQ(e.values.size(), 3u);
  EXPECT_EQ(e.hitcount(), 32u);
  EXPECT_EQ(e.values[1].field, "hitcount");
  ASSERT_TRUE(e.values[1].percent.has_value());
  EXPECT_DOUBLE_EQ(*e.values[1].percent, 65.30);
  EXPECT_EQ(e.values[2].field, "bytes_req");
  EXPECT_EQ(e.values[2].text, "####################");
  EXPECT_EQ(s.entries[0].values[2].text, "");  // no bar for the smallest
}

}  // namespace
}  // namespace tracebed::tracefs
