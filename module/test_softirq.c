// SPDX-License-Identifier: GPL-2.0
/*
 * Softirq benchmark module: what softirq work costs a real-time task.
 *
 * Commands are written to /sys/kernel/debug/test_softirq/control and the
 * outcome of the last one is read from .../result, one "key=value" line per
 * command, so that a shell script can collect it:
 *
 *   victim <cpu> <load> <msecs>
 *	A SCHED_FIFO thread on <cpu> disables BH, raises work of its own,
 *	keeps BH disabled for SECTION_US and re-enables it, over and over.
 *	Reports the duration of the whole section, of local_bh_disable() and
 *	of local_bh_enable() (p50/p99/p99.9/max), the foreign handlers the
 *	thread ran, and what it paid for foreign work outside its context:
 *	the sections in which it blocked (on the BH lock or a callback lock),
 *	the time that took less the foreign handlers it ran itself meanwhile
 *	(in all, and p99 and max of the sections which blocked: the bound
 *	per section), and the foreign handlers which ran boosted (in all, and
 *	the most in one blocked section), and from the earliest end of
 *	each sleep between two sections (SLEEP_MIN_US) to the end of the
 *	section after it (resp_*: the wait for the CPU, the section and any
 *	route within it, and whatever of the sleep's slack the timer
 *	used), and what made the sections longer (the most foreign handlers
 *	run in one section, the sections with more than one, and the rest_*
 *	percentiles of each section less its delay, the handlers it ran and
 *	its blocked time; of the sections which did not block, those
 *	during which ksoftirqd was woken, how many during local_bh_enable(),
 *	the softirqs but its own pending at the end of their delay, and
 *	their rest and local_bh_enable() against the other sections').
 *	Each
 *	<load> but "none" runs a hard interrupt timer at 2 kHz on the same CPU:
 *	  0 none	no timer; own work is a TASKLET_SOFTIRQ tasklet
 *	  1 hi		the timer schedules a foreign HI tasklet (50 us)
 *	  2 control	the timer raises nothing: the cost of the interrupt
 *	  3 tasklet	a foreign tasklet on the thread's own vector
 *	  4 net_rx	own work is a NAPI instance of a dummy netdev, the
 *			timer schedules a foreign one (50 us): both NET_RX
 *	  5 net_rx_control  own NAPI, the timer raises nothing
 *	.../histogram then holds the three durations of that run in 1 us
 *	buckets, "<us> <section> <disable> <enable>" per non-empty bucket,
 *	so that the whole distribution can be plotted, not only the
 *	percentiles.
 *
 *   cycle <cpu> <loops> [<raise>]
 *	Cost of a local_bh_disable(); tasklet_schedule(); local_bh_enable()
 *	cycle in a SCHED_FIFO thread on <cpu>, in picoseconds. With <raise>
 *	0, of a local_bh_disable(); local_bh_enable() cycle which raises
 *	nothing, what most BH disabled sections (spin_lock_bh()) are.
 *
 *   storm <cpu> <0|1>
 *	Start or stop background softirq load on <cpu> for userspace
 *	benchmarks: the hard interrupt raised HI tasklet above, a soft hrtimer
 *	at 1 kHz and a timer_list timer every jiffy.
 *
 *   bhwq <cpu> <0|1|2>
 *	Stop (0) or start BH workqueue load on <cpu>: a work item on
 *	system_bh_wq, doing the same 50 us of foreign work, queued there at
 *	about 2 kHz by a SCHED_OTHER kthread bound to <cpu> (1: process
 *	context, outside any BH section) or by the thread of a threaded
 *	interrupt moved to <cpu>, with BH disabled as a forced-threaded
 *	handler is on PREEMPT_RT (2). make run's bhwq raisers.
 *
 *   stress <0|1>
 *	Start or stop raising softirqs on every CPU from every context: a task
 *	in a BH disabled section, a task outside of one, hard interrupts
 *	(hrtimer, irq_work), softirq handlers and a threaded interrupt
 *	handler, on the HI, TASKLET, NET_RX (NAPI) and TIMER paths. Stopping
 *	waits for what was raised and reports, per path, how many work items
 *	were raised and handled: the two must be equal. Meant to run for a
 *	long time together with CPU hotplug and other load.
 *
 * Processing a vector runs everything queued on it, whoever queued it, so
 * own and foreign work on one vector ("tasklet", "net_rx") measure what
 * vector granularity costs; "hi" keeps them on different vectors.
 *
 * An external module of the softirq-rt project, never part of the posted
 * series: one source for the 7.3 and the 6.12 line, built against the
 * baseline and the patched kernel alike (module/Makefile).
 */

#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_sim.h>
#include <linux/irq_work.h>
#include <linux/irqdomain.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/version.h>
#include <linux/workqueue.h>

/* The threaded interrupt of the stress mode is a simulated one. */
#if !IS_ENABLED(CONFIG_IRQ_SIM)
#error "test_softirq needs CONFIG_IRQ_SIM=y (selected by SOFTIRQ_KUNIT_TEST or GPIO_SIM)"
#endif

/* 6.12 names of what later kernels renamed. */
#ifndef timer_container_of
#define timer_container_of(var, t, field)	from_timer(var, t, field)
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*fn)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
}
#endif

#define FOREIGN_PERIOD_NS	(500 * NSEC_PER_USEC)	/* 2 kHz */
#define FOREIGN_WORK_US		50
#define OWN_WORK_US		2
#define SECTION_US		100
#define SLEEP_MIN_US		200
#define SLEEP_MAX_US		300
#define SOFT_PERIOD_NS		NSEC_PER_MSEC
#define MAX_MSECS		600000
#define MAX_LOOPS		10000000
#define MAX_SAMPLES		BIT(20)
#define RESULT_SIZE		2048

static DEFINE_MUTEX(tsq_lock);
static char tsq_result[RESULT_SIZE];

/*
 * The sorted samples of the last victim run, kept for .../histogram until
 * the next one: binning them at read time costs the victim nothing and
 * loses no resolution. Protected by tsq_lock.
 */
static struct {
	u32		*full, *disable, *enable;
	unsigned int	nr;
} tsq_hist;
static struct dentry *tsq_dir;

enum tsq_load {
	LOAD_NONE, LOAD_HI, LOAD_CONTROL, LOAD_TASKLET, LOAD_NET_RX,
	LOAD_NET_RX_CONTROL, NR_LOADS
};

static const char * const load_name[NR_LOADS] = {
	"none", "hi", "control", "tasklet", "net_rx", "net_rx_control"
};

/* Hard interrupt raised foreign work, of the kind foreign_mode says. */
static struct hrtimer foreign_timer;
static struct tasklet_struct foreign_tasklet;
static int foreign_mode = LOAD_HI;
static atomic_t foreign_fired;
static atomic_t foreign_runs;
static atomic_t foreign_boosted;

/* NAPI instances of the NET_RX loads. */
static struct net_device *victim_netdev;
static struct napi_struct own_napi;
static struct napi_struct foreign_napi;

/* Soft timer load for the storm. */
static struct hrtimer soft_timer;
static struct timer_list jiffy_timer;
static atomic_t soft_runs;
static atomic_t jiffy_runs;
static int storm_cpu = -1;

