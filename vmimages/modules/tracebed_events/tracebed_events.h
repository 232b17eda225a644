/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _TRACEBED_EVENTS_H
#define _TRACEBED_EVENTS_H

#include <linux/types.h>

void tracebed_custom_init(void);

/* What each line of the emit file calls; kprobes and tests name these. */
void tracebed_emit_ints(u32 seq, u8 u8v, s8 s8v, u16 u16v, s16 s16v, u32 u32v, s32 s32v, u64 u64v, s64 s64v);
void tracebed_emit_arrays(u32 seq, const char *name, const u32 *words, const u8 *bytes, int nbytes);
__printf(4, 5) void tracebed_emit_strings(u32 seq, const char *s, int len, const char *fmt, ...);
void tracebed_emit_masks(u32 seq, u64 bits, u64 cpus, int nbytes);
void tracebed_emit_flags(u32 seq, unsigned long flags, int state);
void tracebed_emit_printk(u32 seq, s64 value, const char *s);
void tracebed_emit_puts(void);

#endif
