// SPDX-License-Identifier: GPL-2.0
/*
 * The custom sched_switch event (tracebed_custom_trace.h), in a file of its
 * own: its header redefines the TRACE_EVENT stages the module's own events
 * use (samples/trace_events/trace_custom_sched.c does the same).
 */
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/trace_events.h>

#include <trace/events/sched.h>

#define CREATE_CUSTOM_TRACE_EVENTS
#include "tracebed_custom_trace.h"

#include "tracebed_events.h"

static void hook_tracepoint(struct tracepoint *tp, void *priv)
{
	trace_custom_event_sched_switch_update(tp);
}

/* The custom event finds its tracepoint by walking the kernel's. */
void tracebed_custom_init(void)
{
	for_each_kernel_tracepoint(hook_tracepoint, NULL);
}
