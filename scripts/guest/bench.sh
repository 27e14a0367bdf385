#!/bin/sh
# shellcheck shell=dash
# One benchmark boot (driven by scripts/run.sh): victim, realistic raisers,
# overhead, RT network loop and cyclictest under a softirq storm. Results
# are "BENCH ..." lines and histograms between "softirq-rt: hist <name>
# begin/end" markers; each phase also prints a KTAP result so that the host
# notices one that broke.
#
# Parameters (environment): CPU VICTIM_MS VICTIM_LOADS CYCLE_LOOPS FLOOD_S NET_S CT_S
# INTERVAL_US BUCKETS PHASES RAISERS NET_PORT RTLA_S RTLA_AA_US PHASE_US IRQ_PRIO
# PHASES: which of "victim raisers overhead storm holders" to run (all but
# holders by default; run.sh's -icount boots run the victim alone, holders.sh
# boots holders alone). RAISERS: which real kernel
# paths raise softirqs on the victim's CPU while it runs without the
# module's timer: rps (a loopback flood steered there), blk (virtio-blk
# completions), net (virtio-net receive of a TCP stream from the host's
# port NET_PORT over QEMU user networking), veth (a SCHED_OTHER sender on
# the victim's CPU into a veth pair, GRO on at the receiving end and TSO
# off at the sending one: the sender raises NET_RX itself), usb
# (usb-storage reads through qemu-xhci: every URB giveback is BH work
# queued by the HCD's interrupt thread), bhwq_task and bhwq_irq (the
# module's BH workqueue items queued on the victim's CPU by a SCHED_OTHER
# kthread, or by an interrupt thread); one without its device skips.
CPU=${CPU:-1}
VICTIM_MS=${VICTIM_MS:-3000}
VICTIM_LOADS=${VICTIM_LOADS:-0 2 1 3 5 4}
CYCLE_LOOPS=${CYCLE_LOOPS:-100000}
FLOOD_S=${FLOOD_S:-3}
NET_S=${NET_S:-20}
CT_S=${CT_S:-20}
INTERVAL_US=${INTERVAL_US:-1000}
BUCKETS=${BUCKETS:-2000}
PHASES=${PHASES:-victim raisers overhead storm}
RAISERS=${RAISERS:-rps blk net veth usb bhwq_task bhwq_irq}
NET_PORT=${NET_PORT:-}
RTLA_S=${RTLA_S:-10}
RTLA_AA_US=${RTLA_AA_US:-100}
# a delay before each victim run: under -icount a boot repeats its
# predecessor almost exactly, so run.sh gives each run its own offset
# against the tick and the rest of the system to sample interleavings
PHASE_US=${PHASE_US:-0}
# the raisers' own load runs on the other CPU
OTHER=$((CPU == 0 ? 1 : 0))
D=/sys/kernel/debug/test_softirq
T=/sys/kernel/tracing
n=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2 # status $1"; fi
}

# The pids of the tasks whose comm matches the shell pattern $1 (the
# guest's busybox has no pgrep).
pids_of() {
	local p c
	for p in /proc/[0-9]*; do
		read -r c 2>/dev/null <"$p/comm" || continue
		# shellcheck disable=SC2254 # $1 is a pattern
		case $c in $1) echo "${p#/proc/}" ;; esac
	done
}

# Context switches of all ksoftirqd threads so far.
ksoftirqd_cs() {
	local total=0 p
	for p in $(pids_of 'ksoftirqd/*'); do
		total=$((total + $(awk '/ctxt_switches/ {s += $2} END {print s + 0}' "/proc/$p/status" 2>/dev/null || echo 0)))
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

# Every softirq handler the victim thread ran, by vector, and how long the
# foreign ones took (entry to exit), from the softirq tracepoints: the
# module counts its own tasklets only. Handlers do not nest in a thread.
trace_on() {
	[ -d $T/events/irq/softirq_entry ] || return 0
	echo 4096 >$T/buffer_size_kb
	echo >$T/trace
	echo 1 >$T/events/irq/softirq_entry/enable
	echo 1 >$T/events/irq/softirq_exit/enable
}

trace_victim() { # load own-vector [raiser]
	[ -d $T/events/irq/softirq_entry ] || return 0
	echo 0 >$T/events/irq/softirq_entry/enable
	echo 0 >$T/events/irq/softirq_exit/enable
	awk -v load="$1" -v own_vec="$2" -v raiser="${3:+ raiser=$3}" '
		# start: when the foreign handler in progress began, -1 for none
		BEGIN { start = -1 }
		function ts(  i) {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^[0-9]+\.[0-9]+:$/)
					return substr($i, 1, length($i) - 1)
			return -1
		}
		/softirq_entry:/ && / tsq_victim/ {
			a = $0; sub(/.*action=/, "", a); sub(/\].*/, "", a)
			if (a == own_vec) { own++; start = -1 }
			else { foreign++; by[a]++; start = ts() }
		}
		/softirq_exit:/ && / tsq_victim/ {
			if (start >= 0 && ts() >= start)
				us += (ts() - start) * 1000000
			start = -1
		}
		END {
			s = ""
			for (v in by) s = s (s == "" ? "" : ",") v ":" by[v]
			printf "BENCH victim_trace load=%d%s own_vectors=%d foreign_vectors=%d foreign_us=%.0f foreign_by_vector=%s\n",
				load, raiser, own, foreign, us, (s == "" ? "-" : s)
		}' $T/trace
	echo >$T/trace
}

