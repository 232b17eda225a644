// SPDX-License-Identifier: GPL-2.0
/*
 * tracebed_events: emits the events of tracebed_events_trace.h with the
 * values a test writes to /sys/kernel/debug/tracebed_events/emit, one event
 * per line, so that what the test wrote is what it asserts on:
 *
 *   ints SEQ U8 S8 U16 S16 U32 S32 U64 S64    tracebed:tb_ints
 *   arrays SEQ NAME W0 W1 W2 W3 HEX|-         tracebed:tb_arrays
 *   strings SEQ LEN STR                       tracebed:tb_strings
 *   masks SEQ BITS CPUS NBYTES                tracebed:tb_masks
 *   flags SEQ FLAGS STATE                     tracebed:tb_flags
 *   printk SEQ VALUE STR                      trace_printk()
 *   puts                                      trace_puts()
 *
 * Numbers are as kstrto*() reads them (0x for hex). A bad line fails the
 * write with -EINVAL, and the kernel log names it; lines before it were
 * emitted. Each tracebed_emit_* function is global and noinline, so that
 * kprobes and the function tracer find it by name, with its arguments in
 * the registers the ABI says (tracebed_events:tracebed_emit_flags $arg1 is
 * seq): a static one may be cloned with another signature.
 */
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/hex.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define CREATE_TRACE_POINTS
#include "tracebed_events_trace.h"

#include "tracebed_events.h"

#define MAX_WRITE (64 * 1024)
#define MAX_STR 256

static struct dentry *dir;

noinline void tracebed_emit_ints(u32 seq, u8 u8v, s8 s8v, u16 u16v, s16 s16v, u32 u32v, s32 s32v, u64 u64v,
				  s64 s64v)
{
	trace_tb_ints(seq, u8v, s8v, u16v, s16v, u32v, s32v, u64v, s64v);
}

noinline void tracebed_emit_arrays(u32 seq, const char *name, const u32 *words, const u8 *bytes, int nbytes)
{
	trace_tb_arrays(seq, name, words, bytes, nbytes);
}

noinline void tracebed_emit_strings(u32 seq, const char *s, int len, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	trace_tb_strings(seq, s, len, fmt, &va);
	va_end(va);
}

noinline void tracebed_emit_masks(u32 seq, u64 bits, u64 cpus, int nbytes)
{
	unsigned long b[BITS_TO_LONGS(64)] = { 0 };
	struct cpumask mask;
	u8 bytes[8];
	int i;

	bitmap_from_u64(b, bits);
	cpumask_clear(&mask);
	for (i = 0; i < 64 && i < nr_cpu_ids; i++)
		if (cpus & (1ULL << i))
			cpumask_set_cpu(i, &mask);
	for (i = 0; i < 8; i++)
		bytes[i] = (bits >> (8 * i)) & 0xff;
	trace_tb_masks(seq, b, &mask, bytes, nbytes);
}

noinline void tracebed_emit_flags(u32 seq, unsigned long flags, int state)
{
	trace_tb_flags(seq, flags, state);
}

noinline void tracebed_emit_printk(u32 seq, s64 value, const char *s)
{
	trace_printk("tracebed_printk seq=%u value=%lld str=%s\n", seq, value, s);
}

noinline void tracebed_emit_puts(void)
{
	trace_puts("tracebed_puts\n");
}

/* Splits `line` into at most `max` space-separated words; returns how many. */
static int words(char *line, char **w, int max)
{
	int n = 0;
	char *tok;

	while ((tok = strsep(&line, " \t")) != NULL) {
		if (!*tok)
			continue;
		if (n == max)
			return max + 1;
		w[n++] = tok;
	}
	return n;
}

static int emit_ints(char **w, int n)
{
	u32 seq, u32v;
	u8 u8v;
	s8 s8v;
	u16 u16v;
	s16 s16v;
	s32 s32v;
	u64 u64v;
	s64 s64v;

	if (n != 9 || kstrtou32(w[0], 0, &seq) || kstrtou8(w[1], 0, &u8v) || kstrtos8(w[2], 0, &s8v) ||
	    kstrtou16(w[3], 0, &u16v) || kstrtos16(w[4], 0, &s16v) || kstrtou32(w[5], 0, &u32v) ||
	    kstrtos32(w[6], 0, &s32v) || kstrtou64(w[7], 0, &u64v) || kstrtos64(w[8], 0, &s64v))
		return -EINVAL;
	tracebed_emit_ints(seq, u8v, s8v, u16v, s16v, u32v, s32v, u64v, s64v);
	return 0;
}

