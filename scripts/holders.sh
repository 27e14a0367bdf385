#!/usr/bin/env bash
# Who made the RT task wait: for a realistic raiser (make run's victim
# next to virtio-net receive, by default), boot the unpatched and the
# patched perf kernel alternately (RUNS each) and trace the scheduler and
# softirq events on the victim's CPU while the victim runs. Every section
# in which the victim blocked is put down to the task whose release woke
# it (the holder of the BH lock or callback lock it waited for) and the
# handler that task was in when the victim blocked; the foreign handlers
# the victim ran itself are listed by vector. This explains make run's
# "time paid by any route" row: which holder, which vector, how often.
#
# IRQ_PRIO=n sets the raiser's interrupt threads to SCHED_FIFO n in both
# kernels (default: the kernel's 50, the victim's own priority).
#
# usage: [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [RAISERS="net ..."] [IRQ_PRIO=1..98] scripts/holders.sh
# output: build/holders/[6.12-]<arch>[-bhlock]-<time>/ (summary.txt,
#         boots/<variant>-<n>.log); the summary goes to stdout too.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [RAISERS=\"net ...\"] [IRQ_PRIO=1..98] $0" >&2; exit 2; }
[ -z "${BASELINE:-}" ] || die "BASELINE= does not apply: make holders boots both kernels"
export CFG=perf
RUNS=${RUNS:-2}
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || die "RUNS must be a number from 1 to 99, not '$RUNS'"
RAISERS=${RAISERS:-net}
IRQ_PRIO=${IRQ_PRIO:-}
[ -z "$IRQ_PRIO" ] || [[ $IRQ_PRIO =~ ^[1-9][0-9]?$ && $IRQ_PRIO -le 98 ]] || die "IRQ_PRIO must be 1..98, not '$IRQ_PRIO'"
load_params
ACCEL=tcg
export ACCEL
[ "$ARCH" = x86_64 ] || die "make holders needs make run's x86_64 devices"
LOG_TAG="holders $ARCH"
NAME=$CHECK_PREFIX$ARCH
[ "$BH_LOCK" = 0 ] || NAME=$NAME-bhlock
[ -z "$IRQ_PRIO" ] || NAME=$NAME-irqprio$IRQ_PRIO
OUT=$BUILD/holders/$NAME-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/boots"
start=$SECONDS

build_pair
GUEST_ENV="VICTIM_MS=4000 PHASES=holders RAISERS=\"$RAISERS\"${IRQ_PRIO:+ IRQ_PRIO=$IRQ_PRIO}"
bench_devices "$OUT"
printf '#!/bin/sh\nexport %s\nexec /bin/bench.sh\n' "$GUEST_ENV" >"$OUT/job.sh"

failed=0
for run in $(seq 1 "$RUNS"); do
	for v in baseline patched; do
		tag=holders-$NAME-$v
		rc=0
		QEMU_DEVICES="$QEMU_DEVICES" BASELINE="$([ $v = baseline ] && echo 1 || echo 0)" \
			TAG="$tag" TIMEOUT=600 "$TOP/scripts/qemu.sh" "$OUT/job.sh" \
			>"$OUT/boots/$v-$run.qemu.log" 2>&1 || rc=$?
		tr -d '\r' <"$BUILD/runs/$tag/serial.log" >"$OUT/boots/$v-$run.log"
		log "boot $v #$run $([ $rc -eq 0 ] && echo ok || echo FAILED)"
		[ $rc -eq 0 ] || failed=$((failed + 1))
	done
done

irqnote=
[ -z "$IRQ_PRIO" ] || irqnote=", the raisers' irq threads at SCHED_FIFO $IRQ_PRIO"
# Per raiser and kernel, the mean over the boots of each holder's (and
# the victim's own) figures, then the module's count of blocked sections.
for f in "$OUT"/boots/*-[0-9]*.log; do
	v=$(basename "$f" .log)
	awk -v v="${v%-*}" '
		function f(name,  i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
		/^BENCH holders / { print v, f("raiser"), "blocked_on", f("holder") "/" f("vector"), f("sections"), f("us"), f("max_us") }
		/^BENCH wake_delay / { print v, f("raiser"), "wake_delay", f("behind"), f("wakes"), f("us"), f("max_us") }
		/^BENCH foreign_ran / { print v, f("raiser"), "ran_itself", f("vector"), f("entries"), f("us"), "-" }
		/^BENCH victim / && f("raiser") != "" { print v, f("raiser"), "module", "blocked_sections", f("blocked_sections"), int(f("blocked_ns") / 1000), int(f("blocked_max_ns") / 1000) }
	' "$f"
done >"$OUT/rows"
{
	echo "make holders: $NAME, kernel $(kernel_version), $RUNS boots per kernel, QEMU TCG ($(nproc) host CPUs), VICTIM_MS=4000, tracing on in both kernels$irqnote"
	echo "mean per boot: sections (or handler entries), time (us); max: the longest one over all boots"
	printf "%-8s %-11s %-34s %21s %21s\n" raiser route holder/vector "baseline n, us, max" "patched n, us, max"
	awk -v runs="$RUNS" '
		{ k = $2 " " $3 " " $4; key[k] = 1; n[$1, k] += $5; us[$1, k] += $6
		  if ($7 != "-" && $7 + 0 > mx[$1, k]) mx[$1, k] = $7 + 0 }
		END {
			for (k in key) {
				split(k, a, " ")
				printf "%-8s %-11s %-34s %6.1f %7.0f %6d %6.1f %7.0f %6d\n", a[1], a[2], a[3],
					n["baseline", k] / runs, us["baseline", k] / runs, mx["baseline", k],
					n["patched", k] / runs, us["patched", k] / runs, mx["patched", k]
			}
		}' "$OUT/rows" | sort
	awk -v runs="$RUNS" '
		$3 == "blocked_on" || $3 == "ran_itself" { paid[$1, $2] += $6; r[$2] = 1 }
		$3 == "wake_delay" { wd[$1, $2] += $6 }
		END {
			for (x in r) {
				printf "%s: time paid in sections (blocked, by holder + foreign handlers run), mean per boot: %.0f -> %.0f us\n", x,
					paid["baseline", x] / runs, paid["patched", x] / runs
				printf "%s: the same + waiting for the CPU after its timer woke it: %.0f -> %.0f us\n", x,
					(paid["baseline", x] + wd["baseline", x]) / runs, (paid["patched", x] + wd["patched", x]) / runs
			}
		}' "$OUT/rows" | sort
	echo "$((RUNS * 2)) boots in $((SECONDS - start)) s; $failed failed"
} | tee "$OUT/summary.txt"
ln -sfn "$(basename "$OUT")" "$BUILD/holders/latest"
[ $failed -eq 0 ]