/* The thread under test and its own work. */
static struct task_struct *victim;
static struct tasklet_struct own_tasklet;
static atomic_t own_runs;
static atomic_t own_in_victim;
static atomic_t foreign_in_victim;

static void foreign_work(void)
{
	if (current == READ_ONCE(victim))
		atomic_inc(&foreign_in_victim);
	udelay(FOREIGN_WORK_US);
	/*
	 * A higher priority task waited for this context and lent it its
	 * priority: the foreign work was paid for by that task, the victim
	 * being the only one on the CPU.
	 */
	if (current->prio < current->normal_prio)
		atomic_inc(&foreign_boosted);
	atomic_inc(&foreign_runs);
}

static void foreign_fn(struct tasklet_struct *t)
{
	foreign_work();
}

static enum hrtimer_restart foreign_timer_fn(struct hrtimer *t)
{
	atomic_inc(&foreign_fired);
	switch (READ_ONCE(foreign_mode)) {
	case LOAD_HI:
		tasklet_hi_schedule(&foreign_tasklet);
		break;
	case LOAD_TASKLET:
		tasklet_schedule(&foreign_tasklet);
		break;
	case LOAD_NET_RX:
		napi_schedule(&foreign_napi);
		break;
	default:
		break;
	}
	hrtimer_forward_now(t, ns_to_ktime(FOREIGN_PERIOD_NS));
	return HRTIMER_RESTART;
}

static void own_work(void)
{
	if (current == READ_ONCE(victim))
		atomic_inc(&own_in_victim);
	atomic_inc(&own_runs);
	udelay(OWN_WORK_US);
}

static void own_fn(struct tasklet_struct *t)
{
	own_work();
}

static int victim_poll(struct napi_struct *napi, int budget)
{
	if (napi == &foreign_napi)
		foreign_work();
	else
		own_work();
	napi_complete_done(napi, 0);
	return 0;
}

static struct tasklet_struct noop_tasklet;

static void noop_fn(struct tasklet_struct *t)
{
	atomic_inc(&own_runs);
}

static enum hrtimer_restart soft_timer_fn(struct hrtimer *t)
{
	atomic_inc(&soft_runs);
	hrtimer_forward_now(t, ns_to_ktime(SOFT_PERIOD_NS));
	return HRTIMER_RESTART;
}

static void jiffy_timer_fn(struct timer_list *t)
{
	atomic_inc(&jiffy_runs);
	mod_timer(t, jiffies + 1);
}

