// `tracebed bpf-ctx [-i trace.dat | -f FORMAT | --kernel K] SYSTEM/EVENT`:
// prints the C context struct a BPF_PROG_TYPE_TRACEPOINT program of that
// kernel reads the event's record through (framework/bpf/context.h), from
// the event's format file: one a trace.dat stores or a file captured from
// events/<sys>/<event>/format (offline), or the guest's own (--kernel).
// With --program, the whole generated program that reads every field.

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/bpf/context.h"
#include "framework/bpf/program.h"
#include "framework/cli/commands.h"
#include "framework/decode/trace_dat.h"
#include "framework/tracefs/tracefs.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/guests/guest.h"

namespace tracebed::cli {
namespace {

struct Args {
  std::string event;
  std::string input;
  std::string format_file;
  std::string kernel;
  std::string accel;
  bool program = false;
};

std::pair<std::string, std::string> split_event(const std::string& event) {
  size_t slash = event.find_first_of("/:");
  if (slash == std::string::npos || slash == 0 || slash + 1 == event.size())
    usage_error(fmt::format("bpf-ctx: \"{}\" is not SYSTEM/EVENT", event));
  return {event.substr(0, slash), event.substr(slash + 1)};
}

void print(const decode::EventFormat& format, bool program) {
  auto ctx = bpf::context_of(format);
  if (!ctx) fail(ctx.error().message, Exit::usage);
  if (!program) {
    fmt::print("{}", bpf::c_struct(*ctx));
  } else {
    bpf::ObjectSource src;
    src.add(bpf::tracepoint_program(*ctx));
    fmt::print("{}", src.text());
  }
  exit_with(Exit::passed);
}

// The format from a file: a trace.dat's stored one, or a format file.
void print_offline(const Args& a, const std::string& system, const std::string& name) {
  if (!a.format_file.empty()) {
    auto text = base::read_file(a.format_file);
    if (!text) usage_error(text.error().message);
    auto f = decode::parse_event_format(*text, system, a.format_file);
    if (!f) usage_error(f.error().message);
    if ((*f)->name != name)
      usage_error(fmt::format("bpf-ctx: {} is the format of {}, not {}", a.format_file, (*f)->name, name));
    print(**f, a.program);
  }
  auto dat = decode::TraceDat::open(a.input);
  if (!dat) usage_error(dat.error().message);
  const decode::EventFormat* f = (*dat)->context().event_by_name(system, name);
  if (!f) usage_error(fmt::format("bpf-ctx: {} stores no format of {}/{}", a.input, system, name));
  print(*f, a.program);
}

void print_live(const Args& a, const std::string& system, const std::string& name) {
  auto guest = boot_guest(a.kernel, a.accel);
  auto& g = *guest;
  tracefs::Tracefs fs = tracefs_of(g);
  auto text = fs.top().event(system, name).format();
  std::unique_ptr<decode::EventFormat> f;
  std::string problem;
  if (!text) {
    problem =
        fmt::format("{} ({}) has no event {}/{}: {}", g.kernel_name(), g.release(), system, name, text.error().message);
  } else if (auto parsed = decode::parse_event_format(*text, system, "events/" + system + "/" + name + "/format")) {
    f = std::move(parsed).value();
  } else {
    problem = parsed.error().message;
  }
  if (Status st = g.stop(); !st) fmt::print(stderr, "tracebed: {}\n", st.error().message);
  if (!f) fail(problem, Exit::usage);
  fmt::print(stderr, "tracebed: {} ({})\n", g.kernel_name(), g.release());
  print(*f, a.program);
}

}  // namespace

void add_bpf_ctx_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bpf-ctx", "print the BPF tracepoint context struct of an event, from its format");
  auto args = std::make_shared<Args>();
  cmd->add_option("-i,--input", args->input, "a trace.dat whose stored format to use");
  cmd->add_option("-f,--format", args->format_file, "a captured events/<sys>/<event>/format file");
  cmd->add_option("-k,--kernel", args->kernel, "read the format in this guest kernel (catalogue name or bzImage)");
  cmd->add_option("--accel", args->accel, "kvm or tcg (default: probe)")->check(CLI::IsMember({"kvm", "tcg"}));
  cmd->add_flag("--program", args->program, "print the whole BPF program that reads every field");
  cmd->add_option("event", args->event, "SYSTEM/EVENT, e.g. sched/sched_switch")->required();
  cmd->final_callback([args] {
    auto [system, name] = split_event(args->event);
    int sources = !args->input.empty() + !args->format_file.empty() + !args->kernel.empty();
    if (sources != 1) usage_error("bpf-ctx: give one of -i TRACE_DAT, -f FORMAT or --kernel K");
    if (!args->kernel.empty()) print_live(*args, system, name);
    print_offline(*args, system, name);
  });
}

}  // namespace tracebed::cli
