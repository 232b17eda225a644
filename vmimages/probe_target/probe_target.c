/* tracebed-probe-target: a small static program every guest image carries
 * (/opt/tracebed/bin/tracebed-probe-target) so that probe suites can make
 * assertions exact: functions with known arguments and return values to
 * uprobe, file opens with known names, sleeps and wake-ups on demand.
 *
 * It prints its pid first ("pid 123"), then what it did, one "key value..."
 * line per action, so a test can compare the decoded events with what
 * really happened:
 *
 *   tracebed-probe-target pid                        (the pid line only)
 *   tracebed-probe-target add A B [COUNT]            add A B -> SUM   (per call)
 *   tracebed-probe-target mix I8 U16 S32 U64 STR...  mix ... STR -> RET (per STR)
 *   tracebed-probe-target open PATH...               open PATH FD_OR_-ERRNO
 *   tracebed-probe-target sys-open PATH...           sys-open PATH FD_OR_-ERRNO  (open(2) itself)
 *   tracebed-probe-target lseek FILE (OFF WHENCE)... lseek OFF WHENCE RET_OR_-ERRNO
 *   tracebed-probe-target readlink PATH...           readlink PATH LEN_OR_-ERRNO
 *   tracebed-probe-target sleep MS [COUNT]           sleep MS
 *   tracebed-probe-target wake COUNT                 wake WAKER_PID SLEEPER_PID
 *   tracebed-probe-target getpid COUNT [MS]          getpid COUNT   (MS apart)
 *   tracebed-probe-target poll in|pri|out FILE MS [unread]
 *                                                    poll FILE REVENTS_HEX ELAPSED_MS
 *   tracebed-probe-target write SIZE COUNT...        write FD SIZE COUNT   (per SIZE)
 *   tracebed-probe-target perf-add ID A B COUNT      add ... (per call), then
 *                                                    perf-add ID COUNTED_OR_-ERRNO
 *   tracebed-probe-target map-read TRACE_PIPE_RAW    map ERRNO (when mmap fails), or
 *                                                    subbuf ID FROM HEX (per new data), then
 *                                                    meta ENTRIES OVERRUN READ SUBBUF_SIZE NR_SUBBUFS
 *
 * The probed functions are global, never inlined and kept in the symbol
 * table (the binary is not stripped): uprobe offsets come from the ELF
 * symbol table on the host, as a user would resolve them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* noipa (GCC): no clone or constant propagation may change the probed
 * function's arguments; clang has no such pass across noinline functions. */
#if defined(__clang__)
#define PROBED __attribute__((noinline, used))
#else
#define PROBED __attribute__((noipa, used))
#endif

/* A compiler barrier keeps the calls (and their arguments) real. */
#define KEEP(x) __asm__ volatile("" : : "r"(x) : "memory")

PROBED long tracebed_target_add(long a, long b) {
  KEEP(a);
  return a + b;
}

/* Mixed argument widths and a string, for typed fetchargs
 * ($arg1:s8, $arg2:u16, $arg3:s32, $arg4:u64, +0($arg5):ustring). Returns
 * the string's length plus the first argument. */
PROBED long tracebed_target_mix(int8_t i8, uint16_t u16, int32_t s32, uint64_t u64, const char* str) {
  KEEP(u16);
  KEEP(s32);
  KEEP(u64);
  return (long)strlen(str) + i8;
}

static int parse_long(const char* text, long* out) {
  char* end = NULL;
  errno = 0;
  long v = strtol(text, &end, 0);
  if (errno || end == text || *end) {
    fprintf(stderr, "tracebed-probe-target: not a number: %s\n", text);
    return -1;
  }
  *out = v;
  return 0;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

/* Waits (up to 2 s) until the task is asleep, state S in /proc/PID/stat:
 * a fixed pause is not enough on a loaded host, where a child that has not
 * reached its read() yet would find the byte there and never sleep. */
static void wait_until_sleeping(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  for (int waited = 0; waited < 2000; waited++) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) break;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) break;
    buf[n] = 0;
    const char* paren = strrchr(buf, ')'); /* the comm may hold spaces */
    if (paren && paren[1] == ' ' && paren[2] == 'S') return;
    sleep_ms(1);
  }
  sleep_ms(5);
}

/* Not inlined, so its symbol bounds the return address a uprobe on
 * tracebed_target_add finds on the stack. */
__attribute__((noinline)) static int cmd_add(int argc, char** argv) {
  long a, b, count = 1;
  if (argc < 2 || parse_long(argv[0], &a) || parse_long(argv[1], &b) || (argc > 2 && parse_long(argv[2], &count)))
    return 2;
  for (long i = 0; i < count; i++) {
    long sum = tracebed_target_add(a + i, b);
    printf("add %ld %ld -> %ld\n", a + i, b, sum);
  }
  return 0;
}

