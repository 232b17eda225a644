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

#ifdef __cplusplus
}
#endif

#endif
