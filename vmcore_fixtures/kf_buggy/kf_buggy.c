// SPDX-License-Identifier: GPL-2.0
/*
 * kf_buggy - deliberately broken driver used to produce the kforensic
 * vmcore fixtures (vmcore_fixtures/build.sh).  Each bug is selected by
 * user space, through debugfs files (like a driver's sysfs attributes), or by
 * the "bug" module parameter for the bugs that live in kthreads:
 *
 *   cat /sys/kernel/debug/kf_buggy/in_voltage3_raw
 *       null_member: reads dev->sensor->ops->read_raw, dev->sensor is NULL
 *   echo 1 > /sys/kernel/debug/kf_buggy/buffer_put   (twice)
 *       bug_on: BUG_ON() on a refcount underflow
 *   echo 1 > /sys/kernel/debug/kf_buggy/state_stop
 *       warn_on: WARN_ON() on an impossible state (with panic_on_warn=1)
 *   echo 1 > /sys/kernel/debug/kf_buggy/session_close (twice)
 *       list_corrupt: list_del() on an entry that was already deleted
 *   insmod kf_buggy.ko bug=hung_task
 *       kf_holder keeps kf_dev_lock forever, kf_waiter blocks on it (D)
 *   insmod kf_buggy.ko bug=soft_lockup
 *       kf_spinner (bound to CPU 1) spins with preemption disabled
 *   insmod kf_buggy.ko bug=slab_leak
 *       kf_leaker leaks kf_leak_obj objects at a steady rate
 *
 * Lines the fixture builder needs to find carry a KF_* marker comment.
 * This is test code: it is meant to crash the kernel.
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/init.h>
#include <linux/slab.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/preempt.h>
#include <linux/stddef.h>
#include <linux/debugfs.h>
#include <linux/fs.h>

/* keep the buggy functions as real, uncloned functions (no .constprop.0) */
#define KF_NOINLINE noinline __attribute__((__noipa__))

static char *bug = "none";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "which bug to trigger");

static unsigned int leak_per_sec = 20;
module_param(leak_per_sec, uint, 0444);
MODULE_PARM_DESC(leak_per_sec, "slab_leak: objects leaked per second");

/* ------------------------------------------------------------------ */
/* null_member: chan->indio_dev->info->read_raw in miniature           */

struct kf_sensor;

struct kf_sensor_ops {
	int (*read_raw)(struct kf_sensor *sensor, int channel, int *val);
	int (*write_raw)(struct kf_sensor *sensor, int channel, int val);
};

struct kf_sensor {
	char name[32];
	unsigned int channels;
	unsigned int flags;
	void *priv;
	const struct kf_sensor_ops *ops;	/* KF_MEMBER: offset 0x30 */
};

struct kf_device {
	char name[16];
	int id;
	struct kf_sensor *sensor;	/* NULL: probe never bound a sensor */
	unsigned long last_read;
};

static int kf_sensor_read_raw(struct kf_sensor *sensor, int channel, int *val)
{
	*val = channel * 100;
	return 0;
}

static const struct kf_sensor_ops kf_default_ops = {
	.read_raw = kf_sensor_read_raw,
};

static struct kf_device *kf_dev;

static KF_NOINLINE int kf_null_member_read(struct kf_device *dev, int channel)
{
	int val = 0, ret;

	ret = dev->sensor->ops->read_raw(dev->sensor, channel, &val);	/* KF_FAULT null_member */
	if (ret)
		return ret;
	dev->last_read = jiffies;
	return val;
}