/* One call per STR, with the same four numbers. */
static int cmd_mix(int argc, char** argv) {
  long i8, u16, s32;
  if (argc < 5 || parse_long(argv[0], &i8) || parse_long(argv[1], &u16) || parse_long(argv[2], &s32)) return 2;
  uint64_t u64 = strtoull(argv[3], NULL, 0);
  for (int i = 4; i < argc; i++) {
    long r = tracebed_target_mix((int8_t)i8, (uint16_t)u16, (int32_t)s32, u64, argv[i]);
    printf("mix %d %u %d %" PRIu64 " %s -> %ld\n", (int8_t)i8, (uint16_t)u16, (int32_t)s32, u64, argv[i], r);
  }
  return 0;
}

static int cmd_open(int argc, char** argv) {
  for (int i = 0; i < argc; i++) {
    /* openat(AT_FDCWD, ...) explicitly: that is the syscall the suites probe. */
    int fd = (int)syscall(SYS_openat, AT_FDCWD, argv[i], O_RDONLY);
    printf("open %s %d\n", argv[i], fd < 0 ? -errno : fd);
    if (fd >= 0) close(fd);
  }
  return 0;
}

/* open(2) itself, not openat(2): the syscall whose kernel side is
 * do_sys_open (libc's open() makes an openat). x86-64 only has it. */
static int cmd_sys_open(int argc, char** argv) {
#ifdef SYS_open
  for (int i = 0; i < argc; i++) {
    int fd = (int)syscall(SYS_open, argv[i], O_RDONLY, 0);
    printf("sys-open %s %d\n", argv[i], fd < 0 ? -errno : fd);
    if (fd >= 0) close(fd);
  }
  return 0;
#else
  (void)argc;
  (void)argv;
  fprintf(stderr, "tracebed-probe-target sys-open: this architecture has no open(2)\n");
  return 1;
#endif
}

/* lseek(2) on FILE once per OFF WHENCE pair: a 64-bit offset or -errno,
 * what the kernel's ksys_lseek (off_t) returned. */
static int cmd_lseek(int argc, char** argv) {
  if (argc < 3 || argc % 2 == 0) return 2;
  int fd = open(argv[0], O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "tracebed-probe-target lseek: %s: %s\n", argv[0], strerror(errno));
    return 1;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    long off, whence;
    if (parse_long(argv[i], &off) || parse_long(argv[i + 1], &whence)) return 2;
    long r = syscall(SYS_lseek, fd, off, whence);
    printf("lseek %ld %ld %ld\n", off, whence, r < 0 ? -(long)errno : r);
  }
  close(fd);
  return 0;
}

/* readlinkat(2) of each PATH: the link's length or -errno, what the
 * kernel's do_readlinkat (an int function) returned. */
static int cmd_readlink(int argc, char** argv) {
  char buf[4096];
  for (int i = 0; i < argc; i++) {
    long n = syscall(SYS_readlinkat, AT_FDCWD, argv[i], buf, sizeof buf);
    printf("readlink %s %ld\n", argv[i], n < 0 ? -(long)errno : n);
  }
  return 0;
}

static int cmd_sleep(int argc, char** argv) {
  long ms, count = 1;
  if (argc < 1 || parse_long(argv[0], &ms) || (argc > 1 && parse_long(argv[1], &count))) return 2;
  for (long i = 0; i < count; i++) {
    sleep_ms(ms);
    printf("sleep %ld\n", ms);
  }
  return 0;
}

/* A child blocks reading a pipe; the parent wakes it by writing one byte,
 * COUNT times: each round is one sched_waking (of the child, by the parent)
 * and one sched_switch to the child. */
static int cmd_wake(int argc, char** argv) {
  long count;
  if (argc < 1 || parse_long(argv[0], &count)) return 2;
  int to_child[2], to_parent[2];
  if (pipe(to_child) || pipe(to_parent)) return 1;
  pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    char c;
    for (long i = 0; i < count; i++) {
      if (read(to_child[0], &c, 1) != 1) _exit(1);
      if (write(to_parent[1], &c, 1) != 1) _exit(1);
    }
    _exit(0);
  }
  for (long i = 0; i < count; i++) {
    /* The child must be blocked, so the write really wakes it. */
    wait_until_sleeping(child);
    char c = 'w';
    if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1) return 1;
    printf("wake %d %d\n", (int)getpid(), (int)child);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* COUNT getpid(2)s, MS milliseconds apart when MS is given. */
