// Built only with libvirt's headers (framework/vm/CMakeLists.txt).
#if TRACEBED_HAVE_LIBVIRT
#include "framework/vm/guests/libvirt_api.h"

#include <dlfcn.h>

#include <mutex>

#include <fmt/format.h>

namespace tracebed::vm::libvirt {

Status load() {
  static std::once_flag once;
  static Status loaded;
  std::call_once(once, [] {
    void* lib = dlopen("libvirt.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      loaded = Error{fmt::format("cannot load libvirt's client library ({}); install the libvirt0 package", dlerror())};
      return;
    }
#define TRACEBED_LIBVIRT_RESOLVE(fn)                                                                  \
  fn = reinterpret_cast<decltype(fn)>(dlsym(lib, #fn));                                               \
  if (!fn) {                                                                                          \
    loaded = Error{fmt::format("the installed libvirt.so.0 has no {}: it is older than this build's headers", #fn)}; \
    return;                                                                                           \
  }
    TRACEBED_LIBVIRT_FUNCTIONS(TRACEBED_LIBVIRT_RESOLVE)
  });
  return loaded;
}

Status load_qemu() {
  static std::once_flag once;
  static Status loaded;
  std::call_once(once, [] {
    void* lib = dlopen("libvirt-qemu.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      loaded = Error{fmt::format("cannot load libvirt's QEMU library ({}); install the libvirt0 package", dlerror())};
      return;
    }
    TRACEBED_LIBVIRT_QEMU_FUNCTIONS(TRACEBED_LIBVIRT_RESOLVE)
  });
  return loaded;
}

#undef TRACEBED_LIBVIRT_RESOLVE

}  // namespace tracebed::vm::libvirt
#endif  // TRACEBED_HAVE_LIBVIRT
