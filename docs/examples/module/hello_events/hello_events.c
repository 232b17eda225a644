// SPDX-License-Identifier: GPL-2.0
/* docs/modules.md: emits hello:hello `count` times when it loads. */
#include <linux/module.h>

#define CREATE_TRACE_POINTS
#include "hello_events_trace.h"

static int count = 10;
module_param(count, int, 0444);

static int __init hello_events_init(void)
{
	char msg[32];
	int i;

	for (i = 0; i < count; i++) {
		snprintf(msg, sizeof(msg), "hello %d", i);
		trace_hello(i, msg);
	}
	return 0;
}

static void __exit hello_events_exit(void)
{
}

module_init(hello_events_init);
module_exit(hello_events_exit);
MODULE_DESCRIPTION("docs/modules.md: one trace event");
MODULE_LICENSE("GPL");