static int cmd_getpid(int argc, char** argv) {
  long count, ms = 0;
  if (argc < 1 || parse_long(argv[0], &count) || (argc > 1 && parse_long(argv[1], &ms))) return 2;
  for (long i = 0; i < count; i++) {
    if (i > 0 && ms > 0) sleep_ms(ms);
    KEEP(syscall(SYS_getpid));
  }
  printf("getpid %ld\n", count);
  return 0;
}

/* poll(2) on FILE for POLLIN, POLLPRI or POLLOUT, after reading it to the
 * end as a reader would: REVENTS 0 is a timeout. For the hist file's poll
 * (the kernel's trigger-hist-poll.tc uses a poll.c of its own for this);
 * POLLOUT tells a file without a poll of its own (the VFS default mask
 * has it) from the hist file's poll (which never reports it). With
 * "unread" it polls without reading first: trace_pipe's poll asks whether
 * records wait, and a read would block on an empty pipe or consume them. */
static int cmd_poll(int argc, char** argv) {
  long ms;
  if (argc < 3 || (strcmp(argv[0], "in") && strcmp(argv[0], "pri") && strcmp(argv[0], "out")) ||
      parse_long(argv[2], &ms))
    return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) {
    printf("poll %s %d\n", argv[1], -errno);
    return 1;
  }
  char buf[4096];
  if (argc < 4 || strcmp(argv[3], "unread"))
    while (read(fd, buf, sizeof buf) > 0) {
    }
  short events = !strcmp(argv[0], "in") ? POLLIN : !strcmp(argv[0], "pri") ? POLLPRI : POLLOUT;
  struct pollfd pfd = {fd, events, 0};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int ret = poll(&pfd, 1, (int)ms);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long elapsed = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  close(fd);
  if (ret < 0) return 1;
  printf("poll %s 0x%x %ld\n", argv[1], ret ? (unsigned)pfd.revents : 0u, elapsed);
  return 0;
}

/* write(2)s of chosen sizes to /dev/null, moved to fd WRITE_FD: COUNT
 * writes of each SIZE, in order. syscalls:sys_enter_write's count is then
 * a value the test chose, and its fd tells these writes from the
 * program's own output (fd 1). */
#define WRITE_FD 100
static int cmd_write(int argc, char** argv) {
  static char buf[65536];
  if (argc < 2 || argc % 2) return 2;
  int fd = open("/dev/null", O_WRONLY);
  if (fd < 0) return 1;
  if (fd != WRITE_FD) {
    if (dup2(fd, WRITE_FD) < 0) return 1;
    close(fd);
  }
  for (int i = 0; i < argc; i += 2) {
    long size, count;
    if (parse_long(argv[i], &size) || parse_long(argv[i + 1], &count) || size < 0 || (size_t)size > sizeof buf ||
        count < 0)
      return 2;
    for (long j = 0; j < count; j++)
      if (syscall(SYS_write, WRITE_FD, buf, (size_t)size) != size) return 1;
    printf("write %d %ld %ld\n", WRITE_FD, size, count);
  }
  close(WRITE_FD);
  return 0;
}

/* perf_event_open on tracepoint ID (a probe event's id), bound to this
 * task on any CPU, as `perf stat -e` binds a command's events: the counter
 * runs around `add A B COUNT` (cmd_add, its lines too), and what it read
 * is printed. Task-bound events are the ones a uprobe event filters by mm. */
static int cmd_perf_add(int argc, char** argv) {
  long id;
  if (argc != 4 || parse_long(argv[0], &id)) return 2;
  struct perf_event_attr pe;
  memset(&pe, 0, sizeof pe);
  pe.type = PERF_TYPE_TRACEPOINT;
  pe.size = sizeof pe;
  pe.config = (uint64_t)id;
  pe.disabled = 1;
  int fd = (int)syscall(SYS_perf_event_open, &pe, 0, -1, -1, 0);
  if (fd < 0) {
    printf("perf-add %ld %d\n", id, -errno);
    return 0;
  }
  uint64_t counted = 0;
  if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) return 1;
  int status = cmd_add(3, argv + 1);
  if (status) return status;
  if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) || read(fd, &counted, sizeof counted) != sizeof counted) return 1;
  close(fd);
  printf("perf-add %ld %" PRIu64 "\n", id, counted);
  return 0;
}

