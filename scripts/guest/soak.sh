#!/bin/sh
# shellcheck shell=dash
# The soak (driven by scripts/soak.sh): for DURATION seconds, at once,
#  - the test_softirq stress mode: raisers on every CPU in every context,
#  - CPU hotplug churn of every non-boot CPU,
#  - stress-ng's network and timer stressors,
#  - a torture module (rcutorture, locktorture) where the kernel has it;
# then raised vs handled per path, hotplug cycles, verdicts, as "SOAK ..."
# lines and KTAP results. The host scans the kernel log.
DURATION=${DURATION:-600}
TORTURE=${TORTURE:-rcutorture locktorture}
D=/sys/kernel/debug/test_softirq
n=0

result() { # status name [comment]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2${3:+ # $3}"
	else
		echo "not ok $n $2${3:+ # $3}"
	fi
}

ctl() {
	echo "$*" >$D/control
}

# handler runs so far of the vectors the stress mode raises, all CPUs: the
# progress lines show whether the rate holds over the soak
softirqs() {
	awk '$1 ~ /^(HI|TASKLET|NET_RX|TIMER):$/ {
		s = 0
		for (i = 2; i <= NF; i++)
			s += $i
		printf "%s%s%s", sep, tolower($1), s
		sep = " "
	}' /proc/softirqs | sed 's/:/=/g'
}

modprobe test_softirq || { result 1 load_test_softirq; exit 1; }
echo "SOAK start duration_s=$DURATION kernel=$(uname -r) cpus=$(nproc)"

ctl stress 1 || { result 1 stress_start; exit 1; }

# Third-party torture where it fits the config. The torture framework runs
# one test at a time: the first half of the soak rcutorture, the second
# locktorture. Two rcutorture checks assume grace periods and callbacks
# complete within wall-clock bounds which an emulated CPU under this load
# does not give (both warned in a KASAN soak, with nothing wrong in the
# readers' verdict): the forward-progress test and the check that the
# pipeline drained during each stutter pause. Both are off.
torture_start() {
	case $1 in
	rcutorture) modprobe -q rcutorture fwd_progress=0 stutter=0 2>/dev/null ;;
	*) modprobe -q "$1" 2>/dev/null ;;
	esac
}

torture_stop() {
	local v
	rmmod "$1" || { result 1 "$1" "rmmod failed"; return; }
	# the module prints its verdict when it is unloaded
	v=$(dmesg | grep -E -- '--- End of test: (SUCCESS|FAILURE)' | grep -- "${1%torture}-torture:" | tail -n 1)
	echo "SOAK torture $1: ${v:-no verdict}"
	case $v in *SUCCESS*) result 0 "$1" ;; *) result 1 "$1" "${v:-no verdict}" ;; esac
}

# cyclic with SCHED_FIFO: a SCHED_DEADLINE task's admitted bandwidth would
# make offlining CPU 1 fail with EBUSY (dl_bw_deactivate()), by design
stress-ng --sock 1 --udp 1 --udp-flood 1 --timer 1 --cyclic 1 \
	--cyclic-policy fifo --timeout "${DURATION}s" --metrics-brief --verbose \
	>/tmp/stress-ng.out 2>&1 &
snpid=$!
# hrtimers without privilege. Given CAP_SYS_NICE, stress-ng makes its 32
# timer processes SCHED_RR 49, each taking a signal every 0-500 us: on two
# emulated CPUs that is an RT overload which leaves every SCHED_OTHER task
# (ksoftirqd, the task raisers, the hotplug loop) the fair server's share
# and measures starvation, not softirq handling (90 s, x86_64: 0.5 M raises
# and 45 hotplug cycles with SCHED_RR, 2.5 M and 62 without). As nobody it
# runs the same processes and timers at SCHED_OTHER.
su -s /bin/sh nobody -c "exec stress-ng --hrtimers 1 --timeout ${DURATION}s --metrics-brief --verbose" \
	>/tmp/stress-ng-hrtimers.out 2>&1 &
