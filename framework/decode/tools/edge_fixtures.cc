// The table of fixtures/edge: each edge case of the page and trace.dat
// formats as the contents the writers take (make_edge_fixtures.cc writes
// them; fixtures/edge/README.md says what each one is for).
#include "framework/decode/tools/edge_fixture_kit.h"

namespace tracebed::decode::edge {

std::vector<Output> edge_fixtures(const Inputs& k612, const Inputs& i386, const Inputs& k612_64k) {
  std::vector<Output> out;
  auto gen = [&](const Inputs& in, Endian e = Endian::little, uint32_t long_size = 8) {
    Gen g{in};
    g.endian = e;
    g.long_size = long_size;
    g.marker_ip = symbol_address(in.kallsyms, "tracing_mark_write");
    return g;
  };

  // e01: deltas around and far beyond 27 bits become time extends.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 5'000'000'000;
    const uint64_t gaps[] = {0, 1000, (1u << 27) - 1, 1u << 27, (1u << 27) + 1, 3'000'000'000,
                             600'000'000'000, 1, 999'999'999, uint64_t{1} << 40, 7};
    uint64_t i = 0;
    for (uint64_t gap : gaps) {
      ts += gap;
      must(w.add(ts, g.marker(kTasks[0], fmt::format("gap {} ns\n", gap))));
      must(w.add(ts + 10, g.wakeup(kTasks[0], kTasks[1], 0)));
      ts += 10;
      ++i;
    }
    add_cpu(c.buffers[0], 0, w.finish());
    CpuBufferWriter w1(l);
    uint64_t t1 = 5'000'000'500;
    for (int k = 0; k < 200; ++k) {
      t1 += (k % 50 == 49) ? (uint64_t{1} << 28) + 12345 : 20000 + g.below(20000);
      must(w1.add(t1, g.any(1, k)));
    }
    add_cpu(c.buffers[0], 1, w1.finish());
    out.push_back({"e01-time-extend", std::move(c), 7, Z::none});
  }

  // e02: absolute time stamps (type_len 31) before events, as the kernel
  // writes in absolute mode; CPU 1's sub-buffer stamp has bits above 59 set
  // that the absolute stamps cannot carry.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0, cpu1;
    for (int page = 0; page < 3; ++page) {
      uint64_t t = 7'000'000'000 + page * 50'000'000ull;
      SubBufferWriter w(l, t);
      for (int k = 0; k < 12; ++k) {
        uint64_t abs = t + 1000 + k * 333'333ull;
        must(w.time_stamp(abs));
        must(w.event(0, g.any(0, k)));
        if (k % 4 == 3) must(w.event(250, g.wakeup(kTasks[3], kTasks[0], 0)));
      }
      append(cpu0, w.finish());
    }
    {
      uint64_t t = (uint64_t{1} << 59) + 9'000'000'000;
      SubBufferWriter w(l, t);
      for (int k = 0; k < 5; ++k) {
        must(w.time_stamp(t + 500 + k * 1'000'000ull));
        must(w.event(0, g.marker(kTasks[1], fmt::format("absolute {}\n", k))));
      }
      append(cpu1, w.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    add_cpu(c.buffers[0], 1, std::move(cpu1));
    out.push_back({"e02-absolute-ts", std::move(c), 7, Z::none});
  }

  // e03: discarded events (type 29 with a length) inside pages, a page
  // closed by rb_reset_tail padding, and a delta-0 padding inside commit
  // followed by an event no reader may show.
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0;
    {
      SubBufferWriter w(l, 11'000'000'000);
      must(w.event(0, g.marker(kTasks[0], "before discard\n")));
      must(w.discarded(500, 24));
      must(w.event(100, g.marker(kTasks[0], "after a 24-byte discarded event\n")));
      must(w.discarded(7, 140));
      must(w.event(3000, g.wakeup(kTasks[0], kTasks[2], 0)));
      for (int k = 0; k < 40; ++k) must(w.event(1000, g.any(0, k)));
      w.close_tail();
      append(cpu0, w.finish());
    }
    {
      SubBufferWriter w(l, 11'100'000'000);
      must(w.event(0, g.marker(kTasks[1], "last event before padding\n")));
      must(w.null_padding());
      must(w.event(10, g.marker(kTasks[1], "MUST NOT APPEAR: after delta-0 padding\n")));
      append(cpu0, w.finish());
    }
    {
      SubBufferWriter w(l, 11'200'000'000);
      must(w.discarded(1, 16));   // a page that starts with a discarded event
      must(w.event(20, g.marker(kTasks[2], "after leading discard\n")));
      append(cpu0, w.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    out.push_back({"e03-padding-discarded", std::move(c), 7, Z::none});
  }

  // e04: lost events: a stored count, the flag alone, a stored count on a
  // page that starts with a time extend, and a full page with no room for
  // the count.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0;
    CpuBufferWriter w(l);
    uint64_t ts = 20'000'000'000;
    for (int k = 0; k < 10; ++k) must(w.add(ts += 5000, g.any(0, k)));
    w.lose_events(uint64_t{123});
    for (int k = 0; k < 10; ++k) must(w.add(ts += 5000, g.any(0, k)));
    w.lose_events(std::nullopt);
    for (int k = 0; k < 10; ++k) must(w.add(ts += 5000, g.any(0, k)));
    cpu0 = w.finish();
    {
      // Counted in the commit word, but the first entry is a time extend.
      SubBufferWriter p(l, ts + 1000);
      must(p.time_extend(uint64_t{1} << 30));
      must(p.event(0, g.marker(kTasks[0], "first event after 77 lost, behind a time extend\n")));
      must(p.event(400, g.wakeup(kTasks[0], kTasks[1], 0)));
      p.set_missed_events(uint64_t{77});
      append(cpu0, p.finish());
      ts += 1000 + (uint64_t{1} << 30) + 400;
    }
    {
      SubBufferWriter p(l, ts + 1000);
      uint32_t d = 0;
      while (p.room() >= rb_event_size(40) + 8) {
        must(p.event(d, g.marker(kTasks[2], "filling the page: no room for a count\n")));
        d = 700;
      }
      p.close_tail();
      p.set_missed_events(uint64_t{5});
      append(cpu0, p.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    CpuBufferWriter w1(l);
    uint64_t t1 = 20'000'000'100;
    for (int k = 0; k < 30; ++k) must(w1.add(t1 += 7000, g.any(1, k)));
    w1.lose_events(uint64_t{1});
    for (int k = 0; k < 5; ++k) must(w1.add(t1 += 7000, g.any(1, k)));
    add_cpu(c.buffers[0], 1, w1.finish());
    out.push_back({"e04-missed-events", std::move(c), 7, Z::none});
  }

  // e05: a 32-bit kernel: 4-byte commit and long, data at offset 12.
  {
    auto c = base(i386, 4096, 2, Endian::little, 4);
    Gen g = gen(i386, Endian::little, 4);
    auto l = layout_of(c, 4);
    CpuBufferWriter w(l);
    uint64_t ts = 30'000'000'000;
    for (int k = 0; k < 120; ++k) {
      ts += 3000 + g.below(30000);
      if (k == 60) ts += uint64_t{1} << 29;
      switch (k % 3) {
        case 0: must(w.add(ts, g.wakeup(kTasks[k % 4], kTasks[(k + 1) % 4], 0))); break;
        case 1: must(w.add(ts, g.irq(kTasks[k % 4], 24, "ttyS0"))); break;
        default: must(w.add(ts, g.marker(kTasks[k % 4], fmt::format("i386 marker {}\n", k)))); break;
      }
      if (k == 90) w.lose_events(uint64_t{9});
    }
    add_cpu(c.buffers[0], 0, w.finish());
    CpuBufferWriter w1(l);
    for (int k = 0; k < 20; ++k) must(w1.add(30'000'000'000 + k * 10007, g.wakeup(kTasks[1], kTasks[2], 1)));
    add_cpu(c.buffers[0], 1, w1.finish());
    out.push_back({"e05-long32-v6", c, 6, Z::none});
    out.push_back({"e05-long32", std::move(c), 7, Z::none});
  }

  // e06: a big-endian kernel: bitfields from the high bits, numbers big-endian.
  {
    auto c = base(k612, 4096, 2, Endian::big);
    Gen g = gen(k612, Endian::big);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 40'000'000'000;
    for (int k = 0; k < 150; ++k) {
      ts += 1 + g.below(30000);
      if (k == 70) ts += uint64_t{1} << 33;
      must(w.add(ts, g.any(0, k)));
      if (k == 100) w.lose_events(uint64_t{4});
    }
    add_cpu(c.buffers[0], 0, w.finish());
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 40'000'000'333, 60));
    out.push_back({"e06-big-endian-v6", c, 6, Z::none});
    out.push_back({"e06-big-endian-v7zstd", c, 7, Z::zstd});
    out.push_back({"e06-big-endian", std::move(c), 7, Z::none});
  }

  // e07: 64 KiB sub-buffers with long (type_len 0) events.
  {
    auto c = base(k612_64k, 65536, 2);
    Gen g = gen(k612_64k);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 50'000'000'000;
    for (int k = 0; k < 90; ++k) {
      ts += 10000 + g.below(10000);
      std::string text = fmt::format("big {} ", k);
      text.append(200 + g.below(1800), static_cast<char>('A' + k % 26));
      must(w.add(ts, g.marker(kTasks[k % 3], text + "\n")));
      must(w.add(ts + 5, g.wakeup(kTasks[k % 3], kTasks[4], 0)));
    }
    add_cpu(c.buffers[0], 0, w.finish());
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 50'000'000'777, 100));
    out.push_back({"e07-subbuf64k-v7none", c, 7, Z::none});
    out.push_back({"e07-subbuf64k-v7zstd", std::move(c), 7, Z::zstd});
  }

  // e08: four CPUs, data only on 1 and 3 (v7 lists sparse ids; v6 writes
  // empty entries).
  {
    auto c = base(k612, 4096, 4);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 60'000'000'000, 40));
    add_cpu(c.buffers[0], 3, mixed_cpu(g, l, 3, 60'000'000'500, 40));
    out.push_back({"e08-empty-cpus-v6", c, 6, Z::none});
    out.push_back({"e08-empty-cpus-v7none", std::move(c), 7, Z::none});
  }

  // e09: ids no format describes, among known events.
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 70'000'000'000;
    for (int k = 0; k < 30; ++k) {
      ts += 2000 + g.below(2000);
      if (k % 5 == 2) {
        Payload p(k612.fmt("sched/sched_wakeup"), Endian::little, kTasks[k % 3].pid);
        p.str("comm", "ghost").num("pid", 4242).raw_type(k % 10 == 2 ? 4242 : 65535);
        must(w.add(ts, p.bytes()));
      } else {
        must(w.add(ts, g.any(0, k)));
      }
    }
    add_cpu(c.buffers[0], 0, w.finish());
    out.push_back({"e09-unknown-event", std::move(c), 7, Z::none});
  }

  // e10: the top buffer and two instances (BUFFER options); in v7 one
  // instance uses 16 KiB sub-buffers and its own clock.
  for (int version : {6, 7}) {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    add_cpu(c.buffers[0], 0, mixed_cpu(g, l, 0, 80'000'000'000, 30));
    TraceDatBufferData foo;
    foo.name = "foo";
    foo.clock = "local";
    add_cpu(foo, 0, mixed_cpu(g, l, 0, 80'000'000'100, 25));
    add_cpu(foo, 1, mixed_cpu(g, l, 1, 80'000'000'200, 25));
    c.buffers.push_back(std::move(foo));
    TraceDatBufferData bar;
    bar.name = "bar";
    bar.clock = version == 7 ? "global" : "local";
    bar.page_size = version == 7 ? 16384 : 0;
    add_cpu(bar, 1, mixed_cpu(g, layout_of(c, 8, version == 7 ? 16384 : 0), 1, 80'000'000'300, 60));
    c.buffers.push_back(std::move(bar));
    if (version == 7) out.push_back({"e10-instances-v7zstd", c, 7, Z::zstd});
    out.push_back({version == 6 ? "e10-instances-v6" : "e10-instances-v7none", std::move(c), version,
                   Z::none});
  }

  // e12: strings at their limits: an empty and a zero-length __data_loc
  // string, a 16-byte comm without NUL, an empty trace_marker buffer, one
  // without a newline and one with a newline inside, pid 0 and a pid that
  // saved_cmdlines does not know.
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 95'000'000'000;
    auto next = [&] { return ts += 1000; };
    const Task idle{0, "swapper/0"}, stranger{4321, "stranger"};
    must(w.add(next(), g.irq(kTasks[0], 24, "")));
    {
      Payload p(k612.fmt("irq/irq_handler_entry"), Endian::little, kTasks[0].pid);
      // Length 0, pointing at a NUL inside the record.
      auto end = static_cast<uint32_t>(p.bytes().size());
      p.num("irq", 25).tail("").loc("name", end, 0);
      must(w.add(next(), p.bytes()));
    }
    {
      Payload p(k612.fmt("sched/sched_switch"), Endian::little, idle.pid);
      p.str("prev_comm", "swapper/0").num("prev_pid", 0).num("prev_prio", 120).num("prev_state", 0)
          .full_str("next_comm", "kworker/u16:2-ev").num("next_pid", 77).num("next_prio", 120);
      must(w.add(next(), p.bytes()));
    }
    must(w.add(next(), g.wakeup(idle, kTasks[1], 0)));
    must(w.add(next(), g.marker(kTasks[1], "")));
    must(w.add(next(), g.marker(kTasks[1], "no newline at the end")));
    must(w.add(next(), g.marker(kTasks[1], "two\nlines\n")));
    must(w.add(next(), g.marker(stranger, "from a pid saved_cmdlines does not know\n")));
    must(w.add(next(), g.switch_ev(stranger, idle, 0x100)));   // a state bit beyond the table
    add_cpu(c.buffers[0], 0, w.finish());
    out.push_back({"e12-strings", std::move(c), 7, Z::none});
  }

  // e13: lost-event flags on sub-buffers whose first entry is not an event:
  // a discarded event (count 55), an absolute stamp (count 66); then, for
  // contrast, a stored count on an ordinary page (count 88).
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0;
    uint64_t t = 99'000'000'000;
    {
      SubBufferWriter p(l, t);
      for (int k = 0; k < 5; ++k) must(p.event(k ? 800 : 0, g.any(0, k)));
      append(cpu0, p.finish());
    }
    {
      SubBufferWriter p(l, t += 1'000'000);
      must(p.discarded(40, 24));
      must(p.event(60, g.marker(kTasks[0], "first event after 55 lost, behind a discarded event\n")));
      must(p.event(500, g.wakeup(kTasks[0], kTasks[1], 0)));
      p.set_missed_events(uint64_t{55});
      append(cpu0, p.finish());
    }
    {
      SubBufferWriter p(l, t += 1'000'000);
      must(p.time_stamp(t + 300));
      must(p.event(0, g.marker(kTasks[1], "first event after 66 lost, behind an absolute stamp\n")));
      must(p.event(500, g.wakeup(kTasks[1], kTasks[2], 0)));
      p.set_missed_events(uint64_t{66});
      append(cpu0, p.finish());
    }
    {
      SubBufferWriter p(l, t += 1'000'000);
      must(p.event(0, g.marker(kTasks[2], "first event after 88 lost\n")));
      must(p.event(500, g.wakeup(kTasks[2], kTasks[0], 0)));
      p.set_missed_events(uint64_t{88});
      append(cpu0, p.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    out.push_back({"e13-missed-behind-non-events", std::move(c), 7, Z::none});
  }

  // e11: one trace in every version and compression; CPU 0 spans several
  // 10-page compression chunks.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    add_cpu(c.buffers[0], 0, mixed_cpu(g, l, 0, 90'000'000'000, 2000, 60000));
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 90'000'000'050, 300, 150000));
    out.push_back({"e11-formats-v6", c, 6, Z::none});
    out.push_back({"e11-formats-v7none", c, 7, Z::none});
    out.push_back({"e11-formats-v7zstd", c, 7, Z::zstd});
    out.push_back({"e11-formats-v7zlib", std::move(c), 7, Z::zlib});
  }
  return out;
}

}  // namespace tracebed::decode::edge
