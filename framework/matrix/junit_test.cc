#include "framework/matrix/junit.h"

#include <expat.h>

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {
namespace {

using ::testing::HasSubstr;

std::string testdata(const char* name) {
  auto t = base::read_file(std::string(TRACEBED_SOURCE_DIR) + "/framework/matrix/testdata/" + name);
  EXPECT_TRUE(t.ok()) << t.error().message;
  return t ? *t : "";
}

TEST(ReadJunit, GtestXmlStatesMessagesAndProperties) {
  auto f = read_junit(testdata("basics_gtest.xml"), "basics.xml");
  ASSERT_TRUE(f.ok()) << f.error().message;
  // The suppressed case was excluded by the filter: not part of the run.
  ASSERT_EQ(f->tests.size(), 3u);
  EXPECT_EQ(f->tests[0].full_name(), "Basics.TracefsMounted");
  EXPECT_EQ(f->tests[0].state, State::pass);
  EXPECT_DOUBLE_EQ(f->tests[0].seconds, 20.5);

  EXPECT_EQ(f->tests[1].state, State::skip);
  EXPECT_EQ(f->tests[1].message, "needs timerlat: available_tracers has no timerlat");
  EXPECT_EQ(f->tests[1].location, "suites/basics/basics_test.cc:88");

  EXPECT_EQ(f->tests[2].state, State::fail);
  EXPECT_EQ(f->tests[2].summary(), "Value of: contains(trace, \"hello\")");
  EXPECT_THAT(f->tests[2].message, HasSubstr("trace was <empty>"));

  EXPECT_EQ(f->properties.at("kernel_release"), "6.12.107+deb13-cloud-amd64");
  EXPECT_EQ(f->properties.at("accelerator"), "tcg");
}

TEST(ReadJunit, GuestStartIsTheCaseThatWaitedForIt) {
  // As gtest writes RecordProperty from framework/testing's listener.
  auto f = read_junit(R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" name="AllTests">
  <testsuite name="Hist" tests="2">
    <testcase name="First" status="run" result="completed" time="1.2" classname="Hist">
      <properties>
        <property name="guest_start" value="restore"/>
        <property name="guest_start_seconds" value="0.734"/>
      </properties>
    </testcase>
    <testcase name="Second" status="run" result="completed" time="0.5" classname="Hist"/>
  </testsuite>
</testsuites>)", "hist.xml");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->tests.size(), 2u);
  EXPECT_EQ(f->tests[0].guest_start.kind, "restore");
  EXPECT_DOUBLE_EQ(f->tests[0].guest_start.seconds, 0.734);
  EXPECT_EQ(f->tests[1].guest_start.kind, "");
  EXPECT_EQ(f->tests[1].guest_start.seconds, 0);
}

TEST(ReadJunit, TracebedTestOutputWithSkipAttributeOnly) {
  auto f = read_junit(testdata("tracebed_test_junit.xml"), "t.xml");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->tests.size(), 2u);
  EXPECT_EQ(f->tests[1].state, State::skip);
  EXPECT_EQ(f->tests[1].message, "needs fprobe events: no f[:[GRP/][EVENT]] in README");
  EXPECT_EQ(f->properties.at("kernel"), "debian-5.10");
}

TEST(ReadJunit, TruncatedFileNamesFileAndLine) {
  auto f = read_junit(testdata("truncated.xml"), "junit/smoke.xml");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message, HasSubstr("junit/smoke.xml: line 5"));
  EXPECT_THAT(f.error().message, HasSubstr("no element found"));
}

TEST(ReadJunit, EmptyAndNonXmlInputs) {
  auto empty = read_junit("  \n", "a.xml");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "a.xml: empty file, not JUnit XML");
  auto garbage = read_junit("{\"testsuites\": []}", "b.xml");
  ASSERT_FALSE(garbage.ok());
  EXPECT_THAT(garbage.error().message, HasSubstr("b.xml: line 1"));
  auto nameless = read_junit("<testsuite><testcase/></testsuite>", "c.xml");
  ASSERT_FALSE(nameless.ok());
  EXPECT_EQ(nameless.error().message, "c.xml: <testcase> without a name");
}

TEST(ReadJunit, FailureAfterSkipIsAFailure) {
  auto f = read_junit(
      "<testsuite name='S'><testcase name='T'><skipped message='s'/><failure message='f'>boom</failure>"
      "</testcase></testsuite>",
      "x.xml");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->tests.size(), 1u);
  EXPECT_EQ(f->tests[0].state, State::fail);
  EXPECT_EQ(f->tests[0].suite, "S");
}