hrpid=$!
# stress-ng's parent reads every CPU's cache details from sysfs while it
# sets up, which does not survive a CPU going away underneath: with the
# churn running it segfaulted in the loop freeing that list and took its
# stressors with it. It reads them after printing "dispatching hogs" (not
# a safe marker: the crash came 9 s after it once) and before forking the
# stressors, which --verbose reports as "N stressors started". Churn once
# both instances printed that.
i=0
while [ $i -lt 120 ]; do
	[ "$(grep -l 'stressors\{0,1\} started' /tmp/stress-ng.out /tmp/stress-ng-hrtimers.out \
		2>/dev/null | wc -l)" = 2 ] && break
	i=$((i + 1))
	sleep 1
done
if [ $i -lt 120 ]; then
	echo "SOAK stress-ng stressors started after ${i}s"
else
	echo "SOAK stress-ng stressors not started after ${i}s: churning anyway, its crash would fail stress_ng"
fi

# The hotplug loop and the bookkeeping below drive the soak: at nice 0 they
# share the CPUs with some 40 runnable stress-ng processes and get a slice
# every few seconds (in a KASAN soak one 10 s progress step took a minute,
# and 141 s brought 16 hotplug cycles). They inherit this from the shell.
# The AP side of every hotplug step runs in cpuhp/<cpu>, a SCHED_OTHER
# kthread which otherwise queues behind the stressors on the CPU being
# churned: same nice as the loop which drives it.
# shellcheck disable=SC2046 # a list of pids
renice -n -10 -p $$ $(ps -o pid,comm | awk '$2 ~ /^cpuhp\// { print $1 }') >/dev/null

# CPU hotplug churn, until told to stop
rm -f /tmp/hp.stop
(
	cycles=0
	fails=0
	while [ ! -e /tmp/hp.stop ]; do
		for c in /sys/devices/system/cpu/cpu[1-9]*/online; do
			[ -e "$c" ] || continue
			if echo 0 >"$c" && echo 1 >"$c"; then
				cycles=$((cycles + 1))
			else
				fails=$((fails + 1))
				echo 1 >"$c" 2>/dev/null
				sleep 1
			fi
		done
		# renamed into place: a progress line never reads a half-written file
		echo "$cycles $fails" >/tmp/hp.count.new && mv /tmp/hp.count.new /tmp/hp.count
	done
) &
hppid=$!

# shellcheck disable=SC2086 # a list of module names
set -- $TORTURE
current=""
start=$(cut -d. -f1 /proc/uptime)
slot=0
while :; do
	t=$(($(cut -d. -f1 /proc/uptime) - start))
	# torture test number i runs in the i-th part of the soak
	want=$((t * $# / DURATION + 1))
	if [ "$want" != "$slot" ] && [ "$want" -le $# ]; then
		[ -n "$current" ] && torture_stop "$current"
		slot=$want
		eval "current=\${$slot}"
		if torture_start "$current"; then
			echo "SOAK torture $current started at t=${t}s"
		else
			echo "SOAK torture $current not available"
			current=""
		fi
	fi
	[ "$t" -lt "$DURATION" ] || break
	sleep 10
	echo "SOAK progress t=${t}s hotplug=$(cat /tmp/hp.count 2>/dev/null) $(softirqs)"
done
[ -n "$current" ] && torture_stop "$current"

touch /tmp/hp.stop
wait $hppid
read -r cycles fails </tmp/hp.count
echo "SOAK hotplug cycles=$cycles failures=$fails"
result "$([ "$fails" = 0 ] && [ "$cycles" -gt 0 ] && echo 0 || echo 1)" hotplug_churn "$cycles cycles, $fails failures"

wait $snpid
snrc=$?
wait $hrpid
hrrc=$?
grep -E 'stress-ng: (info|fail|error).*(passed|failed|skipped|metrc|successful)' \
	/tmp/stress-ng.out /tmp/stress-ng-hrtimers.out | sed 's/^[^:]*:/SOAK /'
result $((snrc | hrrc)) stress_ng "exit status $snrc, hrtimers as nobody $hrrc"

ctl stress 0
rc=$?
res=$(cat $D/result)
echo "SOAK $res"
lost=$(echo "$res" | sed -n 's/.* lost=\([-0-9]*\).*/\1/p')
raised=$(echo "$res" | sed -n 's/.* raised=\([0-9]*\).*/\1/p')
result "$([ $rc = 0 ] && [ "$lost" = 0 ] && [ "${raised:-0}" -gt 0 ] && echo 0 || echo 1)" \
	stress_nothing_lost "raised $raised, lost $lost"

rmmod test_softirq
result $? unload_test_softirq
