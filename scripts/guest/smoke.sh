#!/bin/sh
# Smoke suite: is this the kernel and guest the tests assume?
n=0
fails=0
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n smoke.$2"
	else
		echo "not ok $n smoke.$2${3:+ # $3}"
		fails=$((fails + 1))
	fi
}
echo "TAP version 13"
echo "1..6"

grep -q 'PREEMPT_RT' /proc/version 2>/dev/null || uname -v | grep -q 'PREEMPT_RT'
result $? kernel_is_preempt_rt "$(uname -v)"

ok=0
for c in $(seq 0 $(($(nproc) - 1))); do
	grep -qx "ksoftirqd/$c" /proc/[0-9]*/comm 2>/dev/null || ok=1
done
result $ok ksoftirqd_exists_for_every_cpu

head -n 1 /proc/softirqs | grep -q CPU0 && grep -q 'NET_RX:' /proc/softirqs
result $? proc_softirqs_readable

ev=/sys/kernel/tracing/events/irq
[ -d $ev/softirq_entry ] && [ -d $ev/softirq_exit ] && [ -d $ev/softirq_raise ]
result $? tracefs_softirq_events_present

grep -q 'vec=%u \[action=%s\]' $ev/softirq_entry/format 2>/dev/null
result $? softirq_entry_format_unchanged

out=$(cyclictest -q -m -p95 -i1000 -D2 -t 2>&1)
echo "$out" | sed 's/^/# /'
echo "$out" | grep -q 'Max:'
result $? cyclictest_runs

[ $fails -eq 0 ]