/* The memory-mapped ring buffer (Documentation/trace/ring-buffer-map.rst,
 * 6.10+): the meta page, then every sub-buffer by id; each
 * TRACE_MMAP_IOCTL_GET_READER hands over the reader sub-buffer, and the
 * kernel takes everything up to its commit as read. Prints the bytes of
 * each sub-buffer's data that are new since the last call (from the
 * previous end when the reader stayed on the same sub-buffer, else from
 * 0), until a call brings nothing new; then the meta page's counts. The
 * uapi header is 6.10's, newer than this build's: its layout is here. */
struct map_meta {
  uint32_t meta_page_size, meta_struct_len, subbuf_size, nr_subbufs;
  uint64_t reader_lost_events;
  uint32_t reader_id, reader_read;
  uint64_t flags, entries, overrun, read;
};
#define TB_TRACE_MMAP_IOCTL_GET_READER _IO('R', 0x20)
/* A sub-buffer: a u64 time stamp, then the commit (a long: the data's
 * length, its top bits flags), then the data. */
#define SUBBUF_DATA_OFFSET (8 + sizeof(long))
#define SUBBUF_COMMIT_FLAGS (3UL << 30) /* RB_MISSED_EVENTS, RB_MISSED_STORED */

static int cmd_map_read(int argc, char** argv) {
  if (argc != 1) return 2;
  int fd = open(argv[0], O_RDONLY | O_NONBLOCK);
  if (fd < 0) return 1;
  long page = sysconf(_SC_PAGESIZE);
  const struct map_meta* meta = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
  if (meta == MAP_FAILED) {
    printf("map %d\n", errno);
    return 0;
  }
  size_t data_len = (size_t)meta->subbuf_size * meta->nr_subbufs;
  const unsigned char* data = mmap(NULL, data_len, PROT_READ, MAP_SHARED, fd, meta->meta_page_size);
  if (data == MAP_FAILED) {
    printf("map %d\n", errno);
    return 0;
  }
  long last_id = -1;
  unsigned long last_end = 0;
  for (;;) {
    if (ioctl(fd, TB_TRACE_MMAP_IOCTL_GET_READER) < 0) return 1;
    const unsigned char* sub = data + (size_t)meta->subbuf_size * meta->reader_id;
    unsigned long commit;
    memcpy(&commit, sub + 8, sizeof commit);
    commit &= ~SUBBUF_COMMIT_FLAGS;
    unsigned long from = (long)meta->reader_id == last_id ? last_end : 0;
    if ((long)meta->reader_id == last_id && commit <= last_end) break;
    printf("subbuf %u %lu ", meta->reader_id, from);
    for (unsigned long i = from; i < commit; ++i) printf("%02x", sub[SUBBUF_DATA_OFFSET + i]);
    printf("\n");
    last_id = meta->reader_id;
    last_end = commit;
  }
  printf("meta %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %u\n", meta->entries, meta->overrun, meta->read,
         meta->subbuf_size, meta->nr_subbufs);
  munmap((void*)data, data_len);
  munmap((void*)meta, (size_t)page);
  close(fd);
  return 0;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: tracebed-probe-target pid|add|mix|open|sys-open|lseek|readlink|sleep|wake|getpid|poll|write|perf-add|map-read ARGS...\n");
    return 2;
  }
  const char* cmd = argv[1];
  int n = argc - 2;
  char** args = argv + 2;
  int status;
  printf("pid %d\n", (int)getpid());
  if (!strcmp(cmd, "pid")) return 0;
  if (!strcmp(cmd, "add")) status = cmd_add(n, args);
  else if (!strcmp(cmd, "mix")) status = cmd_mix(n, args);
  else if (!strcmp(cmd, "open")) status = cmd_open(n, args);
  else if (!strcmp(cmd, "sys-open")) status = cmd_sys_open(n, args);
  else if (!strcmp(cmd, "lseek")) status = cmd_lseek(n, args);
  else if (!strcmp(cmd, "readlink")) status = cmd_readlink(n, args);
  else if (!strcmp(cmd, "sleep")) status = cmd_sleep(n, args);
  else if (!strcmp(cmd, "wake")) status = cmd_wake(n, args);
  else if (!strcmp(cmd, "getpid")) status = cmd_getpid(n, args);
  else if (!strcmp(cmd, "poll")) status = cmd_poll(n, args);
  else if (!strcmp(cmd, "write")) status = cmd_write(n, args);
  else if (!strcmp(cmd, "perf-add")) status = cmd_perf_add(n, args);
  else if (!strcmp(cmd, "map-read")) status = cmd_map_read(n, args);
  else {
    fprintf(stderr, "tracebed-probe-target: unknown command %s\n", cmd);
    return 2;
  }
  if (status == 2) fprintf(stderr, "tracebed-probe-target %s: bad arguments\n", cmd);
  return status;
}
