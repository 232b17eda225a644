/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM hello

#if !defined(_HELLO_EVENTS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _HELLO_EVENTS_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(hello,
	TP_PROTO(int n, const char *msg),
	TP_ARGS(n, msg),
	TP_STRUCT__entry(
		__field(int, n)
		__string(msg, msg)
	),
	TP_fast_assign(
		__entry->n = n;
		__assign_str(msg);
	),
	TP_printk("n=%d msg=%s", __entry->n, __get_str(msg))
);

#endif

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE hello_events_trace
#include <trace/define_trace.h>
