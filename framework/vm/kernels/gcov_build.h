// Kernel builds with gcov profiling (`--gcov`, `--gcov-paths`).
//
//   auto vars = gcov_make_variables(tree, {"kernel/trace"});
//   km.set_make_variables(*vars);   // GCOV_PROFILE_trace.o=y ...
//   ... make bzImage ...
//   stage_gcov_files(tree, objtree, {"kernel/trace"}, entry / "gcov");
//
// CONFIG_GCOV_KERNEL profiles nothing by itself: a directory asks with
// `GCOV_PROFILE := y` in its Makefile, everything with
// CONFIG_GCOV_PROFILE_ALL (Documentation/dev-tools/gcov.rst). Writing a
// Makefile would write the user's tree, and profiling everything slows the
// whole guest under TCG, so the paths' objects are named one by one on
// make's command line: scripts/Makefile.lib reads GCOV_PROFILE_<stem>.o,
// where the stem is the object's name inside its directory. An object of
// the same name elsewhere (arch/x86/kernel/ftrace.o beside
// kernel/trace/ftrace.o) is profiled too, and the report leaves it out.
//
// The counts a guest writes (/sys/kernel/debug/gcov/<objtree>/...gcda) are
// read back with the build's .gcno files, and the report shows the sources:
// both are kept in the kernel's entry (<entry>/gcov), since a catalogue
// build's work tree goes once the kernel is cached and a user's tree may
// change after it was built.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

// The options a gcov build adds to the kernel's fragment.
inline constexpr std::string_view kGcovFragment =
    "CONFIG_DEBUG_FS=y\n"
    "CONFIG_GCOV_KERNEL=y\n"
    "# CONFIG_GCOV_PROFILE_ALL is not set\n";

inline const std::vector<std::string> kDefaultGcovPaths = {"kernel/trace"};

// "kernel/trace,kernel/bpf" -> the paths, each relative to the tree's top,
// without "..", a leading "/" or a trailing one; an Error names a bad one.
Result<std::vector<std::string>> parse_gcov_paths(std::string_view list);

// GCOV_PROFILE_<stem>.o=y for every .c file under each path of `src`,
// sorted and without repeats; an Error names a path that is no directory
// of the tree or holds no C file.
Result<std::vector<std::string>> gcov_make_variables(const std::filesystem::path& src,
                                                     const std::vector<std::string>& paths);

// What a gcov build keeps beside its bzImage.
struct GcovFiles {
  std::filesystem::path root;          // <entry>/gcov
  std::string objtree;                 // the build's object tree, as the guest's debugfs names it
  std::string srctree;                 // its source tree (objtree itself for an in-tree build)
  std::vector<std::string> paths;      // the profiled paths
  std::filesystem::path objects() const { return root / "obj"; }  // <path>/**.gcno
  std::filesystem::path sources() const { return root / "src"; }  // <path>/**.{c,h}
};

// Copies every .gcno under the paths of `objtree` and every .c and .h under
// the paths of `src` into `dest` (obj/, src/), and writes what
// read_gcov_files reads back.
Status stage_gcov_files(const std::filesystem::path& src, const std::filesystem::path& objtree,
                        const std::vector<std::string>& paths, const std::filesystem::path& dest);

// The gcov files of a kernel directory, or an Error saying it was built
// without --gcov.
Result<GcovFiles> read_gcov_files(const std::filesystem::path& kernel_dir);

}  // namespace tracebed::vm
