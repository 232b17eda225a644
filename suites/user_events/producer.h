// Runs the guest's user_events producer (vmimages/user_events_producer) and
// reads back what it says it did, line by line:
//
//   ProducerRun r = run_producer({"reg r w0 31 4 0 test u32 count", "write r 7"});
//   r.get("reg", "r").kv("index")   -> "0"
//   r.get("write", "r").result      -> "ok" or "EBADF"
//
// BackgroundProducer runs a script while the test changes tracefs, for the
// enable bit: the script waits for the bit, the test waits for its lines.
#pragma once

#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tracebed::suites {

inline constexpr std::string_view kUserEventsProducer = "/opt/tracebed/bin/tracebed-user-events-producer";

struct ProducerLine {
  std::string op;      // "reg", "child.waitbit"
  std::string id;      // the registration, word or name; "-" when none
  std::string result;  // "ok" or an errno name
  std::map<std::string, std::string> kv;
  std::string line;    // as printed, for messages
  bool ok() const { return result == "ok"; }
  std::string value(const std::string& key) const;
};

void PrintTo(const ProducerLine& l, std::ostream* os);

struct ProducerRun {
  int pid = 0;
  std::vector<ProducerLine> lines;
  std::string text;  // the whole output, for messages
  // The nth line of this op and id; a missing line is a test failure and an
  // empty line (result "missing").
  ProducerLine get(std::string_view op, std::string_view id, size_t nth = 0) const;
  std::vector<ProducerLine> all(std::string_view op) const;
  size_t count(std::string_view op, std::string_view id, std::string_view result) const;
};

ProducerRun parse_producer_output(std::string_view out);

// Runs the script (one operation per line) and waits for the program to end.
ProducerRun run_producer(const std::vector<std::string>& script);

// "s:" + percent-encoding, the producer's string argument.
std::string producer_string(std::string_view s);
// "x:" + hex, the producer's byte argument (struct fields).
std::string producer_bytes(std::string_view b);
std::string hex(std::string_view b);
// The bytes of the producer's hex ("sample r ok raw=HEX"); "-" is none.
std::string unhex(std::string_view h);

class BackgroundProducer {
 public:
  explicit BackgroundProducer(const std::vector<std::string>& script);
  BackgroundProducer(const BackgroundProducer&) = delete;
  BackgroundProducer& operator=(const BackgroundProducer&) = delete;
  ~BackgroundProducer();

  // Waits until the output has the nth line of op and id (a test failure
  // with the output so far after `timeout`) and returns it.
  ProducerLine wait_for(std::string_view op, std::string_view id, size_t nth = 0,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));
  // Waits for the program to end and returns all it said.
  ProducerRun finish(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ProducerRun output() const;

 private:
  int pid_ = 0;
  bool done_ = false;
  std::string out_path_;
  std::string script_path_;
};

}  // namespace tracebed::suites