static ssize_t kf_raw_read(struct file *file, char __user *ubuf, size_t count, loff_t *ppos)
{
	char buf[16];
	int val, len;

	if (*ppos)
		return 0;
	val = kf_null_member_read(kf_dev, 3);
	len = scnprintf(buf, sizeof(buf), "%d\n", val);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations kf_raw_fops = {
	.owner = THIS_MODULE,
	.read = kf_raw_read,
};

static int kf_setup_device(void)
{
	kf_dev = kzalloc(sizeof(*kf_dev), GFP_KERNEL);
	if (!kf_dev)
		return -ENOMEM;
	strscpy(kf_dev->name, "kf-adc0", sizeof(kf_dev->name));
	kf_dev->id = 7;
	/* the sensor is only bound later, by a probe that never runs */
	pr_info("kf_buggy: %s registered, sensor ops at offset %zu of struct kf_sensor\n",
		kf_dev->name, offsetof(struct kf_sensor, ops));
	return 0;
}

/* ------------------------------------------------------------------ */
/* bug_on: refcount underflow                                          */

struct kf_buffer {
	int refcount;
	unsigned int size;
	void *data;
};

static KF_NOINLINE void kf_buffer_put(struct kf_buffer *buf)
{
	BUG_ON(buf->refcount <= 0);	/* KF_FAULT bug_on */
	if (--buf->refcount == 0)
		kfree(buf->data);
}

static struct kf_buffer *kf_buf;

/* every write drops a reference: the second write underflows */
static ssize_t kf_buffer_put_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	pr_info("kf_buggy: releasing buffer (refcount %d)\n", kf_buf->refcount);
	kf_buffer_put(kf_buf);
	return count;
}

static const struct file_operations kf_buffer_put_fops = {
	.owner = THIS_MODULE,
	.write = kf_buffer_put_write,
};

static int kf_setup_buffer(void)
{
	kf_buf = kzalloc(sizeof(*kf_buf), GFP_KERNEL);
	if (!kf_buf)
		return -ENOMEM;
	kf_buf->refcount = 1;
	kf_buf->size = 4096;
	kf_buf->data = kmalloc(kf_buf->size, GFP_KERNEL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* warn_on: impossible state transition                                */

enum kf_state { KF_IDLE, KF_RUNNING, KF_STOPPED };

static KF_NOINLINE int kf_state_stop(enum kf_state *state)
{
	if (WARN_ON(*state != KF_RUNNING))	/* KF_FAULT warn_on */
		return -EINVAL;
	*state = KF_STOPPED;
	return 0;
}

static enum kf_state kf_state = KF_IDLE;

static ssize_t kf_state_stop_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	int ret = kf_state_stop(&kf_state);

	return ret ? ret : count;
}

static const struct file_operations kf_state_stop_fops = {
	.owner = THIS_MODULE,
	.write = kf_state_stop_write,
};

/* ------------------------------------------------------------------ */
/* hung_task: kf_holder never releases kf_dev_lock                     */

static DEFINE_MUTEX(kf_dev_lock);

static int kf_holder_fn(void *unused)
{
	mutex_lock(&kf_dev_lock);
	pr_info("kf_buggy: kf_holder took kf_dev_lock and waits for an event that never comes\n");
	while (!kthread_should_stop())
		schedule_timeout_interruptible(MAX_SCHEDULE_TIMEOUT);	/* KF_HOLDER */
	mutex_unlock(&kf_dev_lock);
	return 0;
}

static KF_NOINLINE void kf_waiter_update(void)
{
	mutex_lock(&kf_dev_lock);	/* KF_FAULT hung_task */
	mutex_unlock(&kf_dev_lock);
}

static int kf_waiter_fn(void *unused)
{
	pr_info("kf_buggy: kf_waiter wants kf_dev_lock\n");
	kf_waiter_update();
	return 0;
}

static int kf_bug_hung_task(void)
{
	struct task_struct *t;

	t = kthread_run(kf_holder_fn, NULL, "kf_holder");
	if (IS_ERR(t))
		return PTR_ERR(t);
	msleep(100);
	t = kthread_run(kf_waiter_fn, NULL, "kf_waiter");
	return PTR_ERR_OR_ZERO(t);
}

/* ------------------------------------------------------------------ */
/* soft_lockup: polling a status bit with preemption disabled          */

static unsigned long kf_hw_status;

static KF_NOINLINE void kf_poll_ready(void)
{
	preempt_disable();
	while (!test_bit(0, &kf_hw_status))
		cpu_relax();	/* KF_FAULT soft_lockup */
	preempt_enable();
}

static int kf_spinner_fn(void *unused)
{
	pr_info("kf_buggy: kf_spinner waits for the device to become ready\n");
	kf_poll_ready();
	return 0;
}

static int kf_bug_soft_lockup(void)
{
	struct task_struct *t;

	t = kthread_create(kf_spinner_fn, NULL, "kf_spinner");
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, 1);
	wake_up_process(t);
	return 0;
}

/* ------------------------------------------------------------------ */
/* list_corrupt: a session closed twice                                */

struct kf_session {
	unsigned int id;
	struct list_head node;
	char owner[16];
};

