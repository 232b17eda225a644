/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A custom event on the scheduler's sched_switch tracepoint
 * (Documentation/trace/events.rst, include/trace/trace_custom_events.h):
 * events/custom/sched_switch records three fields instead of the nine of
 * sched:sched_switch.
 */
#if !defined(_TRACEBED_CUSTOM_TRACE_H) || defined(TRACE_CUSTOM_MULTI_READ)
#define _TRACEBED_CUSTOM_TRACE_H

#include <linux/trace_events.h>

TRACE_CUSTOM_EVENT(sched_switch,
	TP_PROTO(bool preempt, struct task_struct *prev, struct task_struct *next,
		 unsigned int prev_state),
	TP_ARGS(preempt, prev, next, prev_state),
	TP_STRUCT__entry(
		__field(pid_t, prev_pid)
		__field(pid_t, next_pid)
		__field(unsigned short, next_prio)
	),
	TP_fast_assign(
		__entry->prev_pid = prev->pid;
		__entry->next_pid = next->pid;
		__entry->next_prio = next->prio;
	),
	TP_printk("prev_pid=%d next_pid=%d next_prio=%d", __entry->prev_pid,
		  __entry->next_pid, __entry->next_prio)
)
#endif

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE tracebed_custom_trace
#include <trace/define_custom_trace.h>
