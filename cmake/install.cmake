# `cmake --install` and `cpack -G DEB`: tracebed usable from a prefix
# (framework/base/install_layout.h says where each file is looked for).
#   bin/tracebed
#   lib/tracebed/      guest suites, tracebed-suites.txt, the guest agent,
#                      the probe target, the user_events producer
#   share/tracebed/    kernels.json with the kernel recipes, bootconfig fixtures
#   share/doc/tracebed README.md and docs/
include(GNUInstallDirs)
set(tracebed_libexec ${CMAKE_INSTALL_LIBDIR}/tracebed)
if(CMAKE_INSTALL_LIBDIR MATCHES "/")  # lib/x86_64-linux-gnu under a Debian prefix
  set(tracebed_libexec lib/tracebed)
endif()

install(TARGETS tracebed RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS tracebed-agent tracebed-probe-target tracebed-user-events-producer
        RUNTIME DESTINATION ${tracebed_libexec})

# The suites, and their list with names relative to itself.
get_property(tracebed_suite_targets GLOBAL PROPERTY TRACEBED_GUEST_SUITE_TARGETS)
if(tracebed_suite_targets)
  install(TARGETS ${tracebed_suite_targets} RUNTIME DESTINATION ${tracebed_libexec})
  list(JOIN tracebed_suite_targets "\n" tracebed_suite_names)
  file(WRITE ${PROJECT_BINARY_DIR}/install/tracebed-suites.txt "${tracebed_suite_names}\n")
  install(FILES ${PROJECT_BINARY_DIR}/install/tracebed-suites.txt DESTINATION ${tracebed_libexec})
endif()

install(FILES ${PROJECT_SOURCE_DIR}/vmimages/kernels.json ${PROJECT_SOURCE_DIR}/vmimages/suite-timings.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tracebed)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/vmimages/kernels/ DESTINATION ${CMAKE_INSTALL_DATADIR}/tracebed/kernels
        FILES_MATCHING PATTERN "*.json" PATTERN "*.fragment")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/fixtures/bootconfig DESTINATION ${CMAKE_INSTALL_DATADIR}/tracebed/fixtures)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")

# One .deb: shared libraries from dpkg-shlibdeps, and what tracebed runs.
set(CPACK_PACKAGE_NAME tracebed)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "tracebed developers <tracebed@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "test Linux kernel tracing (ftrace) in QEMU guests; decode trace.dat")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Debug info made the package 560 MB; stripped, the suites are a few MB each.
set(CPACK_STRIP_FILES ON)
# QEMU boots the guests from a static busybox; xz unpacks kernel modules;
# dpkg-deb unpacks kernels; trace-cmd is the tooling suite's host oracle.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qemu-system-x86, busybox-static, xz-utils, dpkg, trace-cmd")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libvirt-daemon-system, rtla")
include(CPack)