static int emit_arrays(char **w, int n)
{
	u8 bytes[MAX_STR];
	u32 seq, words4[4];
	int i, nbytes = 0;

	if (n != 7 || kstrtou32(w[0], 0, &seq))
		return -EINVAL;
	for (i = 0; i < 4; i++)
		if (kstrtou32(w[2 + i], 0, &words4[i]))
			return -EINVAL;
	if (strcmp(w[6], "-")) {
		nbytes = strlen(w[6]) / 2;
		if (strlen(w[6]) % 2 || nbytes > MAX_STR || hex2bin(bytes, w[6], nbytes))
			return -EINVAL;
	}
	tracebed_emit_arrays(seq, w[1], words4, bytes, nbytes);
	return 0;
}

static int emit_strings(char **w, int n)
{
	u32 seq;
	int len;

	if (n != 3 || kstrtou32(w[0], 0, &seq) || kstrtoint(w[1], 0, &len) || len < 0 || strlen(w[2]) > MAX_STR)
		return -EINVAL;
	/* __string_len copies len bytes: never past the string. */
	len = min_t(int, len, strlen(w[2]));
	tracebed_emit_strings(seq, w[2], len, "v%u:%s", seq, w[2]);
	return 0;
}

static int emit_masks(char **w, int n)
{
	u32 seq;
	u64 bits, cpus;
	int nbytes;

	if (n != 4 || kstrtou32(w[0], 0, &seq) || kstrtou64(w[1], 0, &bits) || kstrtou64(w[2], 0, &cpus) ||
	    kstrtoint(w[3], 0, &nbytes) || nbytes < 0 || nbytes > 8)
		return -EINVAL;
	tracebed_emit_masks(seq, bits, cpus, nbytes);
	return 0;
}

static int emit_flags(char **w, int n)
{
	u32 seq;
	unsigned long flags;
	int state;

	if (n != 3 || kstrtou32(w[0], 0, &seq) || kstrtoul(w[1], 0, &flags) || kstrtoint(w[2], 0, &state))
		return -EINVAL;
	tracebed_emit_flags(seq, flags, state);
	return 0;
}

static int emit_printk(char **w, int n)
{
	u32 seq;
	s64 value;

	if (n != 3 || kstrtou32(w[0], 0, &seq) || kstrtos64(w[1], 0, &value))
		return -EINVAL;
	tracebed_emit_printk(seq, value, w[2]);
	return 0;
}

static int emit_line(char *line)
{
	char *w[10];
	int n = words(line, w, 10);

	if (n == 0)
		return 0;
	if (n > 10)
		return -EINVAL;
	if (!strcmp(w[0], "ints"))
		return emit_ints(w + 1, n - 1);
	if (!strcmp(w[0], "arrays"))
		return emit_arrays(w + 1, n - 1);
	if (!strcmp(w[0], "strings"))
		return emit_strings(w + 1, n - 1);
	if (!strcmp(w[0], "masks"))
		return emit_masks(w + 1, n - 1);
	if (!strcmp(w[0], "flags"))
		return emit_flags(w + 1, n - 1);
	if (!strcmp(w[0], "printk"))
		return emit_printk(w + 1, n - 1);
	if (!strcmp(w[0], "puts") && n == 1) {
		tracebed_emit_puts();
		return 0;
	}
	return -EINVAL;
}

static ssize_t emit_write(struct file *file, const char __user *ubuf, size_t count, loff_t *ppos)
{
	char *buf, *cursor, *line;
	int err = 0, line_no = 0;

	if (count > MAX_WRITE)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	cursor = buf;
	while (!err && (line = strsep(&cursor, "\n")) != NULL) {
		char copy[64];

		line_no++;
		strscpy(copy, line, sizeof(copy));
		err = emit_line(line);
		if (err)
			pr_warn("tracebed_events: emit line %d not understood: %s\n", line_no, copy);
	}
	kfree(buf);
	return err ? err : count;
}

static const struct file_operations emit_fops = {
	.owner = THIS_MODULE,
	.write = emit_write,
	.llseek = noop_llseek,
};

static int __init tracebed_events_init(void)
{
	dir = debugfs_create_dir("tracebed_events", NULL);
	debugfs_create_file("emit", 0200, dir, NULL, &emit_fops);
	tracebed_custom_init();
	return 0;
}

static void __exit tracebed_events_exit(void)
{
	debugfs_remove_recursive(dir);
}

module_init(tracebed_events_init);
module_exit(tracebed_events_exit);

MODULE_DESCRIPTION("tracebed's test events: every field kind, emitted on request");
MODULE_LICENSE("GPL");
