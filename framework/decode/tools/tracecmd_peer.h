/* The libtracecmd peer of tracebed's iteration (docs/performance.md), in C:
 * Debian's tracefs.h, which trace-cmd.h includes, does not compile as C++. */
#ifndef TRACEBED_TRACECMD_PEER_H
#define TRACEBED_TRACECMD_PEER_H

#ifdef __cplusplus
extern "C" {
#endif

struct tracecmd_peer_count {
  unsigned long long events; /* records walked */
  unsigned long long ids;    /* sum of their event ids: a check both sides saw the same */
};

/* Opens `path` with libtracecmd (plugins loaded, as `trace-cmd report`
 * does), walks every record of the top-level buffer and then of each
 * instance with tracecmd_iterate_events, looking up each record's event.
 * Returns 0, or -1 when libtracecmd cannot open the file. */
int tracecmd_peer_iterate(const char* path, struct tracecmd_peer_count* out);

/* Walks the top-level buffer of `path` in libtracecmd's own time order,
 * tracecmd_read_next_data (the merge its function_graph printer peeks into
 * and reads ahead from), calling `line` with each record's CPU and the text
 * libtraceevent prints for it (tep_print_event TEP_PRINT_INFO, trace-cmd's
 * plugins included). Returns 0, or -1 when libtracecmd cannot open it. */
typedef void (*tracecmd_peer_line)(void* ctx, int cpu, const char* info);
int tracecmd_peer_info_lines(const char* path, tracecmd_peer_line line, void* ctx);

#ifdef __cplusplus
}
#endif

#endif
