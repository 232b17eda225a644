/* See tracecmd_peer.h. */
#include "tracecmd_peer.h"

#include <trace-cmd.h>

/* Exported by libtracecmd but left out of Debian's trace-cmd.h. */
struct tep_record* tracecmd_read_next_data(struct tracecmd_input* handle, int* rec_cpu);

struct walk {
  struct tep_handle* tep;
  struct tracecmd_peer_count* count;
};

static int on_record(struct tracecmd_input* handle, struct tep_record* record, int cpu, void* data) {
  struct walk* w = data;
  struct tep_event* event = tep_find_event_by_record(w->tep, record);
  (void)handle;
  (void)cpu;
  w->count->events++;
  if (event) w->count->ids += (unsigned)event->id;
  return 0;
}

int tracecmd_peer_iterate(const char* path, struct tracecmd_peer_count* out) {
  struct tracecmd_input* handle;
  struct walk w;
  int i;

  tracecmd_set_loglevel(TEP_LOG_NONE);
  handle = tracecmd_open(path, 0);
  if (!handle) return -1;
  out->events = out->ids = 0;
  w.count = out;
  w.tep = tracecmd_get_tep(handle);
  tracecmd_iterate_events(handle, NULL, 0, on_record, &w);
  /* Instances in file order after the top level, as trace-cmd report reads them. */
  for (i = 0; i < tracecmd_buffer_instances(handle); i++) {
    struct tracecmd_input* instance = tracecmd_buffer_instance_handle(handle, i);
    if (!instance) continue;
    w.tep = tracecmd_get_tep(instance);
    tracecmd_iterate_events(instance, NULL, 0, on_record, &w);
    tracecmd_close(instance);
  }
  tracecmd_close(handle);
  return 0;
}

int tracecmd_peer_info_lines(const char* path, tracecmd_peer_line line, void* ctx) {
  struct tracecmd_input* handle;
  struct tep_handle* tep;
  struct tep_record* record;
  int cpu;

  tracecmd_set_loglevel(TEP_LOG_NONE);
  handle = tracecmd_open(path, 0);
  if (!handle) return -1;
  tep = tracecmd_get_tep(handle);
  while ((record = tracecmd_read_next_data(handle, &cpu))) {
    struct trace_seq s;
    trace_seq_init(&s);
    tep_print_event(tep, &s, record, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&s);
    line(ctx, cpu, s.buffer);
    trace_seq_destroy(&s);
    tracecmd_free_record(record);
  }
  tracecmd_close(handle);
  return 0;
}
