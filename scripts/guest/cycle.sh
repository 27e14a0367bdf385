#!/bin/sh
# make cycle, inside the guest: the BH fast path. The measuring module's cycle
# loop with a raise (local_bh_disable(); tasklet_schedule();
# local_bh_enable()) and without one (local_bh_disable(); local_bh_enable()),
# then refscale's incpercpubh reader. Prints "BENCH ..." lines.
#
# Not refscale's bh reader: it calls local_bh_disable() inside
# preempt_disable(), which on PREEMPT_RT takes the non-preemptible branch
# (no local lock, no per-task accounting), a path RT callers do not take;
# and that branch warns (DEBUG_LOCKS_WARN_ON(softirq_ctrl.cnt)) whenever the
# reader preempted a task inside a BH section, which it did on the
# unpatched kernel here. incpercpubh is a preemptible BH section.
#
# Environment: CPU (1), LOOPS (cycle iterations, 200000), REPS (5),
# RS_LOOPS and RS_RUNS (refscale loops per experiment and experiments),
# REFSCALE_TYPES (incpercpubh).

CPU=${CPU:-1}
LOOPS=${LOOPS:-200000}
REPS=${REPS:-5}
RS_LOOPS=${RS_LOOPS:-200000}
RS_RUNS=${RS_RUNS:-5}
D=/sys/kernel/debug/test_softirq
n=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2 # status $1"; fi
}

echo "BENCH boot kernel=$(uname -r) cpus=$(nproc) cpu=$CPU loops=$LOOPS reps=$REPS"
modprobe test_softirq
result $? load_test_softirq
for r in $(seq "$REPS"); do
	for raise in 1 0; do
		rc=0
		echo "cycle $CPU $LOOPS $raise" >$D/control || rc=1
		[ $rc -ne 0 ] || echo "BENCH $(cat $D/result) rep=$r"
		result $rc "cycle_raise${raise}_$r"
	done
done
rmmod test_softirq

# refscale prints its per-experiment averages (ns per loop) after
# "END OF TEST"; the median of a run's experiments is its figure (the
# first experiment warms up). The clocksource must have settled first: an
# x86 boot switches to the TSC after its refined calibration, ~1.5 s in.
while [ "$(cut -d. -f1 /proc/uptime)" -lt 3 ]; do
	sleep 1
done
for t in ${REFSCALE_TYPES:-incpercpubh}; do
	dmesg -c >/dev/null
	# shutdown_secs=0: 7.3's refscale defaults it to 300 also as a module
	# (its IS_MODULE() test names CONFIG_REPRO_TEST, which does not exist)
	# and powers the machine off at its end; 6.12's (whose parameter is
	# shutdown, off for a module) ignores the unknown one with a notice
	modprobe refscale scale_type="$t" nreaders=1 loops="$RS_LOOPS" nruns="$RS_RUNS" \
		holdoff=0 shutdown_secs=0 verbose=0
	rc=$?
	# 6.12's refscale has no incpercpubh: "Invalid argument", and it
	# lists the types it has
	if [ $rc -ne 0 ] && dmesg | grep -q 'invalid scale.type'; then
		n=$((n + 1))
		echo "ok $n refscale_$t # SKIP refscale of $(uname -r) has no scale_type=$t"
		continue
	fi
	i=0
	while [ $rc -eq 0 ] && [ $i -lt 600 ] && ! dmesg | grep -q 'END OF TEST'; do
		sleep 1
		i=$((i + 1))
	done
	sleep 1
	avg=$(dmesg | awk '/END OF TEST/ { on = 1; k = 0; next }
		on { sub(/^\[[ 0-9.]*\] */, ""); if ($0 ~ /^[0-9]+\t[0-9.]+$/) { split($0, f, "\t"); v[++k] = f[2] } }
		END {
			for (i = 2; i <= k; i++)
				for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
			if (k) printf "%.3f %d\n", (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2, k
		}')
	[ -n "$avg" ] || rc=1
	echo "BENCH refscale type=$t ns_per_loop=${avg% *} runs=${avg#* }"
	rmmod refscale
	result $rc "refscale_$t"
done
