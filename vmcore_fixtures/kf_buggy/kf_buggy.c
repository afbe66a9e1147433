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
 *   echo 1 > conn_open; echo 1 > conn_close; echo 1 > conn_send
 *       use_after_free: kf_conn_close() frees the connection but leaves
 *       kf_active_conn pointing at it; kf_conn_send() follows conn->peer
 *   echo 1 > msg_submit
 *       double_free: kf_msg_submit()'s error path frees the message, then
 *       the common exit frees it again
 *   echo -n NAME > client_rename; echo 1 > client_add
 *       list_overflow: strcpy() of a long name into char name[16] runs
 *       into the list_head behind it; the next list_add_tail() trips
 *   insmod kf_buggy.ko bug=abba_deadlock
 *       kf_config and kf_stats take two mutexes in opposite order
 *   insmod kf_buggy.ko bug=spin_deadlock
 *       kf_hw_configure()'s error path returns with kf_hw_lock held;
 *       kthread kf_hw_poll (bound to CPU 1) spins on it forever
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
#include <linux/spinlock.h>
#include <linux/uaccess.h>

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
/* use_after_free: a connection freed while a global still points at it */

struct kf_peer {
	u64 cookie;
	unsigned int mtu;
	unsigned int flags;
};

struct kf_conn {
	u32 id;
	u32 state;
	char name[24];
	struct kf_peer *peer;		/* offset 0x20 */
	unsigned long tx_bytes;
};

static struct kmem_cache *kf_conn_cache;
static struct kf_conn *kf_active_conn;	/* never cleared on close */
static struct kf_peer kf_default_peer = { .cookie = 0x6b66706565720000ULL, .mtu = 1500 };

static KF_NOINLINE struct kf_conn *kf_conn_open(u32 id)
{
	struct kf_conn *conn;

	conn = kmem_cache_alloc(kf_conn_cache, GFP_KERNEL);
	if (!conn)
		return NULL;
	conn->id = id;
	conn->state = 1;
	strscpy(conn->name, "kf-conn-uplink", sizeof(conn->name));
	conn->peer = &kf_default_peer;
	conn->tx_bytes = 0;
	WRITE_ONCE(kf_active_conn, conn);
	return conn;
}

static unsigned long kf_conn_closed;

static KF_NOINLINE void kf_conn_close(struct kf_conn *conn)
{
	conn->state = 0;
	kmem_cache_free(kf_conn_cache, conn);	/* KF_FREE use_after_free */
	kf_conn_closed++;	/* not a tail call: kf_conn_close stays in the free stack */
}

static KF_NOINLINE unsigned int kf_conn_send(struct kf_conn *conn, size_t len)
{
	conn->tx_bytes += len;
	return conn->peer->mtu;	/* KF_FAULT use_after_free */
}

static ssize_t kf_conn_open_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	return kf_conn_open(42) ? count : -ENOMEM;
}

static ssize_t kf_conn_close_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	pr_info("kf_buggy: closing connection %u\n", kf_active_conn->id);
	kf_conn_close(kf_active_conn);
	return count;
}

static ssize_t kf_conn_send_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	pr_info("kf_buggy: sending %zu bytes on the active connection\n", count);
	return kf_conn_send(READ_ONCE(kf_active_conn), count) ? count : -EIO;
}

static const struct file_operations kf_conn_open_fops = {
	.owner = THIS_MODULE,
	.write = kf_conn_open_write,
};

static const struct file_operations kf_conn_close_fops = {
	.owner = THIS_MODULE,
	.write = kf_conn_close_write,
};

static const struct file_operations kf_conn_send_fops = {
	.owner = THIS_MODULE,
	.write = kf_conn_send_write,
};

