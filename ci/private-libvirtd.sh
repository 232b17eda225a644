#!/usr/bin/env bash
# A private libvirtd + virtlogd for tests, never touching a system daemon.
#
#   ci/private-libvirtd.sh run [--skip-status N] -- CMD ARGS...   start, run
#       CMD with $TRACEBED_LIBVIRT_URI set, stop; exits with CMD's status, or
#       N when the daemons cannot run here (not root, libvirt not installed)
#   ci/private-libvirtd.sh start DIR            start in DIR (created), print the URI
#   ci/private-libvirtd.sh stop DIR             destroy its domains, stop it, remove DIR
#
# Both daemons run as root in their own mount namespace, where libvirt's
# fixed state paths (/run/libvirt, /var/lib/libvirt, /var/log/libvirt,
# /var/cache/libvirt, /etc/libvirt) are private directories under DIR. The
# only socket is DIR/sock/libvirt-sock, reached as
#   qemu+unix:///system?socket=DIR/sock/libvirt-sock
# Needs root (CAP_SYS_ADMIN for the namespace) and the packages in
# ci/packages.d/libvirt.txt. Stopping leaves no domain, daemon or socket.
set -euo pipefail

die() { echo "private-libvirtd: $*" >&2; exit 1; }

uri_of() { echo "qemu+unix:///system?socket=$1/sock/libvirt-sock"; }

start() {
  local dir=$1
  [ "$(id -u)" -eq 0 ] || die "must run as root (libvirt's system driver, a mount namespace); try sudo"
  command -v libvirtd >/dev/null || die "libvirtd not found: install the packages in ci/packages.d/libvirt.txt"
  command -v virtlogd >/dev/null || die "virtlogd not found: install the packages in ci/packages.d/libvirt.txt"
  # sockaddr_un holds 108 bytes.
  ((${#dir} < 80)) || die "directory path too long for a unix socket: $dir"
  mkdir -p "$dir"/{etc,run,lib,log,cache,sock}
  dir=$(cd "$dir" && pwd)
  cat >"$dir/etc/libvirtd.conf" <<EOF
unix_sock_dir = "$dir/sock"
unix_sock_rw_perms = "0700"
unix_sock_ro_perms = "0700"
unix_sock_admin_perms = "0700"
auth_unix_rw = "none"
auth_unix_ro = "none"
log_outputs = "3:file:$dir/log/libvirtd.log"
EOF
  cat >"$dir/etc/virtlogd.conf" <<EOF
log_outputs = "3:file:$dir/log/virtlogd.log"
EOF
  # Guests are started as root from files in the caller's cache, so no
  # relabelling or ownership changes; no cgroups or per-guest namespaces,
  # which a container may not allow. stdio_handler "file": QEMU writes the
  # serial console file itself, as the QEMU launcher's guests do; through
  # virtlogd ("logd") lines arrive late (a fault printed just before a call
  # returns is missed by the check after it) and the file rotates at 2 MiB.
  cat >"$dir/etc/qemu.conf" <<EOF
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
namespaces = [ ]
cgroup_controllers = [ ]
stdio_handler = "file"
EOF
  # The namespace lives as long as the daemons in it.
  unshare --mount --propagation private -- /bin/sh -eu -c '
    d=$1
    mount --bind "$d/etc" /etc/libvirt 2>/dev/null || { mkdir -p /etc/libvirt && mount --bind "$d/etc" /etc/libvirt; }
    for p in run:/run/libvirt lib:/var/lib/libvirt log:/var/log/libvirt cache:/var/cache/libvirt; do
      mkdir -p "${p#*:}"
      mount --bind "$d/${p%%:*}" "${p#*:}"
    done
    virtlogd -d -f "$d/etc/virtlogd.conf" -p "$d/virtlogd.pid"
    libvirtd -d -f "$d/etc/libvirtd.conf" -p "$d/libvirtd.pid"
  ' sh "$dir" || { tail -n 20 "$dir"/log/*.log >&2 2>/dev/null; stop "$dir"; die "starting the daemons failed"; }
  local sock=$dir/sock/libvirt-sock
  for _ in $(seq 100); do
    [ -S "$sock" ] && virsh -q -c "$(uri_of "$dir")" version >/dev/null 2>&1 && { uri_of "$dir"; return 0; }
    sleep 0.1
  done
  echo "private-libvirtd: libvirtd.log ends with:" >&2
  tail -n 20 "$dir/log/libvirtd.log" >&2 2>/dev/null || true
  stop "$dir" >/dev/null 2>&1 || true
  die "libvirtd did not answer on $sock within 10 s"
}

# Kills the daemon whose pid file is $1 and waits for it.
stop_pid() {
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  local dir=$1
  [ -d "$dir" ] || return 0
  local uri
  uri=$(uri_of "$dir")
  if [ -S "$dir/sock/libvirt-sock" ]; then
    for dom in $(virsh -q -c "$uri" list --name 2>/dev/null); do
      virsh -q -c "$uri" destroy "$dom" >/dev/null 2>&1 || true
    done
  fi
  stop_pid "$dir/libvirtd.pid"
  stop_pid "$dir/virtlogd.pid"
  rm -rf "$dir"
}

case "${1:-}" in
  start) [ $# -eq 2 ] || die "usage: $0 start DIR"; start "$2" ;;
  stop) [ $# -eq 2 ] || die "usage: $0 stop DIR"; stop "$2" ;;
  run)
    shift
    skip=1
    if [ "${1:-}" = "--skip-status" ]; then skip=$2; shift 2; fi
    [ "${1:-}" = "--" ] && shift
    [ $# -ge 1 ] || die "usage: $0 run [--skip-status N] -- CMD ARGS..."
    if [ "$(id -u)" -ne 0 ] || ! command -v libvirtd >/dev/null || ! command -v virtlogd >/dev/null; then
      echo "private-libvirtd: skipped: needs root and libvirtd + virtlogd (ci/packages.d/libvirt.txt)" >&2
      exit "$skip"
    fi
    dir=$(mktemp -d /tmp/tracebed-libvirt-XXXXXX)
    trap 'stop "$dir"' EXIT
    trap 'exit 130' INT TERM
    TRACEBED_LIBVIRT_URI=$(start "$dir")
    export TRACEBED_LIBVIRT_URI
    status=0
    "$@" || status=$?
    exit "$status"
    ;;
  *) die "usage: $0 run -- CMD... | start DIR | stop DIR" ;;
esac