/* Pinned timers are started on the CPU they are pinned to. */
static void start_foreign_fn(void *unused)
{
	hrtimer_start(&foreign_timer, ns_to_ktime(FOREIGN_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void start_soft_fn(void *unused)
{
	hrtimer_start(&soft_timer, ns_to_ktime(SOFT_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_SOFT);
}

static void foreign_load(int cpu, bool on)
{
	if (on) {
		smp_call_function_single(cpu, start_foreign_fn, NULL, 1);
		return;
	}
	hrtimer_cancel(&foreign_timer);
	/* A tasklet raised by the last expiry is still owed a run. */
	tasklet_unlock_wait(&foreign_tasklet);
	while (test_bit(TASKLET_STATE_SCHED, &foreign_tasklet.state))
		usleep_range(100, 200);
}

/*
 * Threads under test run at SCHED_FIFO and are bound to one CPU. The
 * creator waits for @done and then stops the thread, which parks in
 * tsq_thread_idle() so that kthread_stop() always finds it alive.
 */
struct tsq_thread {
	struct completion	done;
	int			cpu;
	bool			abort;
	/* victim: durations of the section, its disable and its enable */
	u64			deadline;
	bool			own_napi;
	u32			*samples;
	u32			*samples_disable;
	u32			*samples_enable;
	unsigned int		nr_samples;
	unsigned int		max_samples;
	unsigned int		blocked;
	u64			blocked_ns;
	/* what each section which blocked waited in all */
	u32			*samples_blocked;
	unsigned int		nr_blocked;
	/* foreign handlers run boosted in one such section: most, above one */
	unsigned int		blocked_boosted_max;
	unsigned int		blocked_boosted_over1;
	unsigned int		preempted;
	/*
	 * From the earliest end of each sleep to the end of the next
	 * section: what the victim waits by any route, for the CPU as well
	 * as in its section (includes the timer's slack, alike in both
	 * kernels).
	 */
	u32			*samples_resp;
	unsigned int		nr_resp;
	u64			resp_ns;
	/*
	 * What made a section longer: the foreign handlers the victim ran in
	 * one (most, sections with more than one) and what is left of each
	 * section less its delay, the own and foreign handlers it ran and
	 * the time it blocked: softirq and lock machinery, and hard
	 * interrupts outside the udelay()s (which wait by the clock, so an
	 * interrupt within one is absorbed).
	 */
	unsigned int		foreign_section_max;
	unsigned int		foreign_sections_over1;
	u32			*samples_rest;
	/*
	 * Of the sections in which the victim did not block (nothing else
	 * ran on the CPU meanwhile): those during which ksoftirqd was woken,
	 * those in whose local_bh_enable() it was, the softirqs pending other
	 * than its own at the end of their delay, and the rest and the
	 * local_bh_enable() of those ("woke") and of the others ("quiet"):
	 * what a wake-up of ksoftirqd costs the victim.
	 */
	struct task_struct	*ksoftirqd;
	unsigned int		ksoftirqd_woken;
	unsigned int		ksoftirqd_woken_enable;
	unsigned int		woke_pending[NR_SOFTIRQS];
	unsigned int		woke_pending_none;
	u32			*samples_rest_woke;
	u32			*samples_en_woke;
	u32			*samples_rest_quiet;
	u32			*samples_en_quiet;
	unsigned int		nr_quiet;
	/* cycle */
	unsigned int		loops;
	bool			raise;
	u64			elapsed_ns;
};

static void tsq_thread_idle(struct tsq_thread *tt)
{
	complete(&tt->done);
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

static u32 tsq_ns(u64 from, u64 to)
{
	return min_t(u64, to - from, U32_MAX);
}

/*
 * ksoftirqd sleeps in TASK_INTERRUPTIBLE and its wake-up makes it
 * TASK_RUNNING; whether it is queued says less (a delayed dequeue keeps a
 * sleeping fair task queued). While the victim holds the CPU ksoftirqd
 * cannot run there, so a change of state meanwhile is a wake-up.
 */
static bool ksoftirqd_asleep(struct tsq_thread *tt)
{
	return READ_ONCE(tt->ksoftirqd->__state) != TASK_RUNNING;
}

/* Section @n did not block: file it as one which woke ksoftirqd or not. */
static void tsq_record_wake(struct tsq_thread *tt, unsigned int n, bool woke,
			    bool in_enable, u32 pending)
{
	unsigned int i;

	if (!woke) {
		tt->samples_rest_quiet[tt->nr_quiet] = tt->samples_rest[n];
		tt->samples_en_quiet[tt->nr_quiet++] = tt->samples_enable[n];
		return;
	}
	tt->samples_rest_woke[tt->ksoftirqd_woken] = tt->samples_rest[n];
	tt->samples_en_woke[tt->ksoftirqd_woken++] = tt->samples_enable[n];
	tt->ksoftirqd_woken_enable += in_enable;
	pending &= ~BIT(tt->own_napi ? NET_RX_SOFTIRQ : TASKLET_SOFTIRQ);
	tt->woke_pending_none += !pending;
	for (i = 0; i < NR_SOFTIRQS; i++)
		tt->woke_pending[i] += !!(pending & BIT(i));
}

/*
 * Nothing in the section sleeps on purpose, so a voluntary context switch
 * in local_bh_disable() or local_bh_enable() is the victim blocking on a
 * lock (the BH lock, a tasklet callback lock) and boosting its holder.
 */
static int victim_fn(void *arg)
{
	struct tsq_thread *tt = arg;
	unsigned long nvcsw, nivcsw;
	u64 t0, t1, t2, t3, ran_ns, waited, explained, wake_at = 0;
	unsigned int n, boosted, nr_foreign, nr_own;
	bool blocked, ksd_asleep, ksd_asleep_enable, ksd_awake;
	int ran, own_ran, foreign0, own0;
	u32 pending;

	while (ktime_get_ns() < tt->deadline &&
	       tt->nr_samples < tt->max_samples && !READ_ONCE(tt->abort)) {
		nvcsw = current->nvcsw;
		nivcsw = current->nivcsw;
		boosted = atomic_read(&foreign_boosted);
		foreign0 = atomic_read(&foreign_in_victim);
		own0 = atomic_read(&own_in_victim);
		ksd_asleep = ksoftirqd_asleep(tt);
		t0 = ktime_get_ns();
		local_bh_disable();
		t1 = ktime_get_ns();
		waited = 0;
		blocked = current->nvcsw != nvcsw;
		if (blocked) {
			tt->blocked++;
			waited = t1 - t0;
		}
		if (tt->own_napi)
			napi_schedule(&own_napi);
		else
			tasklet_schedule(&own_tasklet);
		udelay(SECTION_US);
		nvcsw = current->nvcsw;
		ran = atomic_read(&foreign_in_victim);
		own_ran = atomic_read(&own_in_victim);
		ksd_asleep_enable = ksoftirqd_asleep(tt);
		pending = local_softirq_pending();
		t2 = ktime_get_ns();
		local_bh_enable();
		t3 = ktime_get_ns();
		ksd_awake = !ksoftirqd_asleep(tt);
		if (current->nvcsw != nvcsw) {
			/*
			 * The handlers the victim ran itself in this
			 * local_bh_enable() are counted already: the blocked
			 * time is the rest of it.
			 */
			ran_ns = ((u64)(atomic_read(&foreign_in_victim) - ran) *
				  FOREIGN_WORK_US +
				  (u64)(atomic_read(&own_in_victim) - own_ran) *
				  OWN_WORK_US) * NSEC_PER_USEC;
			tt->blocked++;
			waited += t3 - t2 > ran_ns ? t3 - t2 - ran_ns : 0;
			blocked = true;
		}
		if (blocked) {
			tt->blocked_ns += waited;
			tt->samples_blocked[tt->nr_blocked++] = tsq_ns(0, waited);
			boosted = atomic_read(&foreign_boosted) - boosted;
			tt->blocked_boosted_max = max(tt->blocked_boosted_max,
						      boosted);
			tt->blocked_boosted_over1 += boosted > 1;
		}
		tt->preempted += current->nivcsw != nivcsw;
		n = tt->nr_samples++;
		tt->samples[n] = tsq_ns(t0, t3);
		tt->samples_disable[n] = tsq_ns(t0, t1);
		tt->samples_enable[n] = tsq_ns(t2, t3);
		nr_foreign = atomic_read(&foreign_in_victim) - foreign0;
		nr_own = atomic_read(&own_in_victim) - own0;
		tt->foreign_section_max = max(tt->foreign_section_max,
					      nr_foreign);
		tt->foreign_sections_over1 += nr_foreign > 1;
		explained = (SECTION_US + (u64)nr_foreign * FOREIGN_WORK_US +
			     (u64)nr_own * OWN_WORK_US) * NSEC_PER_USEC + waited;
		tt->samples_rest[n] = t3 - t0 > explained ?
				      tsq_ns(explained, t3 - t0) : 0;
		if (!blocked)
			tsq_record_wake(tt, n, ksd_asleep && ksd_awake,
					ksd_asleep_enable && ksd_awake,
					pending);
		if (wake_at) {
			waited = t3 > wake_at ? t3 - wake_at : 0;
			tt->samples_resp[tt->nr_resp++] = tsq_ns(0, waited);
			tt->resp_ns += waited;
		}
		wake_at = ktime_get_ns() + SLEEP_MIN_US * NSEC_PER_USEC;
		usleep_range(SLEEP_MIN_US, SLEEP_MAX_US);
	}
	tsq_thread_idle(tt);
	return 0;
}

static int cycle_fn(void *arg)
{
	struct tsq_thread *tt = arg;
	unsigned int i;
	u64 t0;

	t0 = ktime_get_ns();
	if (tt->raise) {
		for (i = 0; i < tt->loops && !READ_ONCE(tt->abort); i++) {
			local_bh_disable();
			tasklet_schedule(&noop_tasklet);
			local_bh_enable();
		}
	} else {
		for (i = 0; i < tt->loops && !READ_ONCE(tt->abort); i++) {
			local_bh_disable();
			barrier();
			local_bh_enable();
		}
	}
	tt->elapsed_ns = ktime_get_ns() - t0;
	tsq_thread_idle(tt);
	return 0;
}

static int tsq_run_thread(int (*fn)(void *), struct tsq_thread *tt,
			  const char *name)
{
	struct task_struct *tsk;
	int ret;

	init_completion(&tt->done);
	tsk = kthread_create(fn, tt, "%s/%d", name, tt->cpu);
	if (IS_ERR(tsk))
		return PTR_ERR(tsk);
	kthread_bind(tsk, tt->cpu);
	sched_set_fifo(tsk);
	get_task_struct(tsk);
	WRITE_ONCE(victim, tsk);
	wake_up_process(tsk);
	ret = wait_for_completion_killable(&tt->done);
	if (ret) {
		WRITE_ONCE(tt->abort, true);
		wait_for_completion(&tt->done);
	}
	kthread_stop(tsk);
	WRITE_ONCE(victim, NULL);
	put_task_struct(tsk);
	return ret;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* @per_10k of 10000 samples in the sorted @s are at or below the result. */
static u32 percentile(const u32 *s, unsigned int n, unsigned int per_10k)
{
	if (!n)
		return 0;
	return s[min_t(u64, (u64)n * per_10k / 10000, n - 1)];
}

struct tsq_pct {
	u32	p50, p99, p999, max;
};

static struct tsq_pct tsq_percentiles(u32 *s, unsigned int n)
{
	sort(s, n, sizeof(u32), cmp_u32, NULL);
	return (struct tsq_pct) {
		.p50	= percentile(s, n, 5000),
		.p99	= percentile(s, n, 9900),
		.p999	= percentile(s, n, 9990),
		.max	= n ? s[n - 1] : 0,
	};
}

static void tsq_hist_free(void)
{
	vfree(tsq_hist.full);
	vfree(tsq_hist.disable);
	vfree(tsq_hist.enable);
	memset(&tsq_hist, 0, sizeof(tsq_hist));
}

static void victim_napi_free(void)
{
	if (!victim_netdev)
		return;
	napi_disable(&own_napi);
	napi_disable(&foreign_napi);
	netif_napi_del(&own_napi);
	netif_napi_del(&foreign_napi);
	free_netdev(victim_netdev);
	victim_netdev = NULL;
}

static int victim_napi_alloc(void)
{
	victim_netdev = alloc_netdev_dummy(0);
	if (!victim_netdev)
		return -ENOMEM;
	netif_napi_add(victim_netdev, &own_napi, victim_poll);
	netif_napi_add(victim_netdev, &foreign_napi, victim_poll);
	napi_enable(&own_napi);
	napi_enable(&foreign_napi);
	return 0;
}

/* ksoftirqd of @cpu, referenced: the kernel does not export its pointer */
static struct task_struct *ksoftirqd_of(int cpu)
{
	struct task_struct *p, *found = NULL;
	char comm[TASK_COMM_LEN];

	snprintf(comm, sizeof(comm), "ksoftirqd/%d", cpu);
	rcu_read_lock();
	for_each_process(p) {
		if ((p->flags & PF_KTHREAD) && !strcmp(p->comm, comm)) {
			found = get_task_struct(p);
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* softirq_to_name[] is not exported to modules */
static const char * const vec_name[] = {
	"HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
	"SCHED", "HRTIMER", "RCU",
};

/* "SCHED:498,none:6": the woken sections by softirq pending but its own */
static void tsq_woke_pending(struct tsq_thread *tt, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(vec_name) != NR_SOFTIRQS);
	for (i = 0; i < NR_SOFTIRQS; i++)
		if (tt->woke_pending[i])
			len += scnprintf(buf + len, size - len, "%s:%u,",
					 vec_name[i], tt->woke_pending[i]);
	scnprintf(buf + len, size - len, "none:%u", tt->woke_pending_none);
}

/* The per-section parts' samples and ksoftirqd; 0 or -ENOMEM, -ESRCH */
static int tsq_parts_alloc(struct tsq_thread *tt)
{
	tt->samples_rest = vmalloc_array(tt->max_samples, sizeof(u32));
	tt->samples_rest_woke = vmalloc_array(tt->max_samples, sizeof(u32));
	tt->samples_en_woke = vmalloc_array(tt->max_samples, sizeof(u32));
	tt->samples_rest_quiet = vmalloc_array(tt->max_samples, sizeof(u32));
	tt->samples_en_quiet = vmalloc_array(tt->max_samples, sizeof(u32));
	if (!tt->samples_rest || !tt->samples_rest_woke ||
	    !tt->samples_en_woke || !tt->samples_rest_quiet ||
	    !tt->samples_en_quiet)
		return -ENOMEM;
	tt->ksoftirqd = ksoftirqd_of(tt->cpu);
	return tt->ksoftirqd ? 0 : -ESRCH;
}

static void tsq_parts_free(struct tsq_thread *tt)
{
	vfree(tt->samples_rest);
	vfree(tt->samples_rest_woke);
	vfree(tt->samples_en_woke);
	vfree(tt->samples_rest_quiet);
	vfree(tt->samples_en_quiet);
	if (tt->ksoftirqd)
		put_task_struct(tt->ksoftirqd);
}

static int cmd_victim(int cpu, int load, int msecs)
{
	struct tsq_thread tt = { .cpu = cpu };
	struct tsq_pct full, dis, en, bl, resp, rest, rest_woke, en_woke;
	struct tsq_pct rest_quiet, en_quiet;
	char woke_pending[160];
	unsigned int fired, runs;
	int ret = -ENOMEM;

	tsq_hist_free();
	/* One sample per sleep at most, plus some slack. */
	tt.max_samples = min_t(unsigned int, MAX_SAMPLES,
			       msecs * (USEC_PER_MSEC / SLEEP_MIN_US) + 16);
	tt.samples = vmalloc_array(tt.max_samples, sizeof(*tt.samples));
	tt.samples_disable = vmalloc_array(tt.max_samples, sizeof(u32));
	tt.samples_enable = vmalloc_array(tt.max_samples, sizeof(u32));
	tt.samples_blocked = vmalloc_array(tt.max_samples, sizeof(u32));
	tt.samples_resp = vmalloc_array(tt.max_samples, sizeof(u32));
	if (!tt.samples || !tt.samples_disable || !tt.samples_enable ||
	    !tt.samples_blocked || !tt.samples_resp)
		goto out;
	ret = tsq_parts_alloc(&tt);
	if (ret)
		goto out;
	tt.own_napi = load == LOAD_NET_RX || load == LOAD_NET_RX_CONTROL;
	if (tt.own_napi) {
		ret = victim_napi_alloc();
		if (ret)
			goto out;
	}

	atomic_set(&own_runs, 0);
	atomic_set(&own_in_victim, 0);
	atomic_set(&foreign_in_victim, 0);
	atomic_set(&foreign_runs, 0);
	atomic_set(&foreign_fired, 0);
	atomic_set(&foreign_boosted, 0);
	WRITE_ONCE(foreign_mode, load);
	if (load != LOAD_NONE)
		foreign_load(cpu, true);

	tt.deadline = ktime_get_ns() + (u64)msecs * NSEC_PER_MSEC;
	ret = tsq_run_thread(victim_fn, &tt, "tsq_victim");

	if (load != LOAD_NONE)
		foreign_load(cpu, false);
	/* Own work left behind by the last section, if any. */
	tasklet_unlock_wait(&own_tasklet);
	victim_napi_free();
	WRITE_ONCE(foreign_mode, LOAD_HI);
	if (ret)
		goto out;

	fired = atomic_read(&foreign_fired);
	runs = atomic_read(&foreign_runs);
	full = tsq_percentiles(tt.samples, tt.nr_samples);
	dis = tsq_percentiles(tt.samples_disable, tt.nr_samples);
	en = tsq_percentiles(tt.samples_enable, tt.nr_samples);
	bl = tsq_percentiles(tt.samples_blocked, tt.nr_blocked);
	resp = tsq_percentiles(tt.samples_resp, tt.nr_resp);
	rest = tsq_percentiles(tt.samples_rest, tt.nr_samples);
	rest_woke = tsq_percentiles(tt.samples_rest_woke, tt.ksoftirqd_woken);
	en_woke = tsq_percentiles(tt.samples_en_woke, tt.ksoftirqd_woken);
	rest_quiet = tsq_percentiles(tt.samples_rest_quiet, tt.nr_quiet);
	en_quiet = tsq_percentiles(tt.samples_en_quiet, tt.nr_quiet);
	tsq_woke_pending(&tt, woke_pending, sizeof(woke_pending));
	vfree(tt.samples_blocked);
	vfree(tt.samples_resp);
	tsq_parts_free(&tt);
	scnprintf(tsq_result, sizeof(tsq_result),
		  "victim cpu=%d load=%d load_name=%s samples=%u p50_ns=%u p99_ns=%u p999_ns=%u max_ns=%u full_p50_ns=%u full_p99_ns=%u full_p999_ns=%u full_max_ns=%u dis_p50_ns=%u dis_p99_ns=%u dis_p999_ns=%u dis_max_ns=%u blocked=%u blocked_ns=%llu blocked_sections=%u blocked_p99_ns=%u blocked_max_ns=%u blocked_boosted_max=%u blocked_boosted_over1=%u preempted=%u foreign_in_victim=%d foreign_boosted=%d own_in_victim=%d own_runs=%d foreign_fired=%u foreign_runs=%u foreign_work_us=%u resp_n=%u resp_ns=%llu resp_p50_ns=%u resp_p99_ns=%u resp_p999_ns=%u resp_max_ns=%u foreign_section_max=%u foreign_sections_over1=%u rest_p50_ns=%u rest_p99_ns=%u rest_p999_ns=%u rest_max_ns=%u ksoftirqd_woken=%u ksoftirqd_woken_enable=%u woke_pending=%s rest_woke_p50_ns=%u rest_woke_p99_ns=%u rest_woke_max_ns=%u en_woke_p50_ns=%u en_woke_p99_ns=%u en_woke_max_ns=%u quiet_n=%u rest_quiet_p50_ns=%u rest_quiet_p99_ns=%u rest_quiet_p999_ns=%u rest_quiet_max_ns=%u en_quiet_p50_ns=%u en_quiet_p99_ns=%u en_quiet_p999_ns=%u en_quiet_max_ns=%u\n",
		  cpu, load, load_name[load], tt.nr_samples,
		  en.p50, en.p99, en.p999, en.max,
		  full.p50, full.p99, full.p999, full.max,
		  dis.p50, dis.p99, dis.p999, dis.max,
		  tt.blocked, tt.blocked_ns, tt.nr_blocked, bl.p99, bl.max,
		  tt.blocked_boosted_max, tt.blocked_boosted_over1, tt.preempted,
		  atomic_read(&foreign_in_victim), atomic_read(&foreign_boosted),
		  atomic_read(&own_in_victim), atomic_read(&own_runs), fired, runs,
		  FOREIGN_WORK_US, tt.nr_resp, tt.resp_ns, resp.p50, resp.p99,
		  resp.p999, resp.max, tt.foreign_section_max,
		  tt.foreign_sections_over1, rest.p50, rest.p99, rest.p999,
		  rest.max, tt.ksoftirqd_woken, tt.ksoftirqd_woken_enable,
		  woke_pending, rest_woke.p50, rest_woke.p99, rest_woke.max,
		  en_woke.p50, en_woke.p99, en_woke.max, tt.nr_quiet,
		  rest_quiet.p50, rest_quiet.p99, rest_quiet.p999,
		  rest_quiet.max, en_quiet.p50, en_quiet.p99, en_quiet.p999,
		  en_quiet.max);
	tsq_hist.full = tt.samples;
	tsq_hist.disable = tt.samples_disable;
	tsq_hist.enable = tt.samples_enable;
	tsq_hist.nr = tt.nr_samples;
	return 0;
out:
	vfree(tt.samples);
	vfree(tt.samples_disable);
	vfree(tt.samples_enable);
	vfree(tt.samples_blocked);
	vfree(tt.samples_resp);
	tsq_parts_free(&tt);
	return ret;
}

static int cmd_cycle(int cpu, int loops, bool raise)
{
	struct tsq_thread tt = { .cpu = cpu, .loops = loops, .raise = raise };
	int ret;

	atomic_set(&own_runs, 0);
	ret = tsq_run_thread(cycle_fn, &tt, "tsq_cycle");
	tasklet_unlock_wait(&noop_tasklet);
	if (ret)
		return ret;

	scnprintf(tsq_result, sizeof(tsq_result),
		  "%s cpu=%d loops=%u cycle_ps=%llu runs=%d\n",
		  raise ? "cycle" : "cycle_noraise", cpu, loops,
		  div_u64(tt.elapsed_ns * 1000, loops), atomic_read(&own_runs));
	return 0;
}

static void storm_stop(void)
{
	if (storm_cpu < 0)
		return;
	foreign_load(storm_cpu, false);
	hrtimer_cancel(&soft_timer);
	timer_delete_sync(&jiffy_timer);
	storm_cpu = -1;
}

static int cmd_storm(int cpu, int on)
{
	if (!on) {
		if (storm_cpu < 0)
			return -EINVAL;
		scnprintf(tsq_result, sizeof(tsq_result),
			  "storm cpu=%d foreign_fired=%d foreign_runs=%d soft_timer_runs=%d jiffy_timer_runs=%d\n",
			  storm_cpu, atomic_read(&foreign_fired),
			  atomic_read(&foreign_runs), atomic_read(&soft_runs),
			  atomic_read(&jiffy_runs));
		storm_stop();
		return 0;
	}
	if (storm_cpu >= 0)
		return -EBUSY;

	atomic_set(&foreign_fired, 0);
	atomic_set(&foreign_runs, 0);
	atomic_set(&soft_runs, 0);
	atomic_set(&jiffy_runs, 0);
	storm_cpu = cpu;
	foreign_load(cpu, true);
	smp_call_function_single(cpu, start_soft_fn, NULL, 1);
	jiffy_timer.expires = jiffies + 1;
	add_timer_on(&jiffy_timer, cpu);
	scnprintf(tsq_result, sizeof(tsq_result), "storm cpu=%d started\n", cpu);
	return 0;
}

/*
 * Stress mode. Every work item is raised only once it has been handled
 * (@armed), so no raise is swallowed by one still pending and "raised"
 * must equal "handled" once everything raised has run, whatever the
 * context and the CPU did.
 */
enum stress_path { SP_HI, SP_TASKLET, SP_NET_RX, SP_TIMER, NR_SP };
enum stress_ctx { SC_BH, SC_TASK, SC_HARDIRQ, SC_SOFTIRQ, SC_THREADED, NR_SC };

static const char * const stress_path_name[NR_SP] = {
	"hi", "tasklet", "net_rx", "timer"
};

static const char * const stress_ctx_name[NR_SC] = {
	"bh", "task", "hardirq", "softirq", "threaded"
};

#define STRESS_HARD_PERIOD_NS	NSEC_PER_MSEC
#define STRESS_DRAIN_MS		10000

struct stress_item {
	atomic_t		armed;
	enum stress_path	path;
	enum stress_ctx		ctx;
	int			slot;
	union {
		struct tasklet_struct	tasklet;
		struct napi_struct	napi;
		struct timer_list	timer;
	};
};

/* One slot per possible CPU: its hrtimer and irq_work, and two raisers. */
struct stress_slot {
	struct stress_item	item[NR_SC][NR_SP];
	struct task_struct	*bh_thread;
	struct task_struct	*task_thread;
	struct hrtimer		timer;
	struct irq_work		irq_work;
	int			cpu;
};

static struct stress_slot *stress_slots;
static struct net_device *stress_netdev;
static struct irq_domain *stress_domain;
static int stress_virq;
static bool stress_on;
static bool stress_stopping;
static atomic64_t stress_raised[NR_SP];
static atomic64_t stress_handled[NR_SP];
static atomic64_t stress_ctx_raised[NR_SC];

static void stress_raise(struct stress_item *it)
{
	if (atomic_cmpxchg(&it->armed, 0, 1))
		return;
	atomic64_inc(&stress_raised[it->path]);
	atomic64_inc(&stress_ctx_raised[it->ctx]);
	switch (it->path) {
	case SP_HI:
		tasklet_hi_schedule(&it->tasklet);
		break;
	case SP_TASKLET:
		tasklet_schedule(&it->tasklet);
		break;
	case SP_NET_RX:
		napi_schedule(&it->napi);
		break;
	default:
		mod_timer(&it->timer, jiffies + 1);
		break;
	}
}

/*
 * NAPI may be scheduled only where the NET_RX softirq is sure to be run:
 * in interrupt context or with BH disabled, so a task outside of a BH
 * disabled section does not raise it.
 */
static void stress_raise_ctx(struct stress_slot *sl, enum stress_ctx ctx)
{
	int p;

	if (READ_ONCE(stress_stopping))
		return;
	for (p = 0; p < NR_SP; p++) {
		if (ctx == SC_TASK && p == SP_NET_RX)
			continue;
		stress_raise(&sl->item[ctx][p]);
	}
}

static struct stress_slot *stress_this_slot(void)
{
	return &stress_slots[raw_smp_processor_id()];
}

static void stress_handled_one(struct stress_item *it)
{
	atomic64_inc(&stress_handled[it->path]);
	atomic_set_release(&it->armed, 0);
}

static void stress_tasklet_fn(struct tasklet_struct *t)
{
	struct stress_item *it = from_tasklet(it, t, tasklet);

	/* Raise from softirq context: the HI handlers raise on all paths. */
	if (it->path == SP_HI && it->ctx != SC_SOFTIRQ)
		stress_raise_ctx(stress_this_slot(), SC_SOFTIRQ);
	stress_handled_one(it);
}

static int stress_poll(struct napi_struct *napi, int budget)
{
	struct stress_item *it = container_of(napi, struct stress_item, napi);

	/* Complete first: a raise in between would find NAPI still scheduled. */
	napi_complete_done(napi, 0);
	stress_handled_one(it);
	return 0;
}

static void stress_timer_fn(struct timer_list *t)
{
	struct stress_item *it = timer_container_of(it, t, timer);

	stress_handled_one(it);
}

static enum hrtimer_restart stress_hrtimer_fn(struct hrtimer *t)
{
	stress_raise_ctx(stress_this_slot(), SC_HARDIRQ);
	hrtimer_forward_now(t, ns_to_ktime(STRESS_HARD_PERIOD_NS));
	return HRTIMER_RESTART;
}

static void stress_irq_work_fn(struct irq_work *w)
{
	stress_raise_ctx(stress_this_slot(), SC_HARDIRQ);
}

/* Forced into a thread on PREEMPT_RT, which runs it with BH disabled. */
static irqreturn_t stress_irq_fn(int irq, void *data)
{
	stress_raise_ctx(stress_this_slot(), SC_THREADED);
	return IRQ_HANDLED;
}

static int stress_bh_fn(void *arg)
{
	unsigned int i;

	for (i = 0; !kthread_should_stop(); i++) {
		local_bh_disable();
		stress_raise_ctx(stress_this_slot(), SC_BH);
		local_bh_enable();
		if (!(i & 7))
			irq_work_queue(&stress_this_slot()->irq_work);
		usleep_range(100, 200);
	}
	return 0;
}

static int stress_task_fn(void *arg)
{
	unsigned int i;

	for (i = 0; !kthread_should_stop(); i++) {
		stress_raise_ctx(stress_this_slot(), SC_TASK);
		if (stress_virq > 0 && !(i & 3))
			irq_set_irqchip_state(stress_virq, IRQCHIP_STATE_PENDING, true);
		usleep_range(100, 200);
	}
	return 0;
}

static void stress_start_hrtimer(void *arg)
{
	struct stress_slot *sl = arg;

	hrtimer_start(&sl->timer, ns_to_ktime(STRESS_HARD_PERIOD_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void stress_free(void)
{
	int cpu, c, p;

	if (stress_virq > 0) {
		free_irq(stress_virq, stress_slots);
		irq_dispose_mapping(stress_virq);
	}
	if (!IS_ERR_OR_NULL(stress_domain))
		irq_domain_remove_sim(stress_domain);
	stress_virq = 0;
	stress_domain = NULL;

	for_each_possible_cpu(cpu) {
		struct stress_slot *sl = &stress_slots[cpu];

		for (c = 0; c < NR_SC; c++) {
			for (p = 0; p < NR_SP; p++) {
				struct stress_item *it = &sl->item[c][p];

				if (p == SP_NET_RX) {
					napi_disable(&it->napi);
					netif_napi_del(&it->napi);
				} else if (p == SP_TIMER) {
					timer_delete_sync(&it->timer);
				} else {
					tasklet_kill(&it->tasklet);
				}
			}
		}
	}
	free_netdev(stress_netdev);
	stress_netdev = NULL;
	kvfree(stress_slots);
	stress_slots = NULL;
}

static int stress_alloc(void)
{
	int cpu, c, p;

	stress_slots = kvcalloc(nr_cpu_ids, sizeof(*stress_slots), GFP_KERNEL);
	if (!stress_slots)
		return -ENOMEM;
	stress_netdev = alloc_netdev_dummy(0);
	if (!stress_netdev) {
		kvfree(stress_slots);
		return -ENOMEM;
	}

	for_each_possible_cpu(cpu) {
		struct stress_slot *sl = &stress_slots[cpu];

		sl->cpu = cpu;
		hrtimer_setup(&sl->timer, stress_hrtimer_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		sl->irq_work = IRQ_WORK_INIT_HARD(stress_irq_work_fn);
		for (c = 0; c < NR_SC; c++) {
			for (p = 0; p < NR_SP; p++) {
				struct stress_item *it = &sl->item[c][p];

				it->path = p;
				it->ctx = c;
				it->slot = cpu;
				if (p == SP_NET_RX) {
					netif_napi_add(stress_netdev, &it->napi, stress_poll);
					napi_enable(&it->napi);
				} else if (p == SP_TIMER) {
					timer_setup(&it->timer, stress_timer_fn, 0);
				} else {
					tasklet_setup(&it->tasklet, stress_tasklet_fn);
				}
			}
		}
	}

	/* A threaded interrupt: a simulated one, fired by the task raisers. */
	stress_domain = irq_domain_create_sim(NULL, 1);
	if (IS_ERR(stress_domain))
		goto fail;
	stress_virq = irq_create_mapping(stress_domain, 0);
	if (stress_virq <= 0 ||
	    request_irq(stress_virq, stress_irq_fn, 0, "test_softirq", stress_slots)) {
		if (stress_virq > 0)
			irq_dispose_mapping(stress_virq);
		stress_virq = 0;
		goto fail;
	}
	return 0;
fail:
	stress_free();
	return -ENODEV;
}

static void stress_stop_threads(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct stress_slot *sl = &stress_slots[cpu];

		if (sl->bh_thread)
			kthread_stop_put(sl->bh_thread);
		if (sl->task_thread)
			kthread_stop_put(sl->task_thread);
		sl->bh_thread = NULL;
		sl->task_thread = NULL;
	}
}

static struct task_struct *stress_thread(int (*fn)(void *), struct stress_slot *sl,
					 const char *name)
{
	struct task_struct *tsk;

	tsk = kthread_create(fn, sl, "%s/%d", name, sl->cpu);
	if (IS_ERR(tsk))
		return NULL;
	/*
	 * Not bound to a CPU: the scheduler spreads the raisers over the
	 * CPUs, and a CPU going offline only moves them elsewhere.
	 */
	get_task_struct(tsk);
	wake_up_process(tsk);
	return tsk;
}

static int stress_start(void)
{
	int cpu, p, c, ret;

	if (stress_on)
		return -EBUSY;
	ret = stress_alloc();
	if (ret)
		return ret;
	for (p = 0; p < NR_SP; p++) {
		atomic64_set(&stress_raised[p], 0);
		atomic64_set(&stress_handled[p], 0);
	}
	for (c = 0; c < NR_SC; c++)
		atomic64_set(&stress_ctx_raised[c], 0);
	WRITE_ONCE(stress_stopping, false);

	for_each_online_cpu(cpu) {
		struct stress_slot *sl = &stress_slots[cpu];

		sl->bh_thread = stress_thread(stress_bh_fn, sl, "tsq_bh");
		sl->task_thread = stress_thread(stress_task_fn, sl, "tsq_task");
		if (!sl->bh_thread || !sl->task_thread)
			goto fail;
		/* Raisers at RT and at normal priority alike. */
		sched_set_fifo_low(sl->bh_thread);
		smp_call_function_single(cpu, stress_start_hrtimer, sl, 1);
	}
	stress_on = true;
	scnprintf(tsq_result, sizeof(tsq_result), "stress started cpus=%u\n",
		  num_online_cpus());
	return 0;
fail:
	stress_stop_threads();
	for_each_possible_cpu(cpu)
		hrtimer_cancel(&stress_slots[cpu].timer);
	stress_free();
	return -ENOMEM;
}

/* Whether every raised item has been handled, i.e. none is armed. */
static bool stress_drained(void)
{
	int cpu, c, p;

	for_each_possible_cpu(cpu)
		for (c = 0; c < NR_SC; c++)
			for (p = 0; p < NR_SP; p++)
				if (atomic_read_acquire(&stress_slots[cpu].item[c][p].armed))
					return false;
	return true;
}

static int stress_stop(void)
{
	unsigned long timeout = jiffies + msecs_to_jiffies(STRESS_DRAIN_MS);
	s64 raised = 0, handled = 0;
	size_t len = 0;
	int cpu, p, c;
	bool drained;

	if (!stress_on)
		return -EINVAL;
	WRITE_ONCE(stress_stopping, true);
	stress_stop_threads();
	for_each_possible_cpu(cpu) {
		hrtimer_cancel(&stress_slots[cpu].timer);
		irq_work_sync(&stress_slots[cpu].irq_work);
	}
	if (stress_virq > 0)
		synchronize_irq(stress_virq);

	/* Nothing raises any more: what is armed must still be handled. */
	while (!(drained = stress_drained()) && time_before(jiffies, timeout))
		msleep(20);

	for (p = 0; p < NR_SP; p++) {
		s64 r = atomic64_read(&stress_raised[p]);
		s64 h = atomic64_read(&stress_handled[p]);

		raised += r;
		handled += h;
		len += scnprintf(tsq_result + len, sizeof(tsq_result) - len,
				 "%s%s_raised=%lld %s_handled=%lld",
				 p ? " " : "stress ", stress_path_name[p], r,
				 stress_path_name[p], h);
	}
	for (c = 0; c < NR_SC; c++)
		len += scnprintf(tsq_result + len, sizeof(tsq_result) - len,
				 " ctx_%s=%lld", stress_ctx_name[c],
				 atomic64_read(&stress_ctx_raised[c]));
	scnprintf(tsq_result + len, sizeof(tsq_result) - len,
		  " raised=%lld handled=%lld lost=%lld\n", raised, handled,
		  raised - handled);

	/*
	 * Freeing waits for pending tasklets and NAPI instances: with work
	 * lost, keep everything and refuse to start again instead of hanging.
	 */
	if (!drained) {
		pr_err("test_softirq: %lld raised work items never ran\n", raised - handled);
		return 0;
	}
	stress_free();
	stress_on = false;
	return 0;
}

/*
 * BH workqueue load. The simulated interrupt has no affinity of its own to
 * set (irq_sim's chip cannot move it), so its thread moves itself to the
 * load's CPU the first time it runs there or elsewhere.
 */
#define BHWQ_PERIOD_US		500

static struct work_struct bhwq_work;
static struct task_struct *bhwq_thread;
static struct hrtimer bhwq_timer;
static struct irq_domain *bhwq_domain;
static int bhwq_virq;
static int bhwq_cpu = -1;
static atomic_t bhwq_queued;

static void bhwq_fn(struct work_struct *w)
{
	foreign_work();
}

static int bhwq_task_fn(void *arg)
{
	while (!kthread_should_stop()) {
		if (queue_work_on(bhwq_cpu, system_bh_wq, &bhwq_work))
			atomic_inc(&bhwq_queued);
		usleep_range(BHWQ_PERIOD_US, BHWQ_PERIOD_US + 100);
	}
	return 0;
}

static irqreturn_t bhwq_irq_fn(int irq, void *data)
{
	return IRQ_WAKE_THREAD;
}

/*
 * An explicit thread function is not force-threaded, so it does not run
 * with BH disabled as a forced one would on PREEMPT_RT: disable BH around
 * the queueing, as irq_forced_thread_fn() does for a driver's handler. The
 * move to the load's CPU must be outside that section: on PREEMPT_RT
 * local_bh_disable() disables migration, and the move would wait for
 * itself.
 */
static irqreturn_t bhwq_irq_thread_fn(int irq, void *data)
{
	int cpu = READ_ONCE(bhwq_cpu);

	if (cpu < 0)
		return IRQ_HANDLED;
	if (raw_smp_processor_id() != cpu) {
		set_cpus_allowed_ptr(current, cpumask_of(cpu));
		return IRQ_HANDLED;
	}
	local_bh_disable();
	if (queue_work_on(cpu, system_bh_wq, &bhwq_work))
		atomic_inc(&bhwq_queued);
	local_bh_enable();
	return IRQ_HANDLED;
}

static enum hrtimer_restart bhwq_timer_fn(struct hrtimer *t)
{
	irq_set_irqchip_state(bhwq_virq, IRQCHIP_STATE_PENDING, true);
	hrtimer_forward_now(t, ns_to_ktime(BHWQ_PERIOD_US * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void bhwq_timer_start_fn(void *info)
{
	hrtimer_start(&bhwq_timer, ns_to_ktime(BHWQ_PERIOD_US * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void bhwq_stop(void)
{
	if (bhwq_cpu < 0)
		return;
	if (bhwq_thread)
		kthread_stop(bhwq_thread);
	bhwq_thread = NULL;
	if (bhwq_virq) {
		hrtimer_cancel(&bhwq_timer);
		free_irq(bhwq_virq, &bhwq_work);
		irq_dispose_mapping(bhwq_virq);
		irq_domain_remove_sim(bhwq_domain);
		bhwq_virq = 0;
	}
	flush_work(&bhwq_work);
	bhwq_cpu = -1;
}

static int cmd_bhwq(int cpu, int mode)
{
	int other;

	if (!mode) {
		if (bhwq_cpu < 0)
			return -EINVAL;
		scnprintf(tsq_result, sizeof(tsq_result), "bhwq cpu=%d queued=%d\n",
			  bhwq_cpu, atomic_read(&bhwq_queued));
		bhwq_stop();
		return 0;
	}
	if (bhwq_cpu >= 0)
		return -EBUSY;
	atomic_set(&bhwq_queued, 0);
	INIT_WORK(&bhwq_work, bhwq_fn);
	bhwq_cpu = cpu;
	if (mode == 1) {
		bhwq_thread = kthread_create(bhwq_task_fn, NULL, "tsq_bhwq/%d", cpu);
		if (IS_ERR(bhwq_thread)) {
			bhwq_thread = NULL;
			bhwq_cpu = -1;
			return -ENOMEM;
		}
		kthread_bind(bhwq_thread, cpu);
		wake_up_process(bhwq_thread);
	} else {
		bhwq_domain = irq_domain_create_sim(NULL, 1);
		if (IS_ERR(bhwq_domain)) {
			bhwq_cpu = -1;
			return -ENODEV;
		}
		bhwq_virq = irq_create_mapping(bhwq_domain, 0);
		if (bhwq_virq <= 0 ||
		    request_threaded_irq(bhwq_virq, bhwq_irq_fn, bhwq_irq_thread_fn,
					 IRQF_ONESHOT, "tsq_bhwq", &bhwq_work)) {
			if (bhwq_virq > 0)
				irq_dispose_mapping(bhwq_virq);
			bhwq_virq = 0;
			irq_domain_remove_sim(bhwq_domain);
			bhwq_cpu = -1;
			return -ENODEV;
		}
		/*
		 * The simulated interrupt fires where the timer runs: on
		 * another CPU than the load's, so that only the thread's work
		 * lands on it.
		 */
		other = cpumask_any_but(cpu_online_mask, cpu);
		if (other >= nr_cpu_ids)
			other = cpu;
		hrtimer_setup(&bhwq_timer, bhwq_timer_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_HARD);
		smp_call_function_single(other, bhwq_timer_start_fn, NULL, 1);
	}
	scnprintf(tsq_result, sizeof(tsq_result), "bhwq cpu=%d mode=%s started\n",
		  cpu, mode == 1 ? "task" : "irq_thread");
	return 0;
}

static bool cpu_ok(int cpu)
{
	return cpu >= 0 && cpu < nr_cpu_ids && cpu_online(cpu);
}

/*
 * "<command> <int> [<int> [<int>]]"; anything else, or an argument out of
 * range, is -EINVAL.
 */
static int control_exec(const char *buf)
{
	char cmd[16], extra;
	int a, b, c, n;

	n = sscanf(buf, "%15s %d %d %d %c", cmd, &a, &b, &c, &extra);
	if (n < 2)
		return -EINVAL;
	if (!strcmp(cmd, "victim") && n == 4 && cpu_ok(a) && b >= 0 && b < NR_LOADS &&
	    c > 0 && c <= MAX_MSECS && storm_cpu < 0)
		return cmd_victim(a, b, c);
	if (!strcmp(cmd, "cycle") && (n == 3 || (n == 4 && (c == 0 || c == 1))) &&
	    cpu_ok(a) && b > 0 && b <= MAX_LOOPS)
		return cmd_cycle(a, b, n == 3 || c);
	if (!strcmp(cmd, "storm") && n == 3 && cpu_ok(a) && (b == 0 || b == 1))
		return cmd_storm(a, b);
	if (!strcmp(cmd, "bhwq") && n == 3 && cpu_ok(a) && b >= 0 && b <= 2)
		return cmd_bhwq(a, b);
	if (!strcmp(cmd, "stress") && n == 2 && (a == 0 || a == 1))
		return a ? stress_start() : stress_stop();
	return -EINVAL;
}

static ssize_t control_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	char buf[64];
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';

	/* The CPU must stay online while work is pinned to it. */
	cpus_read_lock();
	mutex_lock(&tsq_lock);
	ret = control_exec(buf);
	mutex_unlock(&tsq_lock);
	cpus_read_unlock();
	return ret ? ret : count;
}

static ssize_t result_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	ssize_t ret;

	/* copied under the lock, not to the stack: the result is 2 KiB */
	mutex_lock(&tsq_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, tsq_result,
				      strnlen(tsq_result, RESULT_SIZE));
	mutex_unlock(&tsq_lock);
	return ret;
}

/* Count the samples of sorted @s from *@i on that fall into bucket @us. */
static unsigned int hist_take(const u32 *s, unsigned int n, unsigned int *i,
			      u32 us)
{
	unsigned int from = *i;

	while (*i < n && s[*i] / NSEC_PER_USEC == us)
		(*i)++;
	return *i - from;
}

/* A merge of the three sorted sample arrays, one line per bucket in use. */
static int histogram_show(struct seq_file *m, void *v)
{
	unsigned int i = 0, j = 0, k = 0, n;
	u32 us, full, dis, en;

	mutex_lock(&tsq_lock);
	n = tsq_hist.nr;
	while (i < n || j < n || k < n) {
		us = U32_MAX;
		if (i < n)
			us = min(us, tsq_hist.full[i] / NSEC_PER_USEC);
		if (j < n)
			us = min(us, tsq_hist.disable[j] / NSEC_PER_USEC);
		if (k < n)
			us = min(us, tsq_hist.enable[k] / NSEC_PER_USEC);
		full = hist_take(tsq_hist.full, n, &i, us);
		dis = hist_take(tsq_hist.disable, n, &j, us);
		en = hist_take(tsq_hist.enable, n, &k, us);
		seq_printf(m, "%u %u %u %u\n", us, full, dis, en);
	}
	mutex_unlock(&tsq_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(histogram);

static const struct file_operations control_fops = {
	.owner	= THIS_MODULE,
	.write	= control_write,
	.llseek	= noop_llseek,
};

static const struct file_operations result_fops = {
	.owner	= THIS_MODULE,
	.read	= result_read,
	.llseek	= default_llseek,
};

static int __init test_softirq_init(void)
{
	tasklet_setup(&foreign_tasklet, foreign_fn);
	tasklet_setup(&own_tasklet, own_fn);
	tasklet_setup(&noop_tasklet, noop_fn);
	hrtimer_setup(&foreign_timer, foreign_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_setup(&soft_timer, soft_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_SOFT);
	timer_setup(&jiffy_timer, jiffy_timer_fn, TIMER_PINNED);

	tsq_dir = debugfs_create_dir("test_softirq", NULL);
	debugfs_create_file("control", 0200, tsq_dir, NULL, &control_fops);
	debugfs_create_file("result", 0444, tsq_dir, NULL, &result_fops);
	debugfs_create_file("histogram", 0444, tsq_dir, NULL, &histogram_fops);
	return 0;
}

static void __exit test_softirq_exit(void)
{
	debugfs_remove_recursive(tsq_dir);
	mutex_lock(&tsq_lock);
	storm_stop();
	bhwq_stop();
	if (stress_on)
		stress_stop();
	tsq_hist_free();
	mutex_unlock(&tsq_lock);
	tasklet_kill(&foreign_tasklet);
	tasklet_kill(&own_tasklet);
	tasklet_kill(&noop_tasklet);
}

module_init(test_softirq_init);
module_exit(test_softirq_exit);

MODULE_DESCRIPTION("Softirq benchmark and stress test");
MODULE_LICENSE("GPL");
