// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetloop: an RT network loop and a UDP flood over loopback.
 *
 *   rtnetloop loop [-c cpu] [-p prio] [-i interval_us] [-D seconds] [-H buckets]
 *	A cyclictest-style SCHED_FIFO loop (clock_nanosleep, TIMER_ABSTIME)
 *	which sends one UDP packet to 127.0.0.1 per cycle. Per cycle it
 *	records the wake-up latency and the cycle latency (expected wake-up
 *	to packet sent: the part the softirq processing of the send path is
 *	in), and the duration of the send alone. Prints a summary line and a
 *	histogram with 1 us buckets:
 *	  "<us> <cycles with that cycle latency> <... wake-up latency> <... send time>"
 *
 *   rtnetloop flood [-c cpu] [-D seconds] [-a address]
 *	SCHED_OTHER: sends UDP packets over loopback as fast as it can and
 *	prints packets sent and received per second. With -a, to that IPv4
 *	address instead, which may be a broadcast one (make run's veth
 *	raiser: into a veth pair, where nobody receives them).
 *
 *   rtnetloop feature IFNAME gro|tso on|off
 *	What 'ethtool -K IFNAME gro|tso on|off' does (ETHTOOL_SGRO, _STSO),
 *	for a guest without ethtool: make run's veth raiser turns GRO on at
 *	the receiving end and TSO off at the sending one, which is what
 *	makes veth hand the packets to the receiver's NAPI instance.
 *
 *   rtnetloop fifo PID PRIO
 *	What 'chrt -f -p PRIO PID' does, for a guest whose busybox has no
 *	chrt: make holders' IRQ_PRIO= moves a raiser's interrupt threads.
 *
 * A receiver thread drains the socket in the loop and flood modes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PORT_BASE	47000

static volatile sig_atomic_t stop;
static volatile uint64_t received;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void *receiver(void *arg)
{
	int fd = *(int *)arg;
	char buf[2048];

	for (;;) {
		if (recv(fd, buf, sizeof(buf), 0) > 0)
			received++;
		else if (errno != EINTR && errno != EAGAIN)
			break;
	}
	return NULL;
}

/* A bound receiving socket drained by a thread, and a sender connected to it. */
static int open_pair(int port, pthread_t *thr, int *rfd)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	int s;

	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*rfd = socket(AF_INET, SOCK_DGRAM, 0);
	if (*rfd < 0 || bind(*rfd, (struct sockaddr *)&a, sizeof(a)))
		die("receiver socket");
	setsockopt(*rfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
		die("sender socket");
	if (pthread_create(thr, NULL, receiver, rfd))
		die("pthread_create");
	return s;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rtnetloop loop [-c cpu] [-p prio] [-i interval_us] [-D s] [-H buckets]\n"
		"       rtnetloop flood [-c cpu] [-D s] [-a address]\n"
		"       rtnetloop feature IFNAME gro|tso on|off\n"
		"       rtnetloop fifo PID PRIO\n");
	exit(2);
}

static int loop(int cpu, int prio, long interval_us, long seconds, int buckets)
{
	uint64_t *hcyc, *hwake, *hsend, over_cyc = 0, over_wake = 0, over_send = 0, n = 0;
	uint64_t sum_cyc = 0, max_cyc = 0, max_wake = 0, max_send = 0, fails = 0;
	uint64_t min_cyc = UINT64_MAX, sent0;
	struct sched_param sp = { .sched_priority = prio };
	struct timespec next;
	pthread_t thr;
	char pkt[64] = "rtnetloop";
	int s, rfd, b;
	uint64_t end;

	hcyc = calloc(buckets, sizeof(*hcyc));
	hwake = calloc(buckets, sizeof(*hwake));
	hsend = calloc(buckets, sizeof(*hsend));
	if (!hcyc || !hwake || !hsend)
		die("calloc");
	s = open_pair(PORT_BASE, &thr, &rfd);
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		die("mlockall");
	pin(cpu);
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		die("sched_setscheduler");

	clock_gettime(CLOCK_MONOTONIC, &next);
	end = now_ns() + (uint64_t)seconds * 1000000000ull;
	sent0 = received;
	while (!stop) {
		uint64_t expected, t1, t2, cyc, wake;

		next.tv_nsec += interval_us * 1000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		expected = (uint64_t)next.tv_sec * 1000000000ull + next.tv_nsec;
		if (expected >= end)
			break;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			if (stop)
				break;
		t1 = now_ns();
		if (send(s, pkt, sizeof(pkt), 0) != sizeof(pkt))
			fails++;
		t2 = now_ns();
		wake = t1 > expected ? t1 - expected : 0;
		cyc = t2 > expected ? t2 - expected : 0;
		n++;
		sum_cyc += cyc;
		if (cyc > max_cyc)
			max_cyc = cyc;
		if (cyc < min_cyc)
			min_cyc = cyc;
		if (wake > max_wake)
			max_wake = wake;
		if (t2 - t1 > max_send)
			max_send = t2 - t1;
		b = cyc / 1000;
		if (b < buckets)
			hcyc[b]++;
		else
			over_cyc++;
		b = wake / 1000;
		if (b < buckets)
			hwake[b]++;
		else
			over_wake++;
		b = (t2 - t1) / 1000;
		if (b < buckets)
			hsend[b]++;
		else
			over_send++;
	}

	printf("rtnetloop cycles=%llu min_us=%llu avg_us=%llu max_us=%llu wake_max_us=%llu send_max_us=%llu overflows=%llu send_fails=%llu received=%llu\n",
	       (unsigned long long)n, (unsigned long long)(n ? min_cyc / 1000 : 0),
	       (unsigned long long)(n ? sum_cyc / n / 1000 : 0),
	       (unsigned long long)(max_cyc / 1000), (unsigned long long)(max_wake / 1000),
	       (unsigned long long)(max_send / 1000), (unsigned long long)over_cyc,
	       (unsigned long long)fails, (unsigned long long)(received - sent0));
	for (b = 0; b < buckets; b++)
		if (hcyc[b] || hwake[b] || hsend[b])
			printf("%06d %06llu %06llu %06llu\n", b, (unsigned long long)hcyc[b],
			       (unsigned long long)hwake[b], (unsigned long long)hsend[b]);
	printf("# overflows %06llu %06llu %06llu\n", (unsigned long long)over_cyc,
	       (unsigned long long)over_wake, (unsigned long long)over_send);
	return 0;
}