modprobe test_softirq || { result 1 load_test_softirq; exit 1; }
echo "BENCH boot kernel=$(uname -r) cpus=$(nproc) cpu=$CPU victim_ms=$VICTIM_MS cycle_loops=$CYCLE_LOOPS flood_s=$FLOOD_S net_s=$NET_S ct_s=$CT_S interval_us=$INTERVAL_US"

# The victim's duration histograms of its last run, if the module has them.
victim_hist() { # name
	[ -r $D/histogram ] || return 0
	echo "softirq-rt: hist victim$1 begin"
	cat $D/histogram
	echo "softirq-rt: hist victim$1 end"
}

# victim run: load own-vector [raiser]
victim_run() {
	[ "$PHASE_US" = 0 ] || usleep "$PHASE_US"
	trace_on
	ctl victim "$CPU" "$1" "$VICTIM_MS"
	rc=$?
	echo "BENCH $(cat $D/result)${3:+ raiser=$3}"
	trace_victim "$1" "$2" "$3"
	victim_hist "${3:-$1}"
}

has_phase() {
	case " $PHASES " in *" $1 "*) return 0 ;; esac
	return 1
}

# The interrupt lines of device $1 (virtio0, xhci_hcd, ...) but a virtio
# config interrupt, moved to the victim's CPU: their threaded handlers
# follow.
irq_to_victim() {
	local irqs irq
	irqs=$(awk -v dev="$1" '$NF ~ "^" dev "($|-)" && $NF !~ /config/ { sub(":", "", $1); print $1 }' /proc/interrupts)
	[ -n "$irqs" ] || return 1
	for irq in $irqs; do
		echo "$CPU" >/proc/irq/"$irq"/smp_affinity_list || return 1
	done
	raiser_irqs=$(echo "$irqs" | tr '\n' ' ' | sed 's/ $//; s/ /,/g')
	echo "BENCH raiser_irq dev=$1 irqs=$raiser_irqs cpu=$CPU"
}

# The block device whose disk is a usb-storage one (sda, ...), if any.
usb_disk() {
	local d
	for d in /sys/block/sd*; do
		[ -e "$d" ] || continue
		case $(readlink -f "$d/device") in */usb*) basename "$d"; return 0 ;; esac
	done
	return 1
}

# The victim CPU's column of /proc/softirqs, "VEC=count ..."
softirqs_cpu() {
	awk -v c="CPU$CPU" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) col = i + 1; next }
		{ sub(":", "", $1); printf "%s=%s ", $1, $col }' /proc/softirqs
}

# What a raiser raised on the victim's CPU, whoever ran it: the
# difference of two softirqs_cpu snapshots.
softirqs_delta() { # raiser before after
	echo "$2 $3" | awk -v r="$1" '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] in a) d[kv[1]] = kv[2] - a[kv[1]]; else a[kv[1]] = kv[2] }
		s = ""; for (k in d) if (d[k]) s = s (s == "" ? "" : ",") k ":" d[k]
		printf "BENCH raiser_softirqs raiser=%s raised_on_cpu=%s\n", r, (s == "" ? "-" : s) }'
}

