#!/usr/bin/env bash
# Who made the RT task wait: for a realistic raiser (make run's victim
# next to virtio-net receive, by default), boot the unpatched and the
# patched perf kernel alternately (RUNS each) and trace the scheduler's
# and the softirq events (switches on the victim's CPU, wake-ups from any)
# while the victim runs. Every section in which the victim blocked is put
# down to the task whose release woke it (the last holder of the BH lock
# or callback lock it waited for) and the handler that task was in when
# the victim blocked; the foreign handlers the victim ran itself are
# listed by vector. Tracing slows both kernels, not alike (the unpatched
# RT task runs more of the traced handlers itself): it tells who and
# which vector, not make run's ratios.
#
# IRQ_PRIO=n sets the raiser's interrupt threads to SCHED_FIFO n in both
# kernels (default: the kernel's 50, the victim's own priority). STACKS=1
# records a stack at every switch out in state D of an interrupt thread.
#
# usage: [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [RAISERS="net ..."] [IRQ_PRIO=1..98] [STACKS=1] scripts/holders.sh
# output: build/holders/[6.12-]<arch>[-bhlock][-irqprioN]-<time>/ (summary.txt,
#         boots/<variant>-<n>.log); the summary goes to stdout too.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [RAISERS=\"net ...\"] [IRQ_PRIO=1..98] [STACKS=1] $0" >&2; exit 2; }
[ -z "${BASELINE:-}" ] || die "BASELINE= does not apply: make holders boots both kernels"
export CFG=perf
RUNS=${RUNS:-2}
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || die "RUNS must be a number from 1 to 99, not '$RUNS'"
RAISERS=${RAISERS:-net}
for r in $RAISERS; do
	check_value RAISERS "$r" "rps blk net veth usb bhwq_task bhwq_irq"
done
IRQ_PRIO=${IRQ_PRIO:-}
STACKS=${STACKS:-}
[ -z "$STACKS" ] || check_value STACKS "$STACKS" "0 1"
[ "$STACKS" != 0 ] || STACKS=
[ -z "$IRQ_PRIO" ] || [[ $IRQ_PRIO =~ ^[1-9][0-9]?$ && $IRQ_PRIO -le 98 ]] || die "IRQ_PRIO must be 1..98, not '$IRQ_PRIO'"
load_params
# figures from a KVM boot and a TCG one do not compare; TCG is what every
# machine has
[ "${ACCEL:-auto}" = auto ] || [ "$ACCEL" = tcg ] || die "make holders boots under TCG only, not ACCEL=$ACCEL"
ACCEL=tcg
export ACCEL
[ "$ARCH" = x86_64 ] || die "make holders needs make run's x86_64 devices"
LOG_TAG="holders $ARCH"
NAME=$CHECK_PREFIX$ARCH
[ "$BH_LOCK" = 0 ] || NAME=$NAME-bhlock
[ -z "$IRQ_PRIO" ] || NAME=$NAME-irqprio$IRQ_PRIO
# stacks slow each kernel by its own number of blocks: name such runs
[ -z "$STACKS" ] || NAME=$NAME-stacks
OUT=$BUILD/holders/$NAME-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/boots"
start=$SECONDS

build_pair
GUEST_ENV="VICTIM_MS=4000 PHASES=holders RAISERS=\"$RAISERS\"${IRQ_PRIO:+ IRQ_PRIO=$IRQ_PRIO}${STACKS:+ HOLDER_STACKS=$STACKS}"
bench_devices "$OUT"
printf '#!/bin/sh\nexport %s\nexec /bin/bench.sh\n' "$GUEST_ENV" >"$OUT/job.sh"

failed=0
for run in $(seq 1 "$RUNS"); do
	for v in baseline patched; do
		tag=holders-$NAME-$v
		rc=0
		boot_variant "$v" "$tag" "$OUT/job.sh" "$OUT/boots/$v-$run" 600 \
			QEMU_DEVICES="$QEMU_DEVICES" || rc=$?
		# a boot without the figures of every raiser, or whose trace
		# buffer lost events, does not count
		for r in $RAISERS; do
			grep -q "^BENCH victim .*raiser=$r\$" "$OUT/boots/$v-$run.log" &&
				grep -q "^BENCH holders_overrun raiser=$r events=0\$" "$OUT/boots/$v-$run.log" || rc=1
		done
		log "boot $v #$run $([ $rc -eq 0 ] && echo ok || echo FAILED)"
		if [ $rc -ne 0 ]; then
			failed=$((failed + 1))
			mv "$OUT/boots/$v-$run.log" "$OUT/boots/$v-$run.failed"
		fi
	done
done

