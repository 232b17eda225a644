// SPDX-License-Identifier: GPL-2.0
/*
 * tracebed_kprobes: a kprobe with a pre and a post handler on each function
 * of symbols= (up to 4, comma-separated), counting the calls made by tasks
 * named comm= (all tasks when empty), so that a test compares the counts
 * with the calls its workload made:
 *
 *   modprobe tracebed_kprobes symbols=ksys_lseek,__x64_sys_getpid comm=tracebed-probe-
 *   cat /sys/kernel/debug/tracebed_kprobes/hits     SYMBOL PRE POST, a line each
 *
 * A post handler makes a kprobe on an ftrace site use ftrace's IPMODIFY ops
 * (kernel/kprobes.c arm_kprobe_ftrace): the second such kprobe armed changes
 * the filter of an ops already enabled, the path ftrace.c checks for
 * IPMODIFY and direct-call conflicts. Nothing else in a kernel without
 * livepatch or BPF trampolines takes it.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#define MAX_PROBES 4

static char *symbols;
module_param(symbols, charp, 0444);
MODULE_PARM_DESC(symbols, "functions to probe, comma-separated (up to 4)");
static char *comm = "";
module_param(comm, charp, 0444);
MODULE_PARM_DESC(comm, "count only calls by tasks of this name (empty: every task)");

struct counted_probe {
	struct kprobe kp;
	atomic_long_t pre, post;
};

static struct counted_probe probes[MAX_PROBES];
static int nr_probes;
static struct dentry *dir;

static bool counts(void)
{
	return !comm[0] || strncmp(current->comm, comm, TASK_COMM_LEN) == 0;
}

static int pre_handler(struct kprobe *p, struct pt_regs *regs)
{
	if (counts())
		atomic_long_inc(&container_of(p, struct counted_probe, kp)->pre);
	return 0;
}

static void post_handler(struct kprobe *p, struct pt_regs *regs, unsigned long flags)
{
	if (counts())
		atomic_long_inc(&container_of(p, struct counted_probe, kp)->post);
}

static int hits_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < nr_probes; i++)
		seq_printf(m, "%s %ld %ld\n", probes[i].kp.symbol_name, atomic_long_read(&probes[i].pre),
			   atomic_long_read(&probes[i].post));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(hits);

static void unregister_all(void)
{
	while (nr_probes > 0)
		unregister_kprobe(&probes[--nr_probes].kp);
}

static int __init tracebed_kprobes_init(void)
{
	char *list = symbols, *name;
	int ret;

	if (!list || !*list)
		return -EINVAL;
	while ((name = strsep(&list, ",")) != NULL) {
		struct counted_probe *cp;

		if (!*name)
			continue;
		if (nr_probes == MAX_PROBES) {
			ret = -E2BIG;
			goto fail;
		}
		cp = &probes[nr_probes];
		cp->kp.symbol_name = name;
		cp->kp.pre_handler = pre_handler;
		cp->kp.post_handler = post_handler;
		ret = register_kprobe(&cp->kp);
		if (ret) {
			pr_warn("tracebed_kprobes: kprobe on %s: %d\n", name, ret);
			goto fail;
		}
		nr_probes++;
	}
	dir = debugfs_create_dir("tracebed_kprobes", NULL);
	debugfs_create_file("hits", 0444, dir, NULL, &hits_fops);
	return 0;
fail:
	unregister_all();
	return ret;
}

static void __exit tracebed_kprobes_exit(void)
{
	debugfs_remove_recursive(dir);
	unregister_all();
}

module_init(tracebed_kprobes_init);
module_exit(tracebed_kprobes_exit);

MODULE_DESCRIPTION("tracebed's counted kprobes with post handlers");
MODULE_LICENSE("GPL");
