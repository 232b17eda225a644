// JUnit XML in and out. read_junit() takes what GoogleTest writes with
// --gtest_output=xml (and other JUnit producers): <testsuite>/<testcase>
// with <failure>, <error> or <skipped>, and <property> elements. Cases gtest
// lists but did not run (result="suppressed", status="notrun": excluded by
// the filter) are left out: they are not part of the run. A skipped case
// with the property result=unresolved is State::unresolved.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/matrix/results.h"

namespace tracebed::matrix {

struct JunitFile {
  std::vector<TestResult> tests;
  // Properties of the cases and suites, first value wins (kernel_release,
  // accelerator, tracebed_kernel as framework/testing stamps them).
  std::map<std::string, std::string> properties;
};

// `source` names the input in errors ("junit/x.xml: line 3: ...").
Result<JunitFile> read_junit(std::string_view xml, std::string_view source);

// One <testsuites> for a kernel, a <testsuite> per gtest suite, the kernel,
// release and accelerator as suite properties. An unresolved case is an
// <error message="unresolved: ..."> (JUnit's neither-pass-nor-failure),
// counted in `errors`.
std::string write_junit(const KernelRun& run);

std::string xml_escape(std::string_view s);

}  // namespace tracebed::matrix