// As gtest writes an ftracetest UNRESOLVED case (suites/kselftest): a skip,
// the property after it. Only that property makes a skip or an <error>
// unresolved.
TEST(ReadJunit, SkippedCaseWithResultUnresolvedIsUnresolved) {
  auto f = read_junit(R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3" name="AllTests">
  <testsuite name="Ftracetest" tests="3">
    <testcase name="ftrace/func-filter-pid.tc" status="run" result="skipped" time="3.1" classname="Ftracetest">
      <skipped message="suites/kselftest/kselftest_test.cc:226&#x0A;ftracetest UNRESOLVED on the top level: no poll"><![CDATA[suites/kselftest/kselftest_test.cc:226
ftracetest UNRESOLVED on the top level: no poll]]></skipped>
      <properties>
        <property name="ftracetest" value="UNRESOLVED"/>
        <property name="result" value="unresolved"/>
      </properties>
    </testcase>
    <testcase name="kprobe/profile.tc" status="run" result="skipped" time="0.4" classname="Ftracetest">
      <skipped message="ftracetest UNSUPPORTED on the top level: no kprobes"/>
      <properties>
        <property name="ftracetest" value="UNSUPPORTED"/>
      </properties>
    </testcase>
    <testcase name="other/producer.tc" classname="Ftracetest">
      <error message="exception">thrown</error>
    </testcase>
  </testsuite>
</testsuites>)", "kselftest.xml");
  ASSERT_TRUE(f.ok()) << f.error().message;
  ASSERT_EQ(f->tests.size(), 3u);
  EXPECT_EQ(f->tests[0].state, State::unresolved);
  EXPECT_EQ(f->tests[0].message, "ftracetest UNRESOLVED on the top level: no poll");
  EXPECT_EQ(f->tests[0].location, "suites/kselftest/kselftest_test.cc:226");
  EXPECT_EQ(f->tests[1].state, State::skip);
  EXPECT_EQ(f->tests[2].state, State::fail);
}

TEST(WriteJunit, RoundTripsStatesMessagesAndRelease) {
  KernelRun run;
  run.kernel = "debian-6.1";
  run.release = "6.1.0-56-cloud-amd64";
  run.accelerator = "tcg";
  run.tests = {{"Smoke", "Boots", State::pass, "", "", "", 1.5, {}, {}},
               {"Smoke", "Timerlat", State::skip, "needs timerlat: <none> & \"quotes\"", "a.cc:3", "", 0, {}, {}},
               {"tracebed_suite_hist", "(suite)", State::fail, "exited with status 134", "", "Kernel panic\x01 - x", 0, {}, {}}};
  std::string xml = write_junit(run);
  auto back = read_junit(xml, "written.xml");
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << xml;
  ASSERT_EQ(back->tests.size(), 3u);
  EXPECT_EQ(back->tests[1].state, State::skip);
  EXPECT_EQ(back->tests[1].location, "a.cc:3");
  EXPECT_EQ(back->tests[1].message, "needs timerlat: <none> & \"quotes\"");
  EXPECT_EQ(back->tests[2].state, State::fail);
  EXPECT_THAT(back->tests[2].message, HasSubstr("Kernel panic  - x"));
  EXPECT_EQ(back->properties.at("kernel_release"), "6.1.0-56-cloud-amd64");
  EXPECT_EQ(back->properties.at("kernel"), "debian-6.1");
}

// The attributes CI tools read (Jenkins, GitLab: the JUnit XSD's time,
// timestamp, hostname, errors), checked with expat on what we write.
struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
};

std::vector<Element> elements(const std::string& xml) {
  std::vector<Element> out;
  XML_Parser parser = XML_ParserCreate("UTF-8");
  XML_SetUserData(parser, &out);
  XML_SetStartElementHandler(parser, [](void* data, const XML_Char* name, const XML_Char** atts) {
    Element e{name, {}};
    for (int i = 0; atts[i]; i += 2) e.attrs[atts[i]] = atts[i + 1];
    static_cast<std::vector<Element>*>(data)->push_back(std::move(e));
  });
  EXPECT_EQ(XML_Parse(parser, xml.data(), static_cast<int>(xml.size()), 1), XML_STATUS_OK)
      << XML_ErrorString(XML_GetErrorCode(parser));
  XML_ParserFree(parser);
  return out;
}

