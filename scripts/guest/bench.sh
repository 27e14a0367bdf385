#!/bin/sh
# shellcheck shell=dash
# One benchmark boot (driven by scripts/run.sh): victim, overhead, RT network
# loop and cyclictest under a softirq storm. Results are "BENCH ..." lines
# and histograms between "softirq-rt: hist <name> begin/end" markers; each
# phase also prints a KTAP result so that the host notices one that broke.
#
# Parameters (environment): CPU VICTIM_MS VICTIM_LOADS CYCLE_LOOPS FLOOD_S NET_S CT_S
# INTERVAL_US BUCKETS
CPU=${CPU:-1}
VICTIM_MS=${VICTIM_MS:-3000}
VICTIM_LOADS=${VICTIM_LOADS:-0 2 1 3 5 4}
CYCLE_LOOPS=${CYCLE_LOOPS:-100000}
FLOOD_S=${FLOOD_S:-3}
NET_S=${NET_S:-20}
CT_S=${CT_S:-20}
INTERVAL_US=${INTERVAL_US:-1000}
BUCKETS=${BUCKETS:-2000}
D=/sys/kernel/debug/test_softirq
T=/sys/kernel/tracing
n=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2 # status $1"; fi
}

# Context switches of all ksoftirqd threads so far.
ksoftirqd_cs() {
	local total=0 p c
	for p in /proc/[0-9]*; do
		read -r c <"$p/comm" 2>/dev/null || continue
		case $c in ksoftirqd/*) ;; *) continue ;; esac
		total=$((total + $(awk '/ctxt_switches/ {s += $2} END {print s + 0}' "$p/status")))
	done
	echo "$total"
}

# A command to the module; its status is the write's.
ctl() {
	echo "$*" >$D/control
}

uptime_ms() {
	awk '{printf "%d\n", $1 * 1000}' /proc/uptime
}

# Every softirq handler the victim thread ran, by vector, from the
# softirq_entry tracepoint: the module counts its own tasklets only.
trace_on() {
	[ -d $T/events/irq/softirq_entry ] || return 0
	echo 4096 >$T/buffer_size_kb
	echo >$T/trace
	echo 1 >$T/events/irq/softirq_entry/enable
}

trace_victim() { # load own-vector
	[ -d $T/events/irq/softirq_entry ] || return 0
	echo 0 >$T/events/irq/softirq_entry/enable
	awk -v load="$1" -v own_vec="$2" '
		/softirq_entry:/ && / tsq_victim/ {
			a = $0; sub(/.*action=/, "", a); sub(/\].*/, "", a)
			if (a == own_vec) own++; else { foreign++; by[a]++ }
		}
		END {
			s = ""
			for (v in by) s = s (s == "" ? "" : ",") v ":" by[v]
			printf "BENCH victim_trace load=%d own_vectors=%d foreign_vectors=%d foreign_by_vector=%s\n",
				load, own, foreign, (s == "" ? "-" : s)
		}' $T/trace
	echo >$T/trace
}

modprobe test_softirq || { result 1 load_test_softirq; exit 1; }
echo "BENCH boot kernel=$(uname -r) cpus=$(nproc) cpu=$CPU victim_ms=$VICTIM_MS cycle_loops=$CYCLE_LOOPS flood_s=$FLOOD_S net_s=$NET_S ct_s=$CT_S interval_us=$INTERVAL_US"

# 1. victim: unloaded, the hard interrupt alone (control), foreign work on
# another vector (hi), on its own vector (tasklet), and NET_RX with its own
# control. The trace counts every vector except the victim's own.
for load in $VICTIM_LOADS; do
	own_vec=TASKLET
	[ "$load" -lt 4 ] || own_vec=NET_RX
	trace_on
	ctl victim "$CPU" "$load" "$VICTIM_MS"
	rc=$?
	echo "BENCH $(cat $D/result)"
	trace_victim "$load" "$own_vec"
	result $rc "victim_load_$load"
done

# 2. overhead: BH cycle cost, UDP loopback packets/s on a quiet system
ctl cycle "$CPU" "$CYCLE_LOOPS"
rc=$?
echo "BENCH $(cat $D/result)"
result $rc cycle_cost
cs0=$(ksoftirqd_cs)
t0=$(uptime_ms)
out=$(rtnetloop flood -c "$CPU" -D "$FLOOD_S")
rc=$?
cs1=$(ksoftirqd_cs)
t1=$(uptime_ms)
echo "BENCH $out ksoftirqd_cs_per_s=$(((cs1 - cs0) * 1000 / (t1 - t0)))"
result $rc udp_flood

# 3. + 4. RT network loop and cyclictest under the storm: hard interrupt
# raised foreign tasklets and timers on $CPU, a SCHED_OTHER UDP flood there
ctl storm "$CPU" 1 || { result 1 storm_start; exit 1; }
rtnetloop flood -c "$CPU" -D 100000 >/dev/null &
fpid=$!
cs0=$(ksoftirqd_cs)
t0=$(uptime_ms)
rtnetloop loop -c "$CPU" -p 80 -i "$INTERVAL_US" -D "$NET_S" -H "$BUCKETS" >/tmp/net.out
result $? rt_network_loop
cyclictest -q -m -p95 -i"$INTERVAL_US" -h"$BUCKETS" -D"$CT_S" -a -t >/tmp/ct.out 2>&1
result $? cyclictest
cs1=$(ksoftirqd_cs)
t1=$(uptime_ms)
kill "$fpid"
wait "$fpid"
ctl storm "$CPU" 0
result $? storm_stop
echo "BENCH $(cat $D/result) ksoftirqd_cs_per_s=$(((cs1 - cs0) * 1000 / (t1 - t0)))"
echo "BENCH $(grep '^rtnetloop ' /tmp/net.out)"
echo "BENCH cyclictest $(grep -E '^# (Min|Avg|Max) Latencies|^# Histogram Overflows' /tmp/ct.out |
	sed 's/^# //; s/ Latencies: */=/; s/Histogram Overflows: */overflows=/' | tr ' ' ',' | tr '\n' ' ')"

echo "softirq-rt: hist netloop begin"
grep -v '^rtnetloop ' /tmp/net.out
echo "softirq-rt: hist netloop end"
echo "softirq-rt: hist cyclictest begin"
# non-empty buckets only
awk '/^[0-9]/ { for (i = 2; i <= NF; i++) if ($i + 0) { print; next } } /^#/' /tmp/ct.out
echo "softirq-rt: hist cyclictest end"
rmmod test_softirq
result $? unload_test_softirq
