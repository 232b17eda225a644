#include "suites/user_events/producer.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "framework/testing/assert_ok.h"
#include "framework/testing/guest_environment.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {

std::string ProducerLine::value(const std::string& key) const {
  auto it = kv.find(key);
  if (it == kv.end()) {
    ADD_FAILURE() << "no " << key << "= in the producer's line \"" << line << "\"";
    return "";
  }
  return it->second;
}

void PrintTo(const ProducerLine& l, std::ostream* os) { *os << "\"" << l.line << "\""; }

ProducerRun parse_producer_output(std::string_view out) {
  ProducerRun run;
  run.text = std::string(out);
  for (std::string_view raw : tracefs::split_lines(out)) {
    std::string_view line = raw;
    size_t hash = line.find(" # ");
    std::vector<std::string_view> w = tracefs::split_words(line.substr(0, hash));
    if (w.empty()) continue;
    if (w[0] == "pid" && w.size() == 2) {
      if (run.pid == 0) run.pid = std::atoi(std::string(w[1]).c_str());
      continue;
    }
    ProducerLine l;
    l.line = std::string(raw);
    l.op = std::string(w[0]);
    if (w.size() > 1) l.id = std::string(w[1]);
    if (w.size() > 2) l.result = std::string(w[2]);
    for (size_t i = 3; i < w.size(); ++i) {
      size_t eq = w[i].find('=');
      if (eq != std::string_view::npos) l.kv[std::string(w[i].substr(0, eq))] = std::string(w[i].substr(eq + 1));
    }
    run.lines.push_back(std::move(l));
  }
  return run;
}

ProducerLine ProducerRun::get(std::string_view op, std::string_view id, size_t nth) const {
  for (const auto& l : lines)
    if (l.op == op && l.id == id && nth-- == 0) return l;
  ADD_FAILURE() << "the producer printed no line \"" << op << " " << id << "\"; it said:\n" << text;
  ProducerLine missing;
  missing.result = "missing";
  return missing;
}

std::vector<ProducerLine> ProducerRun::all(std::string_view op) const {
  std::vector<ProducerLine> out;
  for (const auto& l : lines)
    if (l.op == op) out.push_back(l);
  return out;
}

size_t ProducerRun::count(std::string_view op, std::string_view id, std::string_view result) const {
  size_t n = 0;
  for (const auto& l : lines) n += l.op == op && l.id == id && l.result == result;
  return n;
}

ProducerRun run_producer(const std::vector<std::string>& script) {
  std::string in;
  for (const auto& l : script) in += l + "\n";
  auto r = testlib::guest().run({std::string(kUserEventsProducer)}, std::chrono::seconds(120), in);
  EXPECT_OK(r);
  if (!r) return {};
  EXPECT_TRUE(r->ok()) << kUserEventsProducer << ": status " << r->shell_status() << ": " << r->err;
  ProducerRun run = parse_producer_output(r->out);
  EXPECT_NE(run.pid, 0) << "the producer did not say its pid: " << r->out << r->err;
  return run;
}

std::string hex(std::string_view b) {
  std::string out;
  for (unsigned char c : b) out += fmt::format("{:02x}", c);
  return out;
}

std::string unhex(std::string_view h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  EXPECT_TRUE(h == "-" || h.size() % 2 == 0) << "odd hex: " << h;
  return out;
}

std::string producer_string(std::string_view s) {
  std::string out = "s:";
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-') out.push_back(static_cast<char>(c));
    else out += fmt::format("%{:02x}", c);
  }
  return out;
}

std::string producer_bytes(std::string_view b) { return "x:" + hex(b); }

namespace {
std::atomic<int> g_background{0};
}

BackgroundProducer::BackgroundProducer(const std::vector<std::string>& script) {
  int n = g_background++;
  script_path_ = fmt::format("/tmp/tracebed-ue-{}-{}.script", getpid(), n);
  out_path_ = fmt::format("/tmp/tracebed-ue-{}-{}.out", getpid(), n);
  std::string text;
  for (const auto& l : script) text += l + "\n";
  auto& client = testlib::guest().agent();
  auto w = client.write_file(script_path_, text, tracebed::agent::kWriteCreate, 0644);
  if (!w.ok() || *w != 0) {
    ADD_FAILURE() << "writing " << script_path_ << " in the guest: " << (w.ok() ? std::strerror(*w) : w.error().message);
    done_ = true;
    return;
  }
  auto pid = client.spawn({std::string(kUserEventsProducer), "-f", script_path_}, {}, out_path_);
  if (!pid.ok()) {
    ADD_FAILURE() << "spawning the producer: " << pid.error().message;
    done_ = true;
    return;
  }
  pid_ = *pid;
}

BackgroundProducer::~BackgroundProducer() {
  if (!done_ && pid_ > 0) (void)testlib::guest().agent().kill(pid_, SIGKILL, std::chrono::seconds(5));
}

ProducerRun BackgroundProducer::output() const {
  auto f = testlib::guest().agent().read_file(out_path_);
  return parse_producer_output(f.ok() ? *f : "");
}

ProducerLine BackgroundProducer::wait_for(std::string_view op, std::string_view id, size_t nth,
                                          std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  ProducerRun run;
  for (;;) {
    run = output();
    size_t k = nth;
    for (const auto& l : run.lines)
      if (l.op == op && l.id == id && k-- == 0) return l;
    if (std::chrono::steady_clock::now() >= deadline || done_) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "the producer printed no line \"" << op << " " << id << "\" (#" << nth << ") within "
                << timeout.count() << " ms; it said:\n"
                << run.text;
  ProducerLine missing;
  missing.result = "missing";
  return missing;
}

ProducerRun BackgroundProducer::finish(std::chrono::milliseconds timeout) {
  if (!done_ && pid_ > 0) {
    auto w = testlib::guest().agent().kill(pid_, 0, timeout);
    EXPECT_OK(w);
    if (w.ok()) {
      EXPECT_TRUE(w->exited) << "the producer did not end within " << timeout.count() << " ms";
      if (w->exited) {
        EXPECT_EQ(w->exit_code, 0) << "producer exit status";
        done_ = true;
      }
    }
  }
  return output();
}

}  // namespace tracebed::suites
