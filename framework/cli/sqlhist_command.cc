// `tracebed sqlhist [-n NAME] [--kernel K [-e]] 'SQL'`: compiles sqlhist's
// SQL into a synthetic event and hist triggers (framework/tracefs/sql.h)
// and prints the commands, as sqlhist does. Without a kernel the events'
// formats are the built-in ones of debian-6.12; with --kernel they are the
// guest's, and -e creates everything there and prints what the kernel
// shows back. Several statements (each with its -n, in order) may build on
// the synthetic events of the ones before.

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/tracefs/sql.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/guests/guest.h"

namespace tracebed::cli {
namespace {

struct Args {
  std::vector<std::string> names;
  std::vector<std::string> sql;
  std::string file;
  std::string kernel;
  bool execute = false;
  bool dynamic = false;
  std::string accel;
};

std::string read_sql_file(const std::string& file) {
  auto text = base::read_file(file == "-" ? "/dev/stdin" : file);
  if (!text) usage_error(text.error().message);
  return std::move(text).value();
}

// Compiles every statement, each seeing the synthetic events before it.
std::vector<tracefs::SqlHistDef> compile_all(const Args& a, const tracefs::SqlResolver& base, bool old_form) {
  std::vector<tracefs::SqlHistDef> out;
  std::vector<tracefs::SynthDef> made;
  for (size_t i = 0; i < a.sql.size(); ++i) {
    std::string name = i < a.names.size() ? a.names[i] : "Anonymous";  // sqlhist's default
    auto r = tracefs::compile_sql(a.sql[i], name, base.with(made), {.old_action_form = old_form});
    if (!r) usage_error(r.error().message);  // the statement is the argument
    if (r->synth) made.push_back(*r->synth);
    out.push_back(std::move(*r));
  }
  return out;
}

void print_commands(const std::vector<tracefs::SqlHistDef>& all, std::string_view root, bool dynamic) {
  for (const auto& h : all)
    for (const std::string& line : h.commands(root, dynamic)) fmt::print("{}\n", line);
  std::fflush(stdout);
}

// Creates everything in `fs`, then prints synthetic_events and the trigger
// files as the kernel shows them. The Synths remove it all on return.
Status execute(const tracefs::Tracefs& fs, const std::vector<tracefs::SqlHistDef>& all, bool dynamic) {
  tracefs::Instance top = fs.top();
  std::vector<tracefs::Synth> made;
  std::vector<tracefs::EventName> events;
  auto note = [&](const tracefs::EventName& e) {
    if (std::find(events.begin(), events.end(), e) == events.end()) events.push_back(e);
  };
  for (const auto& h : all) {
    if (!h.synth) {
      tracefs::Event ev = top.event(h.start.system, h.start.name);
      TRACEBED_TRY(ev.add_trigger(h.start_hist.trigger()));
      note(h.start);
      continue;
    }
    auto s = h.create(top, nullptr, dynamic ? tracefs::Synth::Via::dynamic_events : tracefs::Synth::Via::synthetic_events);
    if (!s) return s.error();
    made.push_back(std::move(*s));
    note(h.start);
    note(*h.end);
  }
  fmt::print("\n# {}/synthetic_events\n", fs.root());
  if (auto t = top.files().read("synthetic_events")) fmt::print("{}", *t);
  for (const auto& e : events) {
    fmt::print("# {}/events/{}/{}/trigger\n", fs.root(), e.system, e.name);
    auto t = top.event(e.system, e.name).triggers();
    if (!t) return t.error();
    for (const auto& entry : *t) fmt::print("{}\n", entry.line);
  }
  std::fflush(stdout);
  for (auto it = made.rbegin(); it != made.rend(); ++it) TRACEBED_TRY(it->destroy());
  return {};
}

}  // namespace

void add_sqlhist_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("sqlhist", "compile sqlhist SQL into a synthetic event and hist triggers");
  auto args = std::make_shared<Args>();
  cmd->add_option("-n,--name", args->names, "synthetic event name, one per statement (default: Anonymous)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("-f,--file", args->file, "read the SQL from FILE ('-': standard input)");
  cmd->add_option("-k,--kernel", args->kernel, "resolve events in this guest kernel (catalogue name or bzImage)");
  cmd->add_flag("-e,--execute", args->execute, "create them in the guest and print what the kernel shows back");
  cmd->add_flag("--dynamic-events", args->dynamic, "define the event with \"s:\" in dynamic_events");
  cmd->add_option("--accel", args->accel, "kvm or tcg (default: probe)")
      ->check(CLI::IsMember({"kvm", "tcg"}));
  cmd->add_option("sql", args->sql, "SQL statements, in order");
  cmd->final_callback([args] {
    if (!args->file.empty()) args->sql.insert(args->sql.begin(), read_sql_file(args->file));
    if (args->sql.empty()) usage_error("sqlhist: no SQL (give it as an argument or with -f)");
    if (args->names.size() > args->sql.size())
      usage_error(fmt::format("sqlhist: {} names for {} statements", args->names.size(), args->sql.size()));
    if (args->kernel.empty()) {
      if (args->execute) usage_error("sqlhist: -e needs --kernel: the events are created in a guest");
      fmt::print(stderr, "tracebed: events resolved from the built-in formats of {}; --kernel uses a guest's\n",
                 tracefs::offline_release());
      print_commands(compile_all(*args, tracefs::offline_resolver(), false), tracefs::kDefaultRoot, args->dynamic);
      return;
    }
    auto guest = boot_guest(args->kernel, args->accel);
    auto& g = *guest;
    tracefs::Tracefs fs = tracefs_of(g);
    auto readme = fs.readme();
    if (!readme) cannot_run(readme.error().message);
    // libtracefs has_new_format(): the README names trace() where it exists.
    bool old_form = readme->find("trace(<synthetic_event>,param list)") == std::string::npos;
    fmt::print(stderr, "tracebed: {} ({}){}\n", g.kernel_name(), g.release(),
               old_form ? ": onmatch().<event>() form, no trace()" : "");
    auto all = compile_all(*args, tracefs::tracefs_resolver(fs), old_form);
    print_commands(all, fs.root(), args->dynamic);
    int status = 0;
    if (args->execute) {
      if (Status s = execute(fs, all, args->dynamic); !s) {
        fmt::print(stderr, "tracebed: {}\n", s.error().message);
        status = 1;
      }
    }
    if (Status console = g.check_console(); !console) {
      fmt::print(stderr, "tracebed: {}\n", console.error().message);
      status = 1;
    }
    if (Status st = g.stop(); !st) fmt::print(stderr, "tracebed: {}\n", st.error().message);
    std::fflush(stderr);
    std::exit(status);
  });
}

}  // namespace tracebed::cli
