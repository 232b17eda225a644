/* tracebed-bpf: loads a BPF object in the guest, attaches its programs,
 * runs a command while they are attached and prints what they saw.
 *
 *   tracebed-bpf OBJ [--multi PROG=SYM,SYM...] -- CMD ARGS...
 *
 * The object is compiled on the host (framework/bpf) for the kernel under
 * test. Each program is attached as its section says (tracepoint/,
 * raw_tracepoint/, kprobe/, kretprobe/, fentry/, fexit/), except those
 * named by --multi: kprobe.multi programs attached to these functions.
 * Programs write fixed records of u64 words into the ring buffer map
 * "tb_records" and count what did not fit in the array map "tb_lost".
 *
 * Output, one line each:
 *   attached PROG                 a program attached
 *   child PID                     the command runs (forked after every attach)
 *   rec W0 W1 ...                 a record, its words in hex
 *   exit STATUS                   the command's status (its output goes to stderr)
 *   lost N                        records the ring buffer had no room for
 *   error WHAT: ERRNO_NAME MSG    what failed (exit status 3 load, 4 attach)
 * libbpf's own messages (the verifier's log among them) go to stderr.
 */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINKS 64
#define MAX_MULTI 16

struct multi {
  const char* prog;
  char* syms[256];
  size_t count;
};

static int print_libbpf(enum libbpf_print_level level, const char* format, va_list args) {
  (void)level;
  return vfprintf(stderr, format, args);
}

static int on_record(void* ctx, void* data, size_t size) {
  (void)ctx;
  const unsigned long long* w = data;
  fputs("rec", stdout);
  for (size_t i = 0; i < size / 8; i++) printf(" %llx", w[i]);
  fputc('\n', stdout);
  return 0;
}

static void fail(const char* what, int err) {
  if (err < 0) err = -err;
  printf("error %s: %s %s\n", what, strerrorname_np(err) ? strerrorname_np(err) : "?", strerror(err));
  fflush(stdout);
}

static int parse_multi(char* arg, struct multi* m) {
  char* eq = strchr(arg, '=');
  if (!eq) return -1;
  *eq = 0;
  m->prog = arg;
  m->count = 0;
  for (char* s = strtok(eq + 1, ","); s && m->count < 256; s = strtok(NULL, ",")) m->syms[m->count++] = s;
  return m->count ? 0 : -1;
}

static const struct multi* multi_of(const struct multi* multis, size_t n, const char* prog) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(multis[i].prog, prog) == 0) return &multis[i];
  return NULL;
}

static struct bpf_link* attach(struct bpf_program* prog, const struct multi* m) {
  if (!m) return bpf_program__attach(prog);
  LIBBPF_OPTS(bpf_kprobe_multi_opts, opts, .syms = (const char**)m->syms, .cnt = m->count);
  return bpf_program__attach_kprobe_multi_opts(prog, NULL, &opts);
}

static unsigned long long lost_records(struct bpf_object* obj) {
  struct bpf_map* map = bpf_object__find_map_by_name(obj, "tb_lost");
  unsigned int key = 0;
  unsigned long long n = 0;
  if (map) bpf_map__lookup_elem(map, &key, sizeof(key), &n, sizeof(n), 0);
  return n;
}

static long long now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* The programs submit without waking us (BPF_RB_NO_WAKEUP: a wakeup per
 * sched_switch record would make each record cause more switches), so
 * epoll never reports the buffer: it is drained every `ms` instead. */
static void drain_after(struct ring_buffer* rb, long ms) {
  struct timespec t = {0, ms * 1000000L};
  nanosleep(&t, NULL);
  ring_buffer__consume(rb);
}

/* Forks the command, drains the ring buffer until it exits; its status. */
static int run_command(struct ring_buffer* rb, char** argv) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    /* Its output goes to stderr: stdout is the records', line by line. */
    dup2(STDERR_FILENO, STDOUT_FILENO);
    execvp(argv[0], argv);
    _exit(127);
  }
  if (pid < 0) return -1;
  printf("child %d\n", pid);
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) drain_after(rb, 20);
  /* The child is reaped once it is a zombie (exit_notify), which can be
   * before its last context switch on another CPU: a sched_switch that
   * ftrace records and the programs would miss if detached at once. */
  const long long end = now_ms() + 200;
  do {
    drain_after(rb, 20);
  } while (now_ms() < end);
  return status;
}

int main(int argc, char** argv) {
  struct multi multis[MAX_MULTI];
  size_t n_multi = 0;
  int i = 2;
  if (argc < 2) {
    fprintf(stderr, "usage: tracebed-bpf OBJ [--multi PROG=SYM,...] -- CMD ARGS...\n");
    return 2;
  }
  for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
    if (strcmp(argv[i], "--multi") == 0 && i + 1 < argc && n_multi < MAX_MULTI &&
        parse_multi(argv[++i], &multis[n_multi]) == 0) {
      n_multi++;
      continue;
    }
    fprintf(stderr, "tracebed-bpf: bad argument %s\n", argv[i]);
    return 2;
  }
  if (i + 1 >= argc) {
    fprintf(stderr, "tracebed-bpf: no command after --\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  /* Kernels before 5.11 charge maps to RLIMIT_MEMLOCK. */
  struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_MEMLOCK, &unlimited);
  libbpf_set_print(print_libbpf);

  struct bpf_object* obj = bpf_object__open_file(argv[1], NULL);
  if (!obj) {
    fail("open", errno);
    return 3;
  }
  int err = bpf_object__load(obj);
  if (err) {
    fail("load", err);
    return 3;
  }
  struct bpf_link* links[MAX_LINKS];
  size_t n_links = 0;
  struct bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    const char* name = bpf_program__name(prog);
    struct bpf_link* link = attach(prog, multi_of(multis, n_multi, name));
    if (!link) {
      char what[256];
      snprintf(what, sizeof(what), "attach %s", name);
      fail(what, errno);
      return 4;
    }
    if (n_links < MAX_LINKS) links[n_links++] = link;
    printf("attached %s\n", name);
  }
  struct bpf_map* records = bpf_object__find_map_by_name(obj, "tb_records");
  struct ring_buffer* rb = records ? ring_buffer__new(bpf_map__fd(records), on_record, NULL, NULL) : NULL;
  if (!rb) {
    fail("ring buffer tb_records", records ? errno : ENOENT);
    return 3;
  }
  int status = run_command(rb, &argv[i + 1]);
  /* Detach first: nothing after the command's exit is the window's. */
  for (size_t l = 0; l < n_links; l++) bpf_link__destroy(links[l]);
  ring_buffer__consume(rb);
  printf("exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  printf("lost %llu\n", lost_records(obj));
  ring_buffer__free(rb);
  bpf_object__close(obj);
  return 0;
}
