/* tracecmd_iterate_peer FILE: the libtracecmd side of `tracebed bench`'s
 * iterate row. Prints "events=N ids=SUM", as `tracebed bench --iterate-only`
 * does for our side, so the caller can check both saw the same records. */
#include <stdio.h>

#include "tracecmd_peer.h"

int main(int argc, char** argv) {
  struct tracecmd_peer_count count;
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  if (tracecmd_peer_iterate(argv[1], &count) != 0) {
    fprintf(stderr, "%s: libtracecmd cannot open %s\n", argv[0], argv[1]);
    return 1;
  }
  printf("events=%llu ids=%llu\n", count.events, count.ids);
  return 0;
}