runnote=
[ -z "$IRQ_PRIO" ] || runnote=", the raisers' irq threads (if any) at SCHED_FIFO $IRQ_PRIO"
[ -z "$STACKS" ] || runnote="$runnote, a stack at every interrupt thread's switch out in state D"
# Per raiser and kernel, the mean over the boots which count of each
# holder's (and the victim's own) figures, then per boot the totals.
for f in "$OUT"/boots/*-[0-9].log "$OUT"/boots/*-[0-9][0-9].log; do
	[ -e "$f" ] || continue
	v=$(basename "$f" .log)
	awk -v v="${v%-*}" -v b="${v##*-}" '
		function f(name,  i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
		/^BENCH holders / { print v, b, f("raiser"), "blocked_on", f("holder") "/" f("vector"), f("sections"), f("us"), f("max_us") }
		/^BENCH holder_how / { print v, b, f("raiser"), "how", f("holder") "/" f("how"), f("sections"), f("us"), "-" }
		/^BENCH irq_blocked / { print v, b, f("raiser"), "irq_blocked", f("thread") "/next:" f("next"), f("times"), 0, "-" }
		/^BENCH wake_delay / { print v, b, f("raiser"), "wake_delay", f("behind"), f("wakes"), f("us"), f("max_us") }
		/^BENCH preempted / { print v, b, f("raiser"), "preempted", f("by"), f("times"), f("us"), f("max_us") }
		/^BENCH foreign_ran / { print v, b, f("raiser"), "ran_itself", f("vector"), f("entries"), f("us"), "-" }
		/^BENCH victim / && f("raiser") != "" { print v, b, f("raiser"), "module", "blocked_sections", f("blocked_sections"), int(f("blocked_ns") / 1000), int(f("blocked_max_ns") / 1000) }
		# every route at once: sleep end to section end (n = sections)
		/^BENCH victim / && f("raiser") != "" && f("resp_n") != "" { print v, b, f("raiser"), "module", "sleep_end_to_section_end", f("resp_n"), int(f("resp_ns") / 1000), int(f("resp_max_ns") / 1000) }
	' "$f"
done >"$OUT/rows"
{
	echo "make holders: $NAME, kernel $(kernel_version), QEMU TCG ($(nproc) host CPUs), VICTIM_MS=4000, tracing on in both kernels$runnote"
	awk '{ b[$1 " " $2] = 1 } END { for (k in b) { split(k, a, " "); nb[a[1]]++ }; printf "boots which count: baseline %d, patched %d (of %d each)\n", nb["baseline"], nb["patched"], '"$RUNS"' }' "$OUT/rows"
	echo "mean per boot: sections (or handler entries, wakes), time (us); max: the longest single one over all boots (-: none)"
	printf "%-8s %-11s %-64s %22s %22s\n" raiser route holder/vector "baseline n, us, max" "patched n, us, max"
	awk '
		{ b[$1 " " $2] = 1; k = $3 " " $4 " " $5; key[k] = 1; n[$1, k] += $6; us[$1, k] += $7
		  if ($8 != "-" && $8 + 0 > mx[$1, k]) mx[$1, k] = $8 + 0 }
		function m(v, k) { return (v, k) in mx ? sprintf("%6d", mx[v, k]) : "     -" }
		END {
			for (x in b) { split(x, a, " "); nb[a[1]]++ }
			for (k in key) {
				split(k, a, " ")
				printf "%-8s %-11s %-64s %6.1f %8.0f %s %6.1f %8.0f %s\n", a[1], a[2], a[3],
					n["baseline", k] / nb["baseline"], us["baseline", k] / nb["baseline"], m("baseline", k),
					n["patched", k] / nb["patched"], us["patched", k] / nb["patched"], m("patched", k)
			}
		}' "$OUT/rows" | sort
	echo "per boot: time paid in sections (blocked + foreign handlers run, us); the same + waiting for the CPU after its timer woke it; + preempted"
	awk '
		$4 == "blocked_on" || $4 == "ran_itself" { paid[$1 " " $3 " #" $2] += $7 }
		{ all[$1 " " $3 " #" $2] += 0 }
		$4 == "wake_delay" { wd[$1 " " $3 " #" $2] += $7 }
		$4 == "preempted" { pr[$1 " " $3 " #" $2] += $7 }
		END { for (k in all) printf "  %-22s %9.0f %9.0f %9.0f\n", k, paid[k], paid[k] + wd[k], paid[k] + wd[k] + pr[k] }' "$OUT/rows" | sort
	echo "$((RUNS * 2)) boots in $((SECONDS - start)) s; $failed failed"
} | tee "$OUT/summary.txt"
ln -sfn "$(basename "$OUT")" "$BUILD/holders/latest"
[ $failed -eq 0 ]
