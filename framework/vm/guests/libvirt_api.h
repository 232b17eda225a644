// libvirt's client library, loaded when the libvirt launcher is first used:
// linked in, its ~50 shared libraries would be loaded and relocated by every
// tracebed command, `tracebed report` included (most of a small report's
// start-up). The headers still come from libvirt-dev at build time, so each
// pointer has exactly libvirt's own type.
#pragma once

#include <libvirt/libvirt-qemu.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "framework/base/result.h"

namespace tracebed::vm::libvirt {

#define TRACEBED_LIBVIRT_FUNCTIONS(X)                                                                      \
  X(virConnectClose) X(virConnectDomainEventDeregisterAny) X(virConnectDomainEventRegisterAny)             \
  X(virConnectGetLibVersion) X(virConnectGetVersion)                                                       \
  X(virConnectOpen) X(virConnectRegisterCloseCallback) X(virConnectSetKeepAlive)                           \
  X(virConnectUnregisterCloseCallback) X(virDomainCreateXML) X(virDomainDestroy) X(virDomainFree)          \
  X(virDomainIsActive) X(virDomainOpenChannel) X(virDomainResume) X(virEventRegisterDefaultImpl)           \
  X(virEventRunDefaultImpl)                                                                               \
  X(virGetLastErrorMessage) X(virSetErrorFunc) X(virStreamAbort) X(virStreamEventAddCallback)              \
  X(virStreamEventRemoveCallback) X(virStreamEventUpdateCallback) X(virStreamFree) X(virStreamNew)         \
  X(virStreamRecv) X(virStreamSend)

// libvirt-qemu.so.0: QMP commands of our own, with file descriptors (8.2+),
// which is how a snapshot is saved and restored (LibvirtDomain::save_state).
#define TRACEBED_LIBVIRT_QEMU_FUNCTIONS(X) X(virDomainQemuMonitorCommand) X(virDomainQemuMonitorCommandWithFiles)

// Pointers named as the functions: code in this namespace calls them as it
// would call libvirt (a variable found by name lookup also turns off
// argument-dependent lookup, so the library's own symbols are never used).
#define TRACEBED_LIBVIRT_POINTER(name) inline decltype(&::name) name = nullptr;
TRACEBED_LIBVIRT_FUNCTIONS(TRACEBED_LIBVIRT_POINTER)
TRACEBED_LIBVIRT_QEMU_FUNCTIONS(TRACEBED_LIBVIRT_POINTER)
#undef TRACEBED_LIBVIRT_POINTER

// Loads libvirt.so.0 and every function above, once; an error says which
// package is missing or which function the installed library lacks.
Status load();
// Loads libvirt-qemu.so.0 (after load()), once; without it, no snapshots.
Status load_qemu();

}  // namespace tracebed::vm::libvirt