static int flood(int cpu, long seconds, const char *addr)
{
	char pkt[64] = "rtnetloop flood";
	uint64_t sent = 0, t0, t, r0;
	pthread_t thr;
	int s, rfd;

	s = open_pair(PORT_BASE + 1, &thr, &rfd);
	if (addr) {
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_port = htons(PORT_BASE + 1) };
		int on = 1;

		/*
		 * A socket of its own: the loopback one keeps 127.0.0.1 as its
		 * source, which no other route accepts. A subnet's broadcast
		 * address needs no neighbour.
		 */
		close(s);
		s = socket(AF_INET, SOCK_DGRAM, 0);
		if (s < 0)
			die("flood socket");
		setsockopt(s, SOL_SOCKET, SO_BROADCAST, &on, sizeof(on));
		if (inet_pton(AF_INET, addr, &a.sin_addr) != 1 ||
		    connect(s, (struct sockaddr *)&a, sizeof(a)))
			die("flood address");
	}
	pin(cpu);
	t0 = now_ns();
	r0 = received;
	t = t0;
	while (!stop && t - t0 < (uint64_t)seconds * 1000000000ull) {
		if (send(s, pkt, sizeof(pkt), 0) == sizeof(pkt))
			sent++;
		if (!(sent & 63))
			t = now_ns();
	}
	t = now_ns() - t0;
	/* let the receiver catch up with what is queued */
	usleep(300000);
	printf("flood seconds=%.3f sent=%llu received=%llu pps_sent=%.0f pps_received=%.0f\n",
	       t / 1e9, (unsigned long long)sent, (unsigned long long)(received - r0),
	       sent * 1e9 / t, (received - r0) * 1e9 / t);
	return 0;
}

/* 'ethtool -K IFNAME gro|tso on|off' for a guest without ethtool. */
static int feature(const char *ifname, const char *name, const char *val)
{
	struct ethtool_value ev = { .data = !strcmp(val, "on") };
	struct ifreq ifr = { 0 };
	int s;

	if (!strcmp(name, "gro"))
		ev.cmd = ETHTOOL_SGRO;
	else if (!strcmp(name, "tso"))
		ev.cmd = ETHTOOL_STSO;
	else
		usage();
	if (strcmp(val, "on") && strcmp(val, "off"))
		usage();
	s = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ev;
	if (s < 0 || ioctl(s, SIOCETHTOOL, &ifr))
		die("SIOCETHTOOL");
	close(s);
	return 0;
}

/* 'chrt -f -p PRIO PID' for a guest without chrt. */
static int fifo(const char *pid, const char *prio)
{
	struct sched_param sp;
	char *end1, *end2;
	long p = strtol(pid, &end1, 10), q = strtol(prio, &end2, 10);

	/* pid 0 would be the caller itself */
	if (*end1 || *end2 || p <= 0 || q < 1 || q > 99)
		usage();
	sp.sched_priority = q;
	if (sched_setscheduler(p, SCHED_FIFO, &sp))
		die("sched_setscheduler");
	return 0;
}

int main(int argc, char **argv)
{
	long interval = 1000, seconds = 10;
	int cpu = -1, prio = 80, buckets = 2000, opt;
	const char *mode, *addr = NULL;

	if (argc < 2)
		usage();
	mode = argv[1];
	if (!strcmp(mode, "feature") && argc == 5)
		return feature(argv[2], argv[3], argv[4]);
	if (!strcmp(mode, "fifo") && argc == 4)
		return fifo(argv[2], argv[3]);
	optind = 2;
	while ((opt = getopt(argc, argv, "c:p:i:D:H:a:")) != -1) {
		switch (opt) {
		case 'c': cpu = atoi(optarg); break;
		case 'p': prio = atoi(optarg); break;
		case 'i': interval = atol(optarg); break;
		case 'D': seconds = atol(optarg); break;
		case 'H': buckets = atoi(optarg); break;
		case 'a': addr = optarg; break;
		default: usage();
		}
	}
	if (interval <= 0 || seconds <= 0 || buckets <= 0 || prio < 1 || prio > 99)
		usage();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "loop"))
		return loop(cpu, prio, interval, seconds, buckets);
	if (!strcmp(mode, "flood"))
		return flood(cpu, seconds, addr);
	usage();
	return 2;
}
