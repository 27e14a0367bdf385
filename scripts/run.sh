#!/usr/bin/env bash
# The main job: what per-task softirq processing buys an RT task.
#
# Builds (or reuses) the unpatched and the patched RT kernel with the same
# non-debug configuration (CFG=perf), boots them alternately under QEMU with
# identical settings (baseline, patched, baseline, ...; RUNS boots each) and
# runs scripts/guest/bench.sh in every boot: victim, realistic raisers
# (RPS, virtio-blk, virtio-net from the host), overhead, RT network loop
# and cyclictest under a softirq storm. Each run also boots both kernels
# once more under TCG with -icount (a fixed shift: virtual time from the
# instruction count) for the victim alone: its latencies spread there by
# about a tenth of their value over runs, on plain TCG by 40%. The
# victim's latency rows come from those boots, every count and the other
# latencies from the plain TCG boots (icount changes interleavings, so
# counts stay on plain TCG). The raisers stay on plain TCG: under -icount
# both vCPUs share one host thread and one instruction clock, so their
# load on the other CPU would stretch the victim's measured time.
# scripts/bench.py turns the boots into a table (medians, spreads,
# patched/baseline ratios) and gnuplot PNGs.
#
# usage: [ARCH=x86_64|arm64] [KERNEL=7.3] [BH_LOCK=1] [RUNS=n] [QUICK=1] [ACCEL=auto|kvm|tcg]
#        [ICOUNT=off|auto|0..10] scripts/run.sh
# ICOUNT: the victim boots' -icount shift (3 unless set; off: none, the
# victim's latencies come from the plain boots).
# output: build/bench/[6.12-]<arch>[-bhlock]-<time>/ (summary.txt, results.json,
#         *.png, *.dat, boots/<group>-<variant>-<n>.log); build/bench/latest links it.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [QUICK=1] [ICOUNT=off|auto|0..10] $0" >&2
	exit 2
}
[ $# -eq 0 ] || usage
[ -z "${BASELINE:-}" ] || die "BASELINE= does not apply: make run boots both kernels"
export CFG=perf
QUICK=${QUICK:-0}
check_value QUICK "$QUICK" "0 1"
if [ "$QUICK" = 1 ]; then
	RUNS=${RUNS:-1}
	GUEST_ENV="VICTIM_MS=1500 CYCLE_LOOPS=50000 FLOOD_S=1 NET_S=4 CT_S=4 RTLA_S=2"
else
	RUNS=${RUNS:-3}
	GUEST_ENV="VICTIM_MS=4000 CYCLE_LOOPS=200000 FLOOD_S=3 NET_S=20 CT_S=20"
fi
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || die "RUNS must be a number from 1 to 99, not '$RUNS'"
# the victim boots' shift; the plain boots run without -icount
VICTIM_ICOUNT=${ICOUNT:-3}
[ "$VICTIM_ICOUNT" != off ] || VICTIM_ICOUNT=
ICOUNT=$VICTIM_ICOUNT
load_params
ICOUNT=
export ACCEL
LOG_TAG="run $ARCH"

# 6.12's runs are kept apart from 7.3's (6.12 always has the BH lock)
NAME=$CHECK_PREFIX$ARCH
[ "$BH_LOCK" = 0 ] || NAME=$NAME-bhlock
if [ -n "$VICTIM_ICOUNT" ] && [ "$ACCEL" = kvm ]; then
	die "ACCEL=kvm: the victim boots need TCG for -icount (ICOUNT=off for none)"
fi
OUT=$BUILD/bench/$NAME-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/boots"
start=$SECONDS

build_pair

bench_devices "$OUT"

# shellcheck disable=SC2086 # GUEST_ENV is a list of assignments
printf '#!/bin/sh\nexport %s\nexec /bin/bench.sh\n' "$GUEST_ENV" >"$OUT/job.sh"
# under -icount a boot repeats the one before almost exactly: each run
# starts the victim's loads at its own offset within a 4 ms tick (a
# spread over identical boots would be no spread)
for run in $(seq 1 "$RUNS"); do
	# shellcheck disable=SC2086
	printf '#!/bin/sh\nexport %s PHASES=victim PHASE_US=%d\nexec /bin/bench.sh\n' \
		"$GUEST_ENV" $((run * 1733 % 4000)) >"$OUT/job-victim-$run.sh"
done

groups=(tcg)
[ -z "$VICTIM_ICOUNT" ] || groups+=("icount$VICTIM_ICOUNT")
accel_session
args=()
declare -A accels
failed=0
total=$((RUNS * 2 * ${#groups[@]}))
i=0
for run in $(seq 1 "$RUNS"); do
	for g in "${groups[@]}"; do
		for v in baseline patched; do
			i=$((i + 1))
			tag=bench-$NAME-$g-$v
			b=$OUT/boots/$g-$v-$run
			t0=$SECONDS
			rc=0
			# plain boots: every phase, the raisers' devices; -icount
			# boots: the victim alone
			if [ "$g" = tcg ]; then
				job=$OUT/job.sh
				genv=(QEMU_DEVICES="$QEMU_DEVICES")
			else
				job=$OUT/job-victim-$run.sh
				genv=(ACCEL=tcg ICOUNT="$VICTIM_ICOUNT")
			fi
			boot_variant "$v" "$tag" "$job" "$b" 900 "${genv[@]}" || rc=$?
			# the accelerator chosen by the first boot holds for all of them
			[ $i -gt 1 ] || grep -h '^\[qemu\] KVM unusable' "$b.qemu.log" >&2 || true
			a=$(cat "$BUILD/runs/$tag/accel" 2>/dev/null || echo none)
			accels[$g]="${accels[$g]:-} $a"
			echo "$a" >"$b.accel"
			args+=("$g:$v:$run:$b.log")
			[ $rc -eq 0 ] || failed=$((failed + 1))
			# one progress line per boot, with the figures that boot produced
			line=$(awk '
				/^BENCH victim .*load=1/ { for (i = 1; i <= NF; i++) if ($i ~ /^(foreign_in_victim|full_p999_ns)=/) f = f " " $i }
				/^BENCH rtnetloop / { for (i = 1; i <= NF; i++) if ($i ~ /^max_us=/) f = f " net_" $i }
				END { print f }' "$b.log")
			log "boot $i/$total: $g $v #$run $([ $rc -eq 0 ] && echo ok || echo FAILED) in $((SECONDS - t0)) s:$line"
			[ $rc -eq 0 ] || grep -E 'fail|SPLAT|timed out|did not' "$b.qemu.log" | head -5 >&2
		done
	done
done

ln -sfn "$(basename "$OUT")" "$BUILD/bench/latest"
rc=0
accel_list=()
for g in "${groups[@]}"; do
	mapfile -t distinct < <(tr ' ' '\n' <<<"${accels[$g]}" | grep . | sort -u)
	if [ ${#distinct[@]} -ne 1 ]; then
		log "$g boots ran under different accelerators (${distinct[*]}): not comparable"
		rc=1
	fi
	accel_list+=("$g=$(IFS=,; echo "${distinct[*]}")")
done
BENCH_ACCEL="${accel_list[*]}" python3 "$TOP/scripts/bench.py" "$OUT" "${args[@]}" || rc=1
log "$total boots in $((SECONDS - start)) s total; results in $OUT"
if [ $failed -gt 0 ]; then
	log "$failed of $total boots failed (guest result, splat or timeout): see $OUT/boots/*.qemu.log"
	rc=1
fi
exit $rc