static LIST_HEAD(kf_sessions);

static KF_NOINLINE void kf_session_close(struct kf_session *s)
{
	list_del(&s->node);	/* KF_FAULT list_corrupt */
}

static struct kf_session *kf_current_session;

/* closes the current session but never clears kf_current_session */
static ssize_t kf_session_close_write(struct file *file, const char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	pr_info("kf_buggy: closing session %u\n", kf_current_session->id);
	kf_session_close(kf_current_session);
	return count;
}

static const struct file_operations kf_session_close_fops = {
	.owner = THIS_MODULE,
	.write = kf_session_close_write,
};

static int kf_setup_sessions(void)
{
	struct kf_session *s;
	int i;

	for (i = 0; i < 3; i++) {
		s = kzalloc(sizeof(*s), GFP_KERNEL);
		if (!s)
			return -ENOMEM;
		s->id = i;
		strscpy(s->owner, "kf-client", sizeof(s->owner));
		list_add_tail(&s->node, &kf_sessions);
	}
	kf_current_session = list_first_entry(&kf_sessions, struct kf_session, node);
	return 0;
}

/* ------------------------------------------------------------------ */
/* slab_leak: requests are allocated and never freed                   */

struct kf_request {
	u64 magic;
	u64 seq;
	unsigned long jiffies;
	char payload[488];
};

#define KF_REQUEST_MAGIC 0x6b66726571756573ULL	/* "kfreques" */

static struct kmem_cache *kf_leak_cache;
static unsigned long kf_leak_count;
static struct kf_request *kf_last_request;	/* overwritten, never freed */

static KF_NOINLINE void kf_request_submit(u64 seq)
{
	struct kf_request *req;

	req = kmem_cache_alloc(kf_leak_cache, GFP_KERNEL);	/* KF_FAULT slab_leak */
	if (!req)
		return;
	req->magic = KF_REQUEST_MAGIC;
	req->seq = seq;
	req->jiffies = jiffies;
	memset(req->payload, 0x5a, sizeof(req->payload));
	kf_leak_count++;
	/*
	 * The completion path that should free the previous request was never
	 * written: the pointer is simply overwritten.
	 */
	WRITE_ONCE(kf_last_request, req);
}

static int kf_leaker_fn(void *unused)
{
	u64 seq = 0;

	while (!kthread_should_stop()) {
		kf_request_submit(seq++);
		msleep(1000 / leak_per_sec);
	}
	return 0;
}

static int kf_bug_slab_leak(void)
{
	struct task_struct *t;

	BUILD_BUG_ON(sizeof(struct kf_request) != 512);
	kf_leak_cache = kmem_cache_create("kf_leak_obj", sizeof(struct kf_request),
					  0, 0, NULL);
	if (!kf_leak_cache)
		return -ENOMEM;
	t = kthread_run(kf_leaker_fn, NULL, "kf_leaker");
	return PTR_ERR_OR_ZERO(t);
}

/* ------------------------------------------------------------------ */

static struct dentry *kf_debugfs;

static int __init kf_buggy_init(void)
{
	int ret;

	pr_info("kf_buggy: loaded, bug=%s\n", bug);
	ret = kf_setup_device();
	if (!ret)
		ret = kf_setup_buffer();
	if (!ret)
		ret = kf_setup_sessions();
	if (ret)
		return ret;
	kf_debugfs = debugfs_create_dir("kf_buggy", NULL);
	debugfs_create_file("in_voltage3_raw", 0444, kf_debugfs, NULL, &kf_raw_fops);
	debugfs_create_file("buffer_put", 0200, kf_debugfs, NULL, &kf_buffer_put_fops);
	debugfs_create_file("state_stop", 0200, kf_debugfs, NULL, &kf_state_stop_fops);
	debugfs_create_file("session_close", 0200, kf_debugfs, NULL, &kf_session_close_fops);

	if (!strcmp(bug, "hung_task"))
		return kf_bug_hung_task();
	if (!strcmp(bug, "soft_lockup"))
		return kf_bug_soft_lockup();
	if (!strcmp(bug, "slab_leak"))
		return kf_bug_slab_leak();
	return 0;
}
module_init(kf_buggy_init);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("kforensic");
MODULE_DESCRIPTION("Deliberately buggy module for kforensic vmcore fixtures");
