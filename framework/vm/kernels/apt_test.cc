#include "framework/vm/kernels/apt.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::vm {
namespace {

using ::testing::ElementsAre;
using ::testing::FieldsAre;
using ::testing::HasSubstr;

// `apt-cache madison linux-perf linux-perf-5.10` with the catalogue's suites (2026-11).
constexpr std::string_view kMadison =
    " linux-perf | 7.3~rc7-1~exp1 | http://deb.debian.org/debian experimental/main amd64 Packages\n"
    " linux-perf |   7.2.13-1 | http://deb.debian.org/debian sid/main amd64 Packages\n"
    " linux-perf | 6.12.117-1 | http://deb.debian.org/debian trixie/main amd64 Packages\n"
    " linux-perf |  6.1.192-2 | http://deb.debian.org/debian-security bookworm-security/main amd64 Packages\n"
    " linux-perf |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n"
    " linux-perf | 5.10.223-1 | http://deb.debian.org/debian bullseye/main amd64 Packages\n"
    "      linux | 6.12.117-1 | http://deb.debian.org/debian trixie/main Sources\n"
    "linux-perf-5.10 | 5.10.223-1 | http://deb.debian.org/debian bullseye/main amd64 Packages\n"
    "N: Unable to locate package linux-perf-9.9\n";

TEST(AptMadison, ReadsPackageVersionAndSuiteOfEveryBinaryRow) {
  EXPECT_THAT(parse_madison(kMadison),
              ElementsAre(FieldsAre("linux-perf", "7.3~rc7-1~exp1", "experimental"),
                          FieldsAre("linux-perf", "7.2.13-1", "sid"), FieldsAre("linux-perf", "6.12.117-1", "trixie"),
                          FieldsAre("linux-perf", "6.1.192-2", "bookworm-security"),
                          FieldsAre("linux-perf", "6.1.176-1", "bookworm"),
                          FieldsAre("linux-perf", "5.10.223-1", "bullseye"),
                          FieldsAre("linux-perf-5.10", "5.10.223-1", "bullseye")));
}

// Trimmed from `apt-cache show --no-all-versions linux-perf=6.12.117-1 libc6=2.41-12+deb13u5` (trixie),
// the Depends of bullseye's libc6 2.31-13+deb11u11 and its qualified
// form added to libc6's to cover Pre-Depends, alternatives and ":amd64".
constexpr std::string_view kShow =
    "Package: linux-perf\n"
    "Source: linux\n"
    "Version: 6.12.117-1\n"
    "Installed-Size: 21901\n"
    "Maintainer: Debian Kernel Team <debian-kernel@lists.debian.org>\n"
    "Architecture: amd64\n"
    "Depends: libbabeltrace1 (>= 1.5.4), libc6 (>= 2.38), libdebuginfod1t64 (>= 0.180), libpython3.13 (>= "
    "3.13.0~rc3), libunwind8, zlib1g (>= 1:1.2.3.4), perl:any, python3:any\n"
    "Description: Performance analysis tools for Linux\n"
    " This package contains the 'perf' performance analysis tools for Linux.\n"
    "Section: kernel\n"
    "SHA256: b0344bbc4a0cfffe045583770226426ca266cec02f3c70924f40dc161f93bec1\n"
    "\n"
    "Package: libc6\n"
    "Version: 2.41-12+deb13u5\n"
    "Architecture: amd64\n"
    "Pre-Depends: libgcc-s1 | libgcc1\n"
    "Depends: libcrypt1:amd64 (>= 1:4.4.10-10~)\n"
    "Section: libs\n"
    "SHA256: b59b0625cd1a791375d40dab23a4d5d3d0641e3d0a773501becdc3725b7f99cf\n"
    "\n";

TEST(AptShow, ReadsTheFieldsFetchingNeeds) {
  auto s = parse_stanzas(kShow);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->size(), 2u);
  const auto& perf = (*s)[0];
  EXPECT_EQ(perf.package, "linux-perf");
  EXPECT_EQ(perf.version, "6.12.117-1");
  EXPECT_EQ(perf.architecture, "amd64");
  EXPECT_EQ(perf.section, "kernel");
  EXPECT_EQ(perf.sha256, "b0344bbc4a0cfffe045583770226426ca266cec02f3c70924f40dc161f93bec1");
  // Interpreters (perl:any) are not libraries the binary loads.
  EXPECT_THAT(perf.depends,
              ElementsAre("libbabeltrace1", "libc6", "libdebuginfod1t64", "libpython3.13", "libunwind8", "zlib1g"));
  // Pre-Depends count, the first alternative, the architecture qualifier dropped.
  EXPECT_THAT((*s)[1].depends, ElementsAre("libgcc-s1", "libcrypt1"));
}

TEST(AptShow, AStanzaWithoutItsHashIsAnErrorNamingIt) {
  auto s = parse_stanzas("Package: libfoo1\nVersion: 1.0-1\nArchitecture: amd64\n\n");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("stanza 1 (libfoo1)"));
}

TEST(AptShow, MessagesBetweenStanzasAreNotStanzas) {
  auto s = parse_stanzas("N: Unable to locate package libnothing\nW: something\n\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->empty());
}

TEST(AptSuites, DependenciesComeFromTheSuiteOrTheOneItBuildsAgainst) {
  using Tiers = std::vector<std::vector<std::string>>;
  EXPECT_EQ(dependency_suites("trixie"), (Tiers{{"trixie"}}));
  EXPECT_EQ(dependency_suites("experimental"), (Tiers{{"sid"}, {"experimental"}}));
  EXPECT_EQ(dependency_suites("bookworm-security"), (Tiers{{"bookworm-security", "bookworm"}}));
}

}  // namespace
}  // namespace tracebed::vm