# Start raiser $1's load in the background (pid in $rpid); 1: its device
# is missing, 2: it broke.
raiser_start() {
	rpid=
	: >/tmp/raiser.on
	case $1 in
	rps)
		[ -w /sys/class/net/lo/queues/rx-0/rps_cpus ] || return 1
		printf '%x\n' $((1 << CPU)) >/sys/class/net/lo/queues/rx-0/rps_cpus
		rtnetloop flood -c "$OTHER" -D 100000 >/dev/null &
		rpid=$!
		;;
	blk)
		[ -b /dev/vda ] || return 1
		irq_to_victim "$(basename "$(readlink /sys/block/vda/device)")" || return 1
		taskset -c "$OTHER" sh -c 'while [ -e /tmp/raiser.on ]; do dd if=/dev/vda of=/dev/null bs=4k iflag=direct 2>/dev/null; done' &
		rpid=$!
		;;
	veth)
		# busybox ip creates the peer under a name of its own
		ip link add tsqv0 type veth || return 2
		peer=$(awk -v i="$(cat /sys/class/net/tsqv0/iflink)" \
			'FILENAME ~ /ifindex$/ && $1 == i { split(FILENAME, p, "/"); print p[5] }' \
			/sys/class/net/*/ifindex)
		ip link set dev "$peer" name tsqv1 || return 2
		# veth hands a packet to the peer's NAPI instance (GRO on there)
		# only if the sender cannot make TSO packets
		rtnetloop feature tsqv1 gro on && rtnetloop feature tsqv0 tso off || return 2
		ip link set tsqv1 up && ip link set tsqv0 up &&
			ip addr add 10.77.0.1/24 broadcast 10.77.0.255 dev tsqv0 || return 2
		echo "BENCH raiser_dev dev=tsqv0->tsqv1 gro=on tso=off sender_cpu=$CPU"
		rtnetloop flood -c "$CPU" -a 10.77.0.255 -D 100000 >/dev/null &
		rpid=$!
		;;
	usb)
		disk=$(usb_disk) || return 1
		irq_to_victim xhci_hcd || return 1
		# SCSI completions raise BLOCK where usb-storage's thread runs:
		# on the other CPU, as the reader
		for p in $(pids_of usb-storage); do
			taskset -p -c "$OTHER" "$p" >/dev/null
		done
		taskset -c "$OTHER" sh -c "while [ -e /tmp/raiser.on ]; do dd if=/dev/$disk of=/dev/null bs=4k iflag=direct 2>/dev/null; done" &
		rpid=$!
		;;
	bhwq_task) ctl bhwq "$CPU" 1 || return 2 ;;
	bhwq_irq) ctl bhwq "$CPU" 2 || return 2 ;;
	net)
		[ -n "$NET_PORT" ] && [ -d /sys/class/net/eth0 ] || return 1
		ip link set eth0 up && ip addr add 10.0.2.15/24 dev eth0 2>/dev/null
		irq_to_victim "$(basename "$(readlink /sys/class/net/eth0/device)")" || return 1
		taskset -c "$OTHER" sh -c "while [ -e /tmp/raiser.on ]; do nc 10.0.2.2 $NET_PORT >/dev/null; sleep 0.1; done" &
		rpid=$!
		;;
	*) return 1 ;;
	esac
	sleep 1
	# a load which died at once is a broken raiser, not a missing device
	[ -z "$rpid" ] || kill -0 "$rpid" 2>/dev/null || return 2
}

# A raiser's loop and the command it is running (a dd of the whole disk)
# are killed, not waited for. The loop is stopped first, so that it cannot
# start another command meanwhile; the guest's busybox has no pkill.
raiser_stop() {
	rm -f /tmp/raiser.on
	if [ -n "$rpid" ]; then
		kill -STOP "$rpid" 2>/dev/null
		# one awk for all: busybox awk stops at a file it cannot open
		cat /proc/[0-9]*/status 2>/dev/null |
			awk -v r="$rpid" '$1 == "Pid:" { p = $2 } $1 == "PPid:" && $2 == r { print p }' |
			while read -r c; do kill "$c" 2>/dev/null; done
		{ kill "$rpid"; kill -CONT "$rpid"; wait "$rpid"; } 2>/dev/null
	fi
	[ "$1" != rps ] || echo 0 >/sys/class/net/lo/queues/rx-0/rps_cpus
	[ "$1" != veth ] || ip link del tsqv0 2>/dev/null
	case $1 in bhwq_*) ctl bhwq "$CPU" 0 && echo "BENCH $(cat $D/result) raiser=$1" ;; esac
	return 0
}

# 1. victim: unloaded, the hard interrupt alone (control), foreign work on
# another vector (hi), on its own vector (tasklet), and NET_RX with its own
# control. The trace counts every vector except the victim's own.
if has_phase victim; then
	for load in $VICTIM_LOADS; do
		own_vec=TASKLET
		[ "$load" -lt 4 ] || own_vec=NET_RX
		victim_run "$load" "$own_vec"
		result $rc "victim_load_$load"
	done
