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

modprobe -q test_softirq 2>/dev/null ||
	insmod "$(find /lib/modules -name test_softirq.ko | head -n 1)" ||
	{ result 1 load_test_softirq; exit 1; }
echo "SOAK start duration_s=$DURATION kernel=$(uname -r) cpus=$(nproc)"

ctl stress 1 || { result 1 stress_start; exit 1; }

# third-party torture where it fits the config
torture_loaded=""
for t in $TORTURE; do
	if modprobe -q "$t" 2>/dev/null; then
		torture_loaded="$torture_loaded $t"
	else
		echo "SOAK torture $t not available"
	fi
done

stress-ng --sock 1 --udp 1 --udp-flood 1 --timer 1 --hrtimers 1 --cyclic 1 \
	--timeout "${DURATION}s" --metrics-brief >/tmp/stress-ng.out 2>&1 &
snpid=$!

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
		echo "$cycles $fails" >/tmp/hp.count
	done
) &
hppid=$!

start=$(cut -d. -f1 /proc/uptime)
while [ $(($(cut -d. -f1 /proc/uptime) - start)) -lt "$DURATION" ]; do
	sleep 30
	echo "SOAK progress t=$(($(cut -d. -f1 /proc/uptime) - start))s hotplug=$(cat /tmp/hp.count 2>/dev/null)"
done

touch /tmp/hp.stop
wait $hppid
read -r cycles fails </tmp/hp.count
echo "SOAK hotplug cycles=$cycles failures=$fails"
result "$([ "$fails" = 0 ] && [ "$cycles" -gt 0 ] && echo 0 || echo 1)" hotplug_churn "$cycles cycles, $fails failures"

wait $snpid
snrc=$?
grep -E 'stress-ng: (info|fail|error).*(passed|failed|skipped|metrc|successful)' /tmp/stress-ng.out | sed 's/^/SOAK /'
result $snrc stress_ng "exit status $snrc"

ctl stress 0
rc=$?
res=$(cat $D/result)
echo "SOAK $res"
lost=$(echo "$res" | sed -n 's/.* lost=\([-0-9]*\).*/\1/p')
raised=$(echo "$res" | sed -n 's/.* raised=\([0-9]*\).*/\1/p')
result "$([ $rc = 0 ] && [ "$lost" = 0 ] && [ "${raised:-0}" -gt 0 ] && echo 0 || echo 1)" \
	stress_nothing_lost "raised $raised, lost $lost"

for t in $torture_loaded; do
	rmmod "$t"
	# the module prints its verdict when it is unloaded
	v=$(dmesg | grep -E -- '--- End of test: (SUCCESS|FAILURE)' | grep -i "${t%torture}" | tail -n 1)
	echo "SOAK torture $t: ${v:-no verdict}"
	case $v in *SUCCESS*) result 0 "$t" ;; *) result 1 "$t" "${v:-no verdict}" ;; esac
done

rmmod test_softirq
result $? unload_test_softirq
