#include "framework/vm/guests/libvirt_domain.h"

#include <cstdlib>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::vm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

DomainSpec spec() {
  DomainSpec s;
  s.name = "tracebed-test-1";
  s.cpus = 2;
  s.memory_mb = 512;
  s.kernel = "/k/vmlinuz";
  s.initrd = "/k/image.cpio.gz";
  s.cmdline = "console=ttyS0 panic=-1";
  s.console_log = "/run/dir/console.log";
  s.channel = "org.tracebed.agent";
  return s;
}

TEST(DomainXml, TcgGuestHasTheQemuLaunchersCpuAndDirectKernelBoot) {
  std::string x = domain_xml(spec());
  EXPECT_THAT(x, HasSubstr("<domain type='qemu'>"));
  EXPECT_THAT(x, HasSubstr("<cpu mode='maximum' check='none'>"));
  EXPECT_THAT(x, HasSubstr("<feature policy='disable' name='cx16'/>"));
  EXPECT_THAT(x, HasSubstr("<kernel>/k/vmlinuz</kernel>"));
  EXPECT_THAT(x, HasSubstr("<initrd>/k/image.cpio.gz</initrd>"));
  EXPECT_THAT(x, HasSubstr("<cmdline>console=ttyS0 panic=-1</cmdline>"));
  EXPECT_THAT(x, HasSubstr("<vcpu>2</vcpu>"));
  EXPECT_THAT(x, HasSubstr("<memory unit='MiB'>512</memory>"));
  EXPECT_THAT(x, HasSubstr("<source path='/run/dir/console.log'/>"));
  EXPECT_THAT(x, HasSubstr("<target type='virtio' name='org.tracebed.agent'/>"));
  EXPECT_THAT(x, HasSubstr("<panic model='isa'/>"));
  EXPECT_THAT(x, HasSubstr("<on_crash>destroy</on_crash>"));
  EXPECT_THAT(x, HasSubstr("<on_reboot>destroy</on_reboot>"));
  EXPECT_THAT(x, Not(HasSubstr("<emulator>")));
}

TEST(DomainXml, KvmGuestPassesTheHostCpuThrough) {
  DomainSpec s = spec();
  s.kvm = true;
  s.emulator = "/opt/qemu";
  std::string x = domain_xml(s);
  EXPECT_THAT(x, HasSubstr("<domain type='kvm'>"));
  EXPECT_THAT(x, HasSubstr("<cpu mode='host-passthrough'/>"));
  EXPECT_THAT(x, Not(HasSubstr("cx16")));
  EXPECT_THAT(x, HasSubstr("<emulator>/opt/qemu</emulator>"));
}

// A restored domain differs from the saved one only by -incoming defer (and
// its name and console): QEMU loads a stream only into the same devices.
TEST(DomainXml, IncomingDomainAddsOnlyIncomingDefer) {
  DomainSpec s = spec();
  s.incoming = true;
  std::string x = domain_xml(s);
  EXPECT_THAT(x, HasSubstr("<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>"));
  EXPECT_THAT(x, HasSubstr("  <qemu:commandline>\n    <qemu:arg value='-incoming'/>\n"
                           "    <qemu:arg value='defer'/>\n  </qemu:commandline>\n</domain>\n"));
  std::string plain = domain_xml(spec());
  std::string devices = plain.substr(plain.find("<name>"), plain.find("</devices>") - plain.find("<name>"));
  EXPECT_THAT(x, HasSubstr(devices));
  EXPECT_THAT(plain, Not(HasSubstr("qemu:")));
}

TEST(DomainXml, MarkupInPathsAndCommandLineIsEscaped) {
  DomainSpec s = spec();
  s.cmdline = "a=<b> & c='d'";
  s.console_log = "/tmp/x'y/console.log";
  std::string x = domain_xml(s);
  EXPECT_THAT(x, HasSubstr("<cmdline>a=&lt;b&gt; &amp; c=&apos;d&apos;</cmdline>"));
  EXPECT_THAT(x, HasSubstr("<source path='/tmp/x&apos;y/console.log'/>"));
}

TEST(LibvirtUri, LocalWhenNoHostIsNamed) {
  EXPECT_TRUE(libvirt_uri_is_local(""));
  EXPECT_TRUE(libvirt_uri_is_local("qemu:///system"));
  EXPECT_TRUE(libvirt_uri_is_local("qemu+unix:///system?socket=/tmp/s/libvirt-sock"));
  EXPECT_FALSE(libvirt_uri_is_local("qemu+ssh://root@lab-1/system"));
  EXPECT_FALSE(libvirt_uri_is_local("qemu+tcp://10.0.0.2:16509/system"));
}

TEST(LibvirtUri, ExplicitUriWinsOverTheEnvironment) {
  setenv("TRACEBED_LIBVIRT_URI", "qemu:///session", 1);
  EXPECT_EQ(libvirt_uri("qemu:///system"), "qemu:///system");
  EXPECT_EQ(libvirt_uri(""), "qemu:///session");
  unsetenv("TRACEBED_LIBVIRT_URI");
  EXPECT_EQ(libvirt_uri(""), "");
}

TEST(LibvirtDomain, UnreachableDaemonIsAnErrorSayingWhatToDo) {
  auto d = LibvirtDomain::create("qemu+unix:///system?socket=/nonexistent/libvirt-sock", DomainSpec{});
  ASSERT_FALSE(d);
  EXPECT_THAT(d.error().message, HasSubstr("/nonexistent/libvirt-sock"));
  EXPECT_THAT(d.error().message, ::testing::AnyOf(HasSubstr("start libvirtd"), HasSubstr("built without libvirt")));
}

}  // namespace
}  // namespace tracebed::vm
