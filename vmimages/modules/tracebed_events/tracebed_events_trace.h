/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracebed's test events: one field of every kind TRACE_EVENT has
 * (include/trace/stages/stage1_struct_define.h), so that a decoder that
 * gets one kind wrong fails a test. Values come from the emit file.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tracebed

#if !defined(_TRACEBED_EVENTS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACEBED_EVENTS_TRACE_H

#include <linux/tracepoint.h>

/* Integers of each width and sign. */
TRACE_EVENT(tb_ints,
	TP_PROTO(u32 seq, u8 u8v, s8 s8v, u16 u16v, s16 s16v, u32 u32v, s32 s32v, u64 u64v, s64 s64v),
	TP_ARGS(seq, u8v, s8v, u16v, s16v, u32v, s32v, u64v, s64v),
	TP_STRUCT__entry(
		__field(u32, seq)
		__field(u8, u8v)
		__field(s8, s8v)
		__field(u16, u16v)
		__field(s16, s16v)
		__field(u32, u32v)
		__field(s32, s32v)
		__field(u64, u64v)
		__field(s64, s64v)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__entry->u8v = u8v;
		__entry->s8v = s8v;
		__entry->u16v = u16v;
		__entry->s16v = s16v;
		__entry->u32v = u32v;
		__entry->s32v = s32v;
		__entry->u64v = u64v;
		__entry->s64v = s64v;
	),
	TP_printk("seq=%u u8v=%u s8v=%d u16v=%u s16v=%d u32v=%u s32v=%d u64v=%llu s64v=%lld",
		  __entry->seq, __entry->u8v, __entry->s8v, __entry->u16v, __entry->s16v,
		  __entry->u32v, __entry->s32v, __entry->u64v, __entry->s64v)
);

/* Fixed arrays and a dynamic byte array printed as hex. */
TRACE_EVENT(tb_arrays,
	TP_PROTO(u32 seq, const char *name, const u32 *words, const u8 *bytes, int nbytes),
	TP_ARGS(seq, name, words, bytes, nbytes),
	TP_STRUCT__entry(
		__field(u32, seq)
		__array(char, name, 16)
		__array(u32, words, 4)
		__dynamic_array(u8, bytes, nbytes)
	),
	TP_fast_assign(
		__entry->seq = seq;
		strscpy_pad(__entry->name, name, sizeof(__entry->name));
		memcpy(__entry->words, words, sizeof(__entry->words));
		memcpy(__get_dynamic_array(bytes), bytes, nbytes);
	),
	TP_printk("seq=%u name=%s words=%s bytes=%s", __entry->seq, __entry->name,
		  __print_array(__entry->words, 4, sizeof(u32)),
		  __print_hex(__get_dynamic_array(bytes), __get_dynamic_array_len(bytes)))
);

/* Strings: whole, a prefix (__string_len), printf-made, relative. */
TRACE_EVENT(tb_strings,
	TP_PROTO(u32 seq, const char *s, int len, const char *fmt, va_list *va),
	TP_ARGS(seq, s, len, fmt, va),
	TP_STRUCT__entry(
		__field(u32, seq)
		__string(str, s)
		__string_len(lstr, s, len)
		__vstring(vstr, fmt, va)
		__rel_string(rstr, s)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__assign_str(str);
		__assign_str(lstr);
		__assign_vstr(vstr, fmt, va);
		__assign_rel_str(rstr);
	),
	TP_printk("seq=%u str=%s lstr=%s vstr=%s rstr=%s", __entry->seq, __get_str(str),
		  __get_str(lstr), __get_str(vstr), __get_rel_str(rstr))
);

/* Bit masks and CPU masks, plain and relative, and a relative byte array. */
TRACE_EVENT(tb_masks,
	TP_PROTO(u32 seq, const unsigned long *bits, const struct cpumask *cpus, const u8 *bytes, int nbytes),
	TP_ARGS(seq, bits, cpus, bytes, nbytes),
	TP_STRUCT__entry(
		__field(u32, seq)
		__bitmask(bits, 64)
		__cpumask(cpus)
		__rel_bitmask(rbits, 64)
		__rel_cpumask(rcpus)
		__rel_dynamic_array(u8, rbytes, nbytes)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__assign_bitmask(bits, bits, 64);
		__assign_cpumask(cpus, cpumask_bits(cpus));
		__assign_rel_bitmask(rbits, bits, 64);
		__assign_rel_cpumask(rcpus, cpumask_bits(cpus));
		memcpy(__get_rel_dynamic_array(rbytes), bytes, nbytes);
	),
	TP_printk("seq=%u bits=%s cpus=%s rbits=%s rcpus=%s rbytes=%s", __entry->seq,
		  __get_bitmask(bits), __get_cpumask(cpus), __get_rel_bitmask(rbits),
		  __get_rel_cpumask(rcpus),
		  __print_hex(__get_rel_dynamic_array(rbytes), __get_rel_dynamic_array_len(rbytes)))
);

/* Flags and symbols as the kernel spells them in `trace`. */
TRACE_EVENT(tb_flags,
	TP_PROTO(u32 seq, unsigned long flags, int state),
	TP_ARGS(seq, flags, state),
	TP_STRUCT__entry(
		__field(u32, seq)
		__field(unsigned long, flags)
		__field(int, state)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__entry->flags = flags;
		__entry->state = state;
	),
	TP_printk("seq=%u flags=%s state=%s", __entry->seq,
		  __print_flags(__entry->flags, "|", { 0x1, "READ" }, { 0x2, "WRITE" },
				{ 0x4, "EXEC" }, { 0x100, "SHARED" }),
		  __print_symbolic(__entry->state, { 0, "IDLE" }, { 1, "RUNNING" },
				   { 2, "BLOCKED" }, { -1, "DEAD" }))
);

#endif /* _TRACEBED_EVENTS_TRACE_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE tracebed_events_trace
#include <trace/define_trace.h>