static int kf_setup_conn(void)
{
	kf_conn_cache = kmem_cache_create("kf_conn", sizeof(struct kf_conn), 0, 0, NULL);
	return kf_conn_cache ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* double_free: the error path frees, then the common exit frees again */

struct kf_msg {
	u32 type;
	u32 len;
	u64 seq;
	char body[32];
};

static u64 kf_msg_seq;

static KF_NOINLINE int kf_msg_validate(const struct kf_msg *msg)
{
	return msg->len > sizeof(msg->body) ? -EINVAL : 0;
}

static KF_NOINLINE int kf_msg_submit(u32 type, u32 len)
{
	struct kf_msg *msg;
	int ret;

	msg = kmalloc(sizeof(*msg), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	msg->type = type;
	msg->len = len;
	msg->seq = ++kf_msg_seq;
	ret = kf_msg_validate(msg);
	if (ret) {
		pr_info("kf_buggy: message %llu rejected (len %u)\n", msg->seq, len);
		kfree(msg);	/* KF_FREE double_free */
		goto out;
	}
	pr_info("kf_buggy: message %llu queued\n", msg->seq);
out:
	kfree(msg);	/* KF_FAULT double_free */
	return ret;
}

static ssize_t kf_msg_submit_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	int ret = kf_msg_submit(7, 64);

	return ret ? ret : count;
}

static const struct file_operations kf_msg_submit_fops = {
	.owner = THIS_MODULE,
	.write = kf_msg_submit_write,
};

/* ------------------------------------------------------------------ */
/* list_overflow: a name longer than its array overwrites the list_head */

struct kf_client {
	char name[16];
	struct list_head node;		/* right behind name[] */
	int addr;
};

static LIST_HEAD(kf_clients);
static struct kf_client *kf_last_client;
static int kf_client_addr = 0x48;

static KF_NOINLINE void kf_client_rename(struct kf_client *c, const char *name)
{
	strcpy(c->name, name);	/* KF_OVERFLOW list_overflow */
}

static KF_NOINLINE struct kf_client *kf_client_register(const char *name)
{
	struct kf_client *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return NULL;
	strscpy(c->name, name, sizeof(c->name));
	c->addr = kf_client_addr++;
	list_add_tail(&c->node, &kf_clients);	/* KF_FAULT list_overflow */
	kf_last_client = c;
	return c;
}

static ssize_t kf_client_rename_write(struct file *file, const char __user *ubuf,
				      size_t count, loff_t *ppos)
{
	char name[64];

	if (count >= sizeof(name))
		return -EINVAL;
	if (copy_from_user(name, ubuf, count))
		return -EFAULT;
	name[count] = '\0';
	pr_info("kf_buggy: renaming client %s to %s\n", kf_last_client->name, name);
	kf_client_rename(kf_last_client, name);
	return count;
}

static ssize_t kf_client_add_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	return kf_client_register("i2c-2-fan") ? count : -ENOMEM;
}

static const struct file_operations kf_client_rename_fops = {
	.owner = THIS_MODULE,
	.write = kf_client_rename_write,
};

static const struct file_operations kf_client_add_fops = {
	.owner = THIS_MODULE,
	.write = kf_client_add_write,
};

