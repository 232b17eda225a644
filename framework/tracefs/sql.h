// An sqlhist-compatible compiler: SQL in, a synthetic event and hist
// triggers out, like libtracefs's tracefs_sql() and the sqlhist tool.
//
//   auto sql = compile_sql("SELECT end.next_comm AS name, start.pid, "
//                          "(end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS latency "
//                          "FROM sched_waking AS start JOIN sched_switch AS end "
//                          "ON start.pid = end.next_pid", "wakeup_lat", tracefs_resolver(fs));
//   sql->commands()   // the echo lines sqlhist prints
//   auto s = sql->create(fs.top());   // a Synth owning the event and both triggers
//
// The language (libtracefs Documentation/libtracefs-sql.txt):
//   SELECT <item>[, <item>...] FROM <event> [AS <alias>]
//     [JOIN <event> [AS <alias>] ON <a>.<field> = <b>.<field> [&& ...]]
//     [WHERE <filter>]
// An item is a field ("start.pid", "end.next_comm", "sched_waking.pid"),
// a field of each event added or subtracted ("(end.TIMESTAMP_USECS -
// start.TIMESTAMP_USECS)"), TIMESTAMP_DELTA[_USECS], or without JOIN a
// CAST(<field> AS HEX|SYM|SYM-OFFSET|SYSCALL|EXECNAME|COMM|LOG|LOG2|
// _COUNTER_); each may be named with AS. Keywords are case-insensitive; a
// field named like one is written with a backslash ("\from"). Events are
// "<event>" or "<system>.<event>". WHERE filters either event; conditions
// on different events may only be joined by a top-level "&&".
//
// What it produces, as tracefs_sql does (src/tracefs-hist.c): the
// synthetic event's fields take their types from the events' formats; the
// start event gets "hist:keys=<match>:<vars>" saving what the end needs;
// the end event gets "hist:keys=<match>:<vars>:onmatch(<start>).trace(
// <name>,<args>)". Variables are named as libtracefs names them,
// "__arg_<tag>_<n>" and "__<field>_<tag>_<n>", except that <tag> is a
// hash of the synthetic event's name (libtracefs takes a random number),
// so the output is the same on every run and two events' variables on one
// start event do not collide.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/file_formats.h"
#include "framework/tracefs/hist.h"
#include "framework/tracefs/synth.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::tracefs {

// A field of an event format, as much as the compiler needs.
struct SqlFormatField {
  std::string name;
  std::string type;  // "pid_t", "char", "__data_loc char[]", "const char *"
  uint32_t size = 0;
  bool is_signed = false;
  uint32_t array_len = 0;  // "char next_comm[16]" -> 16
  bool dynamic = false;    // __data_loc / __rel_loc
};

struct SqlFormat {
  EventName event;
  std::vector<SqlFormatField> fields;
  const SqlFormatField* field(std::string_view name) const;
};

// The field lines of an events/<sys>/<event>/format file.
Result<SqlFormat> parse_sql_format(const EventName& event, std::string_view format_text);
// The format a synthetic event will have (for chaining: SELECT ... FROM
// an earlier synthetic event).
SqlFormat synth_format(const SynthDef& ev);

// How the compiler learns about events: a bare name to its system, and an
// event's fields.
struct SqlResolver {
  std::function<Result<EventName>(std::string_view bare_name)> event;
  std::function<Result<SqlFormat>(const EventName&)> format;

  // Also knows these synthetic events (for chained statements).
  SqlResolver with(std::vector<SynthDef> synthetic) const;
};

// Events and formats of a live tracefs (available_events, format files).
SqlResolver tracefs_resolver(const Tracefs& fs);
// Built in, for printing commands without a kernel: the available_events
// and format files captured from debian-6.12 (6.12.107+deb13-cloud-amd64):
// every event name resolves to its system, and the events the talks'
// examples use have formats (sched_waking, sched_switch, sys_enter_openat,
// sys_exit_openat, raw_syscalls sys_enter and sys_exit, kmalloc). Other
// events need a kernel.
SqlResolver offline_resolver();
// The release the built-in files came from, and the files themselves.
std::string_view offline_release();
std::string offline_available_events();
std::string_view offline_format(const EventName& ev);  // empty when not built in

struct SqlOptions {
  // onmatch(...).<name>(args) instead of .trace(<name>,args), for kernels
  // whose README lacks "trace(<synthetic_event>,param list)".
  bool old_action_form = false;
};

// A compiled statement.
struct SqlHistDef {
  std::optional<SynthDef> synth;  // empty: a plain histogram (no JOIN)
  EventName start;                  // FROM
  HistTrigger start_hist;
  std::optional<EventName> end;     // JOIN
  std::optional<HistTrigger> end_hist;

  // The commands sqlhist prints, one per line, against a tracefs at root:
  //   echo '<synthetic event>' >> <root>/synthetic_events
  //   echo '<start hist>' >> <root>/events/<sys>/<event>/trigger
  //   echo '<end hist>' >> <root>/events/<sys>/<event>/trigger
  // dynamic_events: "s:<event>" to dynamic_events instead.
  std::vector<std::string> commands(std::string_view root = kDefaultRoot, bool dynamic_events = false) const;

  // Creates it: the synthetic event (at the top level), then the start
  // and end triggers in `inst` (the top level when null); the Synth
  // removes all three when it dies. A plain histogram is an Error here:
  // add start_hist.trigger() to its event.
  Result<Synth> create(const Instance& top, const Instance* inst = nullptr,
                       Synth::Via via = Synth::Via::synthetic_events) const;
};

// Compiles one statement. Errors name the statement and the token:
//   sql: unknown event "sched_wakin" at "sched_wakin AS start ..."
Result<SqlHistDef> compile_sql(std::string_view sql, std::string_view name, const SqlResolver& resolver,
                            SqlOptions options = {});

}  // namespace tracebed::tracefs
