// SPDX-License-Identifier: GPL-2.0
/*
 * The control file of the test_softirq module refuses what it must
 * refuse: writes without CAP_SYS_ADMIN (-EPERM), writes by an unprivileged
 * user (the debugfs permissions), malformed and out of range commands
 * (-EINVAL), and stopping what does not run; and it still works after all
 * of that. A short stress run checks that every raised work item was
 * handled.
 *
 * A test of the project's measuring module, not of the kernel: built by
 * scripts/initramfs.sh with the kselftest harness of the tree under test,
 * run by make check's guest job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define DIR		"/sys/kernel/debug/test_softirq"
#define CONTROL		DIR "/control"
#define RESULT		DIR "/result"
#define HISTOGRAM	DIR "/histogram"

/* 0 or -errno of writing @cmd to the control file in one write(). */
static int ctl(const char *cmd)
{
	int fd = open(CONTROL, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, cmd, strlen(cmd));
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	return n == (ssize_t)strlen(cmd) ? 0 : -EIO;
}

static int read_result(char *buf, size_t len)
{
	int fd = open(RESULT, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static long long field(const char *buf, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(buf, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

/* Run @fn in a child and return its exit status. */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* Exit status: 0 when the write failed with EPERM. */
static int write_without_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return 2;
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	data[CAP_TO_INDEX(CAP_SYS_ADMIN)].permitted &= ~CAP_TO_MASK(CAP_SYS_ADMIN);
	if (syscall(SYS_capset, &hdr, data))
		return 3;
	return ctl("cycle 0 10") == -EPERM ? 0 : 1;
}

/* Exit status: 0 when an unprivileged user cannot write. */
static int write_as_nobody(void)
{
	int ret;

	if (setgid(65534) || setuid(65534))
		return 2;
	ret = ctl("cycle 0 10");
	return ret == -EPERM || ret == -EACCES ? 0 : 1;
}

FIXTURE(ctl) {
	char buf[2048];
};

FIXTURE_SETUP(ctl)
{
	if (geteuid())
		SKIP(return, "must be run as root");
	if (access(CONTROL, F_OK)) {
		if (system("modprobe -q test_softirq 2>/dev/null") || access(CONTROL, F_OK))
			SKIP(return, "no test_softirq module (CONFIG_TEST_SOFTIRQ)");
	}
}

FIXTURE_TEARDOWN(ctl)
{
}

TEST_F(ctl, refuses_without_cap_sys_admin)
{
	ASSERT_EQ(0, in_child(write_without_cap_sys_admin));
}

TEST_F(ctl, refuses_unprivileged_user)
{
	ASSERT_EQ(0, in_child(write_as_nobody));
}

TEST_F(ctl, rejects_malformed_commands)
{
	static const char * const bad[] = {
		"\n", "bogus", "victim", "victim x 0 10", "victim 0 0",
		"victim 0 6 10", "victim 0 0 0", "victim 0 0 -1",
		"victim 0 0 10 7", "victim 4096 0 10", "victim -1 0 10",
		"victim 0 0 600001", "cycle 0 0", "cycle 0 -5",
		"cycle 0 10000001", "cycle 0", "storm 0 2", "storm 0 0",
		"stress", "stress 2", "stress 0", "stress 1 1",
		"victimvictimvictimvictim 0 0 10",
		"cycle 0 10 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	};
	const char *cmd;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		cmd = bad[i];
		EXPECT_EQ(-EINVAL, ctl(cmd)) TH_LOG("command '%s'", cmd);
	}
}

TEST_F(ctl, still_works_afterwards)
{
	ASSERT_EQ(0, ctl("cycle 0 1000"));
	ASSERT_EQ(0, read_result(self->buf, sizeof(self->buf)));
	EXPECT_EQ(1000, field(self->buf, "runs")) TH_LOG("%s", self->buf);
	ASSERT_EQ(0, ctl("storm 0 1"));
	EXPECT_EQ(-EBUSY, ctl("storm 0 1"));
	/* the victim does not run during a storm */
	EXPECT_EQ(-EINVAL, ctl("victim 0 0 10"));
	ASSERT_EQ(0, ctl("storm 0 0"));
}

TEST_F(ctl, stress_loses_nothing)
{
	long long raised, lost;

	ASSERT_EQ(0, ctl("stress 1"));
	EXPECT_EQ(-EBUSY, ctl("stress 1"));
	sleep(3);
	ASSERT_EQ(0, ctl("stress 0"));
	ASSERT_EQ(0, read_result(self->buf, sizeof(self->buf)));
	TH_LOG("%s", self->buf);
	raised = field(self->buf, "raised");
	lost = field(self->buf, "lost");
	EXPECT_GT(raised, 0);
	EXPECT_EQ(0, lost);
	EXPECT_EQ(raised, field(self->buf, "handled"));
}

/*
 * Every section but the first follows a sleep, and so has a time from the
 * sleep's earliest end to its own end.
 */
TEST_F(ctl, every_section_after_a_sleep_has_a_response_sample)
{
	long long samples;

	ASSERT_EQ(0, ctl("victim 0 0 50"));
	ASSERT_EQ(0, read_result(self->buf, sizeof(self->buf)));
	samples = field(self->buf, "samples");
	ASSERT_GT(samples, 1) TH_LOG("%s", self->buf);
	EXPECT_EQ(samples - 1, field(self->buf, "resp_n")) TH_LOG("%s", self->buf);
	EXPECT_LE(field(self->buf, "resp_p50_ns"), field(self->buf, "resp_max_ns"));
	EXPECT_GT(field(self->buf, "resp_ns"), 0);
}

/*
 * Each section is filed once: blocked, or else during it ksoftirqd was
 * woken or it was not; the sections whose local_bh_enable() saw the
 * wake-up are among the woken ones.
 */
TEST_F(ctl, every_section_is_blocked_woke_or_quiet)
{
	long long samples, woken;

	ASSERT_EQ(0, ctl("victim 0 0 50"));
	ASSERT_EQ(0, read_result(self->buf, sizeof(self->buf)));
	samples = field(self->buf, "samples");
	woken = field(self->buf, "ksoftirqd_woken");
	ASSERT_GT(samples, 0) TH_LOG("%s", self->buf);
	ASSERT_GE(woken, 0) TH_LOG("%s", self->buf);
	EXPECT_EQ(samples, field(self->buf, "blocked_sections") + woken +
		  field(self->buf, "quiet_n")) TH_LOG("%s", self->buf);
	EXPECT_LE(field(self->buf, "ksoftirqd_woken_enable"), woken);
	EXPECT_LE(field(self->buf, "rest_quiet_p50_ns"),
		  field(self->buf, "rest_quiet_max_ns"));
}

/* Every duration of the victim's last run lands in one bucket per column. */
TEST_F(ctl, histogram_counts_every_sample)
{
	long long sum[3] = { 0 }, samples;
	unsigned int us, c[3], prev = 0;
	int lines = 0, i;
	FILE *f;

	ASSERT_EQ(0, ctl("victim 0 0 50"));
	ASSERT_EQ(0, read_result(self->buf, sizeof(self->buf)));
	samples = field(self->buf, "samples");
	ASSERT_GT(samples, 0) TH_LOG("%s", self->buf);
	f = fopen(HISTOGRAM, "r");
	ASSERT_NE(NULL, f);
	while (fscanf(f, "%u %u %u %u", &us, &c[0], &c[1], &c[2]) == 4) {
		/* buckets in use only, in ascending order */
		EXPECT_TRUE(!lines || us > prev) TH_LOG("bucket %u after %u", us, prev);
		EXPECT_NE(0U, c[0] + c[1] + c[2]);
		for (i = 0; i < 3; i++)
			sum[i] += c[i];
		prev = us;
		lines++;
	}
	EXPECT_TRUE(feof(f));
	fclose(f);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(samples, sum[i]) TH_LOG("column %d", i);
}

TEST_HARNESS_MAIN