static int kf_setup_clients(void)
{
	return kf_client_register("i2c-0-eeprom") && kf_client_register("i2c-1-temp") ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* abba_deadlock: two mutexes taken in opposite order                  */

static DEFINE_MUTEX(kf_config_lock);
static DEFINE_MUTEX(kf_stats_lock);

static KF_NOINLINE void kf_config_apply(void)
{
	mutex_lock(&kf_config_lock);
	msleep(200);			/* let kf_stats take kf_stats_lock */
	mutex_lock(&kf_stats_lock);	/* KF_FAULT abba_config */
	mutex_unlock(&kf_stats_lock);
	mutex_unlock(&kf_config_lock);
}

static KF_NOINLINE void kf_stats_update(void)
{
	mutex_lock(&kf_stats_lock);
	msleep(200);
	mutex_lock(&kf_config_lock);	/* KF_FAULT abba_stats */
	mutex_unlock(&kf_config_lock);
	mutex_unlock(&kf_stats_lock);
}

static int kf_config_fn(void *unused)
{
	pr_info("kf_buggy: kf_config applies the configuration\n");
	kf_config_apply();
	return 0;
}

static int kf_stats_fn(void *unused)
{
	pr_info("kf_buggy: kf_stats updates the statistics\n");
	kf_stats_update();
	return 0;
}

static int kf_bug_abba_deadlock(void)
{
	struct task_struct *t;

	t = kthread_run(kf_config_fn, NULL, "kf_config");
	if (IS_ERR(t))
		return PTR_ERR(t);
	msleep(50);
	t = kthread_run(kf_stats_fn, NULL, "kf_stats");
	return PTR_ERR_OR_ZERO(t);
}

/* ------------------------------------------------------------------ */
/* spin_deadlock: an error path returns with the spinlock held          */

static DEFINE_SPINLOCK(kf_hw_lock);
static unsigned int kf_hw_regs[4];
static int kf_hw_present;		/* the device never answers */

static KF_NOINLINE int kf_hw_configure(unsigned int mode)
{
	spin_lock(&kf_hw_lock);
	if (!kf_hw_present)
		return -ENODEV;	/* KF_LEAK spin_deadlock: returns with kf_hw_lock held */
	kf_hw_regs[0] = mode;
	spin_unlock(&kf_hw_lock);
	return 0;
}

static KF_NOINLINE unsigned int kf_hw_read_status(void)
{
	unsigned int status;

	spin_lock(&kf_hw_lock);	/* KF_FAULT spin_deadlock */
	status = kf_hw_regs[1];
	spin_unlock(&kf_hw_lock);
	return status;
}

static int kf_hw_poll_fn(void *unused)
{
	pr_info("kf_buggy: kf_hw_poll reads the device status\n");
	while (!kthread_should_stop()) {
		kf_hw_read_status();
		msleep(10);
	}
	return 0;
}

static int kf_bug_spin_deadlock(void)
{
	struct task_struct *t;
	int ret;

	ret = kf_hw_configure(3);
	pr_info("kf_buggy: kf_hw_configure returned %d\n", ret);
	t = kthread_create(kf_hw_poll_fn, NULL, "kf_hw_poll");
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, 1);
	wake_up_process(t);
	return 0;
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
	if (!ret)
		ret = kf_setup_conn();
	if (!ret)
		ret = kf_setup_clients();
	if (ret)
		return ret;
	kf_debugfs = debugfs_create_dir("kf_buggy", NULL);
	debugfs_create_file("in_voltage3_raw", 0444, kf_debugfs, NULL, &kf_raw_fops);
	debugfs_create_file("buffer_put", 0200, kf_debugfs, NULL, &kf_buffer_put_fops);
	debugfs_create_file("state_stop", 0200, kf_debugfs, NULL, &kf_state_stop_fops);
	debugfs_create_file("session_close", 0200, kf_debugfs, NULL, &kf_session_close_fops);
	debugfs_create_file("conn_open", 0200, kf_debugfs, NULL, &kf_conn_open_fops);
	debugfs_create_file("conn_close", 0200, kf_debugfs, NULL, &kf_conn_close_fops);
	debugfs_create_file("conn_send", 0200, kf_debugfs, NULL, &kf_conn_send_fops);
	debugfs_create_file("msg_submit", 0200, kf_debugfs, NULL, &kf_msg_submit_fops);
	debugfs_create_file("client_rename", 0200, kf_debugfs, NULL, &kf_client_rename_fops);
	debugfs_create_file("client_add", 0200, kf_debugfs, NULL, &kf_client_add_fops);

	if (!strcmp(bug, "hung_task"))
		return kf_bug_hung_task();
	if (!strcmp(bug, "soft_lockup"))
		return kf_bug_soft_lockup();
	if (!strcmp(bug, "slab_leak"))
		return kf_bug_slab_leak();
	if (!strcmp(bug, "abba_deadlock"))
		return kf_bug_abba_deadlock();
	if (!strcmp(bug, "spin_deadlock"))
		return kf_bug_spin_deadlock();
	return 0;
}
module_init(kf_buggy_init);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("kforensic");
MODULE_DESCRIPTION("Deliberately buggy module for kforensic vmcore fixtures");
