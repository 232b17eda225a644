#include "framework/matrix/junit.h"

#include <expat.h>

#include <cstdlib>
#include <cstring>
#include <regex>

#include <fmt/format.h>

#include "framework/base/utf8.h"

namespace tracebed::matrix {
namespace {

struct Parser {
  JunitFile out;
  std::vector<std::string> stack;  // element names
  std::string suite;               // current <testsuite name>
  bool in_case = false;
  bool case_dropped = false;
  TestResult current;
  // What the current case's children said; its state is decided at its end,
  // since gtest writes <properties> after <skipped>.
  bool failed = false, errored = false, skipped = false;
  bool has_detail = false;          // inside <failure>/<skipped>/<error>
  std::string detail;
  std::string detail_attr_message;
  std::string error;                // the first structural problem
};

const char* attr(const XML_Char** atts, const char* name) {
  for (int i = 0; atts[i]; i += 2)
    if (std::strcmp(atts[i], name) == 0) return atts[i + 1];
  return nullptr;
}

// gtest's messages start with "file:line" on a line of their own.
void split_location(const std::string& text, std::string& location, std::string& message) {
  static const std::regex loc(R"(^\S+:\d+$|^unknown file$)");
  auto nl = text.find('\n');
  std::string first = text.substr(0, nl);
  if (std::regex_match(first, loc)) {
    location = first;
    message = nl == std::string::npos ? "" : text.substr(nl + 1);
  } else {
    message = text;
  }
}

// A failure outranks a skip (a test that failed before GTEST_SKIP). A skip
// (gtest's) or an <error> (ours, write_junit) with result=unresolved is
// unresolved; another producer's <error> is a failure.
State case_state(const Parser& p) {
  const bool unresolved = p.current.has_property(kUnresolvedProperty.first, kUnresolvedProperty.second);
  if (p.failed) return State::fail;
  if (p.errored) return unresolved ? State::unresolved : State::fail;
  if (p.skipped) return unresolved ? State::unresolved : State::skip;
  return State::pass;
}

void on_start(void* data, const XML_Char* name, const XML_Char** atts) {
  auto* p = static_cast<Parser*>(data);
  std::string_view n = name;
  p->stack.emplace_back(name);
  if (n == "testsuite") {
    const char* s = attr(atts, "name");
    p->suite = s ? s : "";
  } else if (n == "testcase") {
    p->in_case = true;
    p->case_dropped = false;
    p->current = TestResult{};
    p->failed = p->errored = p->skipped = false;
    const char* cls = attr(atts, "classname");
    const char* nm = attr(atts, "name");
    if (!nm) {
      if (p->error.empty()) p->error = "<testcase> without a name";
      nm = "?";
    }
    p->current.suite = cls && *cls ? cls : p->suite;
    p->current.name = nm;
    if (const char* t = attr(atts, "time")) p->current.seconds = std::strtod(t, nullptr);
    const char* result = attr(atts, "result");
    const char* status = attr(atts, "status");
    if ((result && std::strcmp(result, "suppressed") == 0) || (status && std::strcmp(status, "notrun") == 0))
      p->case_dropped = true;
    // gtest marks a skipped case in the attribute too (the <skipped> child carries the reason).
    if (result && std::strcmp(result, "skipped") == 0) p->skipped = true;
  } else if (p->in_case && (n == "failure" || n == "error" || n == "skipped")) {
    (n == "failure" ? p->failed : n == "error" ? p->errored : p->skipped) = true;
    p->has_detail = true;
    p->detail.clear();
    const char* m = attr(atts, "message");
    p->detail_attr_message = m ? m : "";
  } else if (n == "property") {
    const char* k = attr(atts, "name");
    const char* v = attr(atts, "value");
    if (k && v) p->out.properties.emplace(k, v);
    if (k && v && p->in_case) p->current.properties.emplace_back(k, v);
    if (k && v && p->in_case && std::strcmp(k, "guest_start") == 0) p->current.guest_start.kind = v;
    if (k && v && p->in_case && std::strcmp(k, "guest_start_seconds") == 0)
      p->current.guest_start.seconds = std::strtod(v, nullptr);
  }
}

void on_end(void* data, const XML_Char* name) {
  auto* p = static_cast<Parser*>(data);
  std::string_view n = name;
  if (!p->stack.empty()) p->stack.pop_back();
  if (n == "testcase" && p->in_case) {
    p->in_case = false;
    p->current.state = case_state(*p);
    if (!p->case_dropped) p->out.tests.push_back(std::move(p->current));
  } else if (p->has_detail && (n == "failure" || n == "error" || n == "skipped")) {
    p->has_detail = false;
    // The element's text is the whole message; the attribute a summary.
    std::string text = p->detail.find_first_not_of(" \n\t") != std::string::npos ? p->detail : p->detail_attr_message;
    std::string location, message;
    split_location(text, location, message);
    if (p->current.location.empty()) p->current.location = location;
    if (!p->current.message.empty()) p->current.message += "\n";
    p->current.message += message;
  }
}

void on_text(void* data, const XML_Char* s, int len) {
  auto* p = static_cast<Parser*>(data);
  if (p->has_detail) p->detail.append(s, static_cast<size_t>(len));
}

}  // namespace

Result<JunitFile> read_junit(std::string_view xml, std::string_view source) {
  if (xml.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return Error{fmt::format("{}: empty file, not JUnit XML", source)};
  Parser p;
  XML_Parser parser = XML_ParserCreate("UTF-8");
  if (!parser) return Error{fmt::format("{}: cannot create an XML parser", source)};
  XML_SetUserData(parser, &p);
  XML_SetElementHandler(parser, on_start, on_end);
  XML_SetCharacterDataHandler(parser, on_text);
  bool ok = XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_OK;
  std::string err;
  if (!ok)
    err = fmt::format("{}: line {} column {}: {}", source, XML_GetCurrentLineNumber(parser),
                      XML_GetCurrentColumnNumber(parser), XML_ErrorString(XML_GetErrorCode(parser)));
  XML_ParserFree(parser);
  if (!ok) return Error{err};
  if (!p.error.empty()) return Error{fmt::format("{}: {}", source, p.error)};
  return std::move(p.out);
}

std::string xml_escape(std::string_view text) {
  // Console excerpts carry whatever bytes the guest printed; an XML reader
  // refuses a document with ill-formed UTF-8 anywhere in it.
  std::string s = base::valid_utf8(text);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // XML 1.0 allows no other control characters, not even as references.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string write_junit(const KernelRun& run) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const TestResult*>> by_suite;
  for (const auto& t : run.tests) {
    if (!by_suite.count(t.suite)) order.push_back(t.suite);
    by_suite[t.suite].push_back(&t);
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  std::string when;
  if (!run.timestamp.empty()) when += fmt::format(" timestamp=\"{}\"", xml_escape(run.timestamp));
  // JUnit's errors: neither a pass nor a failure, our unresolved cases.
  const Counts all = run.counts();
  out += fmt::format(
      "<testsuites name=\"tracebed {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\"{}>\n",
      xml_escape(run.kernel), run.tests.size(), all.fail, all.unresolved, all.skip, run.wall_seconds, when);
  if (!run.hostname.empty()) when += fmt::format(" hostname=\"{}\"", xml_escape(run.hostname));
  for (const auto& suite : order) {
    const auto& list = by_suite[suite];
    Counts counts;
    double time = 0;
    for (const auto* t : list) {
      counts.add(t->state);
      time += t->seconds;
    }
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\"{}>\n",
        xml_escape(suite), list.size(), counts.fail, counts.unresolved, counts.skip, time, when);
    out += "    <properties>\n";
    out += fmt::format("      <property name=\"kernel\" value=\"{}\"/>\n", xml_escape(run.kernel));
    if (!run.release.empty())
      out += fmt::format("      <property name=\"kernel_release\" value=\"{}\"/>\n", xml_escape(run.release));
    if (!run.accelerator.empty())
      out += fmt::format("      <property name=\"accelerator\" value=\"{}\"/>\n", xml_escape(run.accelerator));
    out += "    </properties>\n";
    for (const auto* t : list) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(suite),
                         xml_escape(t->name), t->seconds);
      std::string text = t->location.empty() ? t->message : t->location + "\n" + t->message;
      if (!t->console.empty()) text += "\n--- console ---\n" + t->console;
      if (t->state == State::pass && t->properties.empty()) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      // The property read_junit tells an unresolved <error> by, also on a
      // case made here rather than read from a suite.
      auto properties = t->properties;
      if (t->state == State::unresolved && !t->has_property(kUnresolvedProperty.first, kUnresolvedProperty.second))
        properties.emplace_back(kUnresolvedProperty);
      if (!properties.empty()) {
        out += "      <properties>\n";
        for (const auto& [k, v] : properties)
          out += fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(v));
        out += "      </properties>\n";
      }
      if (t->state == State::pass) {
        out += "    </testcase>\n";
        continue;
      }
      const char* tag = t->state == State::fail ? "failure" : t->state == State::unresolved ? "error" : "skipped";
      std::string summary = t->state == State::unresolved ? "unresolved: " + t->summary() : t->summary();
      out += fmt::format("      <{} message=\"{}\">{}</{}>\n", tag, xml_escape(summary), xml_escape(text), tag);
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace tracebed::matrix