fi

# 1b. the victim without the module's timer while a real kernel path
# raises softirqs on its CPU: what does it run, what does it pay?
if has_phase raisers; then
	for r in $RAISERS; do
		raiser_start "$r"
		rc=$?
		if [ $rc != 0 ]; then
			raiser_stop "$r"
			if [ $rc = 1 ]; then
				echo "ok $((n += 1)) victim_raiser_$r # SKIP no device"
			else
				result $rc "victim_raiser_$r"
			fi
			continue
		fi
		s0=$(softirqs_cpu)
		victim_run 0 TASKLET "$r"
		softirqs_delta "$r" "$s0" "$(softirqs_cpu)"
		raiser_stop "$r"
		result $rc "victim_raiser_$r"
	done
fi

# 1c. who made the victim wait: each raiser again, with the scheduler's
# events traced as well. A section that blocked ends when the holder of
# what the victim waited for (the BH lock, a callback lock) released it,
# which is what woke the victim, so the waker is the holder (the last one
# of a chain: the task which had the lock when the victim blocked may be
# another); the handler the holder was in when the victim blocked is the
# foreign work it waited for, if any.
# Output per raiser: "BENCH holders" lines by holder and vector (sections,
# time from switching out to switching back in, softirq handlers the
# holder started meanwhile, sections in which ksoftirqd ran meanwhile),
# "BENCH foreign_ran" lines by vector for the foreign handlers the victim
# ran itself (but foreign tasklets: its own vector is TASKLET), "BENCH
# wake_delay" lines for the time from its timer's wake-up to running, by
# the task the timer interrupted (a wait outside the sections, which the
# module does not count; it includes the wake-up from idle), "BENCH
# holder_how" lines for the sections which ended at the release of an
# interrupt thread that was in no handler when the victim blocked, by
# where that thread stood then (who last woke it, and whether after the
# victim's own wake-up, or how it last left the CPU: waiting for the lock
# itself, or preempted), then who woke it during the wait, "BENCH
# irq_blocked" lines for every switch out in state D of an interrupt
# thread on the victim's CPU, by the task which ran next, "BENCH
# holder_stack" lines (HOLDER_STACKS=1) for their stacks, "BENCH preempted"
# lines by preempting task, the module's result, and the trace buffer's
# overruns (any makes the rest a guess). Events from all CPUs are read (a
# remote wake-up counts), switches on the victim's only. Tracing slows
# both kernels, not alike, so the figures tell who and which vector, not
# make run's ratios.
holders_run() { # raiser
	local e rc=0 trig
	[ -d $T/events/sched/sched_waking ] || return 1
	echo 16384 >$T/buffer_size_kb
	echo >$T/trace
	for e in sched/sched_switch sched/sched_waking irq/softirq_entry irq/softirq_exit; do
		echo 1 >$T/events/$e/enable
	done
	# HOLDER_STACKS=1: where interrupt threads block (a stack at each
	# of their switches out in state D)
	trig='stacktrace if prev_state == 2 && prev_comm ~ "irq/*"'
	# a trigger the kernel refused would read as "no blocks": say so
	[ "${HOLDER_STACKS:-0}" = 0 ] || echo "$trig" >$T/events/sched/sched_switch/trigger ||
		echo "BENCH holder_stack_trigger raiser=$1 refused"
	ctl victim "$CPU" 0 "$VICTIM_MS" || rc=2
	for e in sched/sched_switch sched/sched_waking irq/softirq_entry irq/softirq_exit; do
		echo 0 >$T/events/$e/enable
	done
	[ "${HOLDER_STACKS:-0}" = 0 ] || echo "!$trig" >$T/events/sched/sched_switch/trigger
	echo "BENCH $(cat $D/result) raiser=$1"
	# lost events make every figure below a guess: say so
	echo "BENCH holders_overrun raiser=$1 events=$(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')"
	awk -v r="$1" -v cpu="$(printf '[%03d]' "$CPU")" '
		# Tasks are keyed by "comm-pid" ($1): ksoftirqd/0 and ksoftirqd/1
		# are different tasks. comm() strips the pid and the CPU for output.
		function comm(s) { sub(/-[0-9]+$/, "", s); sub(/\/[0-9]+$/, "", s); return s }
		function field(name,  x) { x = $0; sub(".*" name "=", "", x); sub(/ .*/, "", x); return x }
		# the CPU field, the irq flags after it, the timestamp (us)
		function parse(  i) {
			for (i = 2; i <= NF; i++)
				if ($i ~ /^\[[0-9]+\]$/) break
			ecpu = $i; flags = $(i + 1)
			for (i++; i <= NF; i++)
				if ($i ~ /^[0-9]+\.[0-9]+:$/)
					return substr($i, 1, length($i) - 1) * 1000000
			return -1
		}
		function add(k, d) { n[k]++; us[k] += d; if (d > max[k]) max[k] = d }
		# How each task last left a CPU, who last woke it and whether
		# it ran since, on every CPU: at a blocked section this says
		# where the task whose release will end it stood (woken by a
		# release which handed it the lock, preempted, or blocked
		# waiting for the lock itself).
		function how(c) {
			if (c in pend && pend[c] != "")
				return "woken_by_" pend[c] (wt[c] > vwoke ? "_after_victim" : "_before_victim")
			return c in ost ? "out_" substr(ost[c], 1, 1) : "?"
		}
		/ sched_switch: / {
			t = parse()
			prev = field("prev_comm") "-" field("prev_pid")
			next_ = field("next_comm") "-" field("next_pid")
			ost[prev] = field("prev_state"); pend[next_] = ""
			if (ecpu != cpu) next
			# an interrupt thread blocking on this CPU, and the task
			# which runs instead (a lock holder it boosts, if any)
			if (prev ~ /^irq\// && ost[prev] ~ /^D/)
				add("irqblk|" comm(prev) "|" comm(next_), 0)
			if (prev ~ /^tsq_victim/) {
				# its first switch out is the new kthread waiting for
				# the shell which created it to wake it: no section
				if (!seen++) next
				st = field("prev_state")
				# D: a lock wait or its usleep; S: done, waiting for
				# kthread_stop(); R: preempted
				mode = st ~ /^D/ ? "blk" : st ~ /^R/ ? "pre" : ""
				start = t; waker = ""; ksd = 0; delete at; delete started
				for (c in inh) if (inh[c] != "") at[c] = inh[c]
				delete snap
				for (c in ost) if (c ~ /^irq\//) snap[c] = how(c)
				preemptor = next_
			} else if (next_ ~ /^tsq_victim/ && mode == "pre") {
				add("preempted|" comm(preemptor), t - start)
				mode = ""
			} else if (next_ ~ /^tsq_victim/ && mode == "blk") {
				mode = ""
				# woken by its timer: the victim slept; how long it then
				# waited for the CPU, behind the task its timer interrupted
				if (waker == "irq") {
					add("wake|" comm(cur), t - woke)
					next
				}
				if (waker == "") waker = "?"
				k = comm(waker) "|" (waker in at ? at[waker] : "-")
				add(k, t - start)
				hs[k] += started[waker]; via[k] += ksd
				# and, if it was woken during the wait, by whom (in
				# which handler): the task it waited for
				if (waker in snap && !(waker in at))
					add("how|" comm(waker) "|" snap[waker] \
						(wt[waker] > start ? "_then_by_" wby[waker] : ""), t - start)
			}
			if (mode == "blk" && next_ ~ /^ksoftirqd\//) ksd = 1
			next
		}
		/ sched_waking: / {
			t = parse()
			c = field("comm") "-" field("pid")
			pend[c] = flags ~ /[hHzZ]/ ? "hardirq" : comm($1); wt[c] = t
			wby[c] = pend[c] (pend[c] != "hardirq" && inh[$1] != "" ? "_in_" inh[$1] : "")
			if (c !~ /^tsq_victim/) next
			vwoke = t
			if (mode == "blk") {
				waker = flags ~ /[hHzZ]/ ? "irq" : $1
				woke = t; cur = $1
			}
			next
		}
		/ softirq_entry: / {
			t = parse()
			v = field("action"); sub(/\].*/, "", v)
			inh[$1] = v; t0[$1] = t
			if (mode == "blk") started[$1]++
			next
		}
		/ softirq_exit: / {
			t = parse()
			# the victim own vector is TASKLET: foreign tasklets on it
			# are not told apart here (the module counts those)
			if ($1 ~ /^tsq_victim/ && inh[$1] != "TASKLET" && inh[$1] != "") {
				fnr[inh[$1]]++; fus[inh[$1]] += t - t0[$1]
			}
			inh[$1] = ""
			next
		}
		END {
			for (k in n) {
				split(k, hv, "|")
				if (hv[1] == "wake")
					printf "BENCH wake_delay raiser=%s behind=%s wakes=%d us=%.0f max_us=%.0f\n",
						r, hv[2], n[k], us[k], max[k]
				else if (hv[1] == "irqblk")
					printf "BENCH irq_blocked raiser=%s thread=%s next=%s times=%d\n",
						r, hv[2], hv[3], n[k]
				else if (hv[1] == "how")
					printf "BENCH holder_how raiser=%s holder=%s how=%s sections=%d us=%.0f\n",
						r, hv[2], hv[3], n[k], us[k]
				else if (hv[1] == "preempted")
					printf "BENCH preempted raiser=%s by=%s times=%d us=%.0f max_us=%.0f\n",
						r, hv[2], n[k], us[k], max[k]
				else
					printf "BENCH holders raiser=%s holder=%s vector=%s sections=%d us=%.0f max_us=%.0f handlers_started=%d ksoftirqd_ran=%d\n",
						r, hv[1], hv[2], n[k], us[k], max[k], hs[k], via[k]
			}
			for (v in fnr)
				printf "BENCH foreign_ran raiser=%s vector=%s entries=%d us=%.0f\n", r, v, fnr[v], fus[v]
		}' $T/trace
	# the innermost frames of each stack, counted
	[ "${HOLDER_STACKS:-0}" = 0 ] || awk -v r="$1" '
		# a stack ends at any line not a frame, another stack (two
		# CPUs) or the end of the trace
		function done_() { if (on && s != "") n[s]++; on = 0 }
		/<stack trace>/ { done_(); s = ""; d = 0; on = 1; next }
		on && /^ => / { if (d++ < 8) s = s (s == "" ? "" : "<") $2; next }
		{ done_() }
		END { done_(); for (k in n) printf "BENCH holder_stack raiser=%s n=%d frames=%s\n", r, n[k], k }' $T/trace
	echo >$T/trace
	return $rc
}

# IRQ_PRIO: the SCHED_FIFO priority of the raiser's interrupt threads
# (default: the kernel's, 50, the victim's own)
irq_threads_prio() {
	local irq p
	[ -n "${IRQ_PRIO:-}" ] && [ -n "$raiser_irqs" ] || return 0
	for irq in $(echo "$raiser_irqs" | tr ',' ' '); do
		for p in $(pids_of "irq/$irq-*"); do
			rtnetloop fifo "$p" "$IRQ_PRIO" || return 2
		done
	done
	echo "BENCH irq_threads irqs=$raiser_irqs prio=$IRQ_PRIO"
}

if has_phase holders; then
	for r in $RAISERS; do
		raiser_irqs=
		raiser_start "$r"
		rc=$?
		[ $rc != 0 ] || irq_threads_prio
		rc=$((rc ? rc : $?))
		if [ $rc = 0 ]; then
			holders_run "$r"
			rc=$?
		fi
		raiser_stop "$r"
		if [ $rc = 1 ]; then
			echo "ok $((n += 1)) holders_$r # SKIP no device or no sched events"
		else
			result $rc "holders_$r"
		fi
	done
fi

if has_phase overhead; then
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
fi

if has_phase storm; then
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
	# rtla timerlat on the victim CPU, kernel threads at the cyclictest
	# priority: a histogram, then a run which stops at the first sample
	# over RTLA_AA_US and prints rtla's auto-analysis of it
	if command -v rtla >/dev/null; then
		rtla timerlat hist -c "$CPU" -k -P f:95 -d "${RTLA_S}s" -b 1 -E "$BUCKETS" \
			>/tmp/rtla.out 2>&1
		result $? rtla_timerlat_hist
		rtla timerlat top -q -c "$CPU" -k -P f:95 -d "${RTLA_S}s" -a "$RTLA_AA_US" \
			>/tmp/rtla-aa.out 2>&1
		# stopping at the threshold is its purpose: any status but a crash
		[ $? -lt 128 ]
		result $? rtla_timerlat_auto_analysis
	fi
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
	if [ -f /tmp/rtla.out ]; then
		echo "softirq-rt: hist rtla begin"
		cat /tmp/rtla.out
		echo "softirq-rt: hist rtla end"
		echo "softirq-rt: rtla auto-analysis begin"
		cat /tmp/rtla-aa.out
		echo "softirq-rt: rtla auto-analysis end"
	fi
fi
rmmod test_softirq
result $? unload_test_softirq