// A console excerpt of arbitrary bytes (ill-formed UTF-8, control
// characters, markup) still makes a document expat reads, and the valid
// text around the bad bytes is kept.
TEST(WriteJunit, ArbitraryConsoleBytesStayWellFormedXml) {
  KernelRun run;
  run.kernel = "debian-6.12";
  std::string junk = "ok \xc3\xa9 <b>&\x01\x1b[0m \xff\xfe \xed\xa0\x80 \xc3";
  for (int b = 0; b < 256; ++b) junk += static_cast<char>(b);
  TestResult t{"Faults", "Panics", State::fail, junk, "", junk, 1.0, {}, {}};
  t.console = junk;
  run.tests = {t};
  std::string xml = write_junit(run);
  EXPECT_THAT(elements(xml), ::testing::Not(::testing::IsEmpty()));
  EXPECT_THAT(xml, HasSubstr("ok \xc3\xa9 &lt;b&gt;&amp;"));
}

TEST(WriteJunit, WallTimeTimestampHostAndCaseProperties) {
  KernelRun run;
  run.kernel = "debian-6.12";
  run.wall_seconds = 67.25;
  run.stamp_start();
  TestResult t{"Perf", "Record", State::pass, "", "", "", 2.5, {}, {}};
  t.properties = {{"tool", "perf"}, {"perf_package", "linux-perf 6.12.117-1"}};
  run.tests = {t};
  auto all = elements(write_junit(run));
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[0].name, "testsuites");
  EXPECT_EQ(all[0].attrs["time"], "67.250");
  EXPECT_EQ(all[0].attrs["errors"], "0");
  EXPECT_THAT(all[0].attrs["timestamp"], ::testing::MatchesRegex("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z"));
  EXPECT_EQ(all[1].name, "testsuite");
  EXPECT_FALSE(all[1].attrs["hostname"].empty());
  EXPECT_EQ(all[1].attrs["timestamp"], all[0].attrs["timestamp"]);
  std::map<std::string, std::string> props;
  bool in_case = false;
  for (const auto& e : all) {
    in_case |= e.name == "testcase";
    if (in_case && e.name == "property") props[e.attrs.at("name")] = e.attrs.at("value");
  }
  EXPECT_EQ(props["tool"], "perf");
  EXPECT_EQ(props["perf_package"], "linux-perf 6.12.117-1");
  // And they survive our own reading (tracebed matrix re-reads suites' XML).
  auto back = read_junit(write_junit(run), "w.xml");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->tests[0].properties, t.properties);
}

// Neither a pass nor a failure: JUnit's <error>, counted in `errors` and in
// nothing else, and read back as unresolved, also for a case that came
// without the property (made here, or read from summary.json).
TEST(WriteJunit, UnresolvedIsAnErrorCountedInErrors) {
  KernelRun run;
  run.kernel = "debian-6.12";
  run.tests = {{"Ftracetest", "ftrace/func-filter-pid.tc", State::unresolved,
                "ftracetest UNRESOLVED on an instance: no poll", "k.cc:226", "", 3.1, {}, {}},
               {"Ftracetest", "kprobe/profile.tc", State::skip, "ftracetest UNSUPPORTED", "", "", 0, {}, {}}};
  const std::string xml = write_junit(run);
  EXPECT_THAT(xml, HasSubstr("<error message=\"unresolved: ftracetest UNRESOLVED on an instance: no poll\">"));
  auto all = elements(xml);
  ASSERT_GE(all.size(), 2u);
  for (size_t i : {0u, 1u}) {
    SCOPED_TRACE(all[i].name);
    EXPECT_EQ(all[i].attrs["errors"], "1");
    EXPECT_EQ(all[i].attrs["failures"], "0");
    EXPECT_EQ(all[i].attrs["skipped"], "1");
  }
  auto back = read_junit(xml, "w.xml");
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << xml;
  ASSERT_EQ(back->tests.size(), 2u);
  EXPECT_EQ(back->tests[0].state, State::unresolved);
  EXPECT_EQ(back->tests[0].message, "ftracetest UNRESOLVED on an instance: no poll");
  EXPECT_EQ(back->tests[0].location, "k.cc:226");
  EXPECT_EQ(back->tests[1].state, State::skip);
  // Written again, the property it now carries is not doubled.
  KernelRun again = run;
  again.tests = back->tests;
  EXPECT_EQ(write_junit(again), xml);
}

}  // namespace
}  // namespace tracebed::matrix
