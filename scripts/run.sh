#!/usr/bin/env bash
# The main job: what per-task softirq processing buys an RT task.
#
# Builds (or reuses) the unpatched and the patched RT kernel with the same
# non-debug configuration (CFG=perf), boots them alternately under QEMU with
# identical settings (baseline, patched, baseline, ...; RUNS boots each) and
# runs scripts/guest/bench.sh in every boot: victim benchmark, overhead, RT
# network loop and cyclictest under a softirq storm. scripts/bench.py turns
# the boots into a table (medians, patched/baseline ratios) and gnuplot PNGs.
#
# usage: [ARCH=x86_64|arm64] [KERNEL=7.3] [BH_LOCK=1] [RUNS=n] [QUICK=1] [ACCEL=auto|kvm|tcg]
#        [ICOUNT=auto|0..10] scripts/run.sh
# ICOUNT: every boot under TCG with -icount (scripts/qemu.sh); its results
# directory is named ...-icount<value>-<time>.
# output: build/bench/[6.12-]<arch>[-bhlock]-<time>/ (summary.txt, results.json,
#         *.png, *.dat, boots/<variant>-<n>.log); build/bench/latest links it.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [QUICK=1] [ICOUNT=auto|0..10] $0" >&2
	exit 2
}
[ $# -eq 0 ] || usage
[ -z "${BASELINE:-}" ] || die "BASELINE= does not apply: make run boots both kernels"
export CFG=perf
QUICK=${QUICK:-0}
check_value QUICK "$QUICK" "0 1"
if [ "$QUICK" = 1 ]; then
	RUNS=${RUNS:-1}
	GUEST_ENV="VICTIM_MS=1500 CYCLE_LOOPS=50000 FLOOD_S=2 NET_S=6 CT_S=6"
else
	RUNS=${RUNS:-3}
	GUEST_ENV="VICTIM_MS=4000 CYCLE_LOOPS=200000 FLOOD_S=3 NET_S=20 CT_S=20"
fi
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || die "RUNS must be a number from 1 to 99, not '$RUNS'"
load_params
export ACCEL
LOG_TAG="run $ARCH"

# 6.12's runs are kept apart from 7.3's (6.12 always has the BH lock)
NAME=$CHECK_PREFIX$ARCH
[ "$BH_LOCK" = 0 ] || NAME=$NAME-bhlock
if [ -n "$ICOUNT" ]; then
	[ "$ACCEL" != kvm ] || die "ICOUNT needs TCG, not ACCEL=kvm"
	ACCEL=tcg
	NAME=$NAME-icount$ICOUNT
	export ICOUNT
fi
OUT=$BUILD/bench/$NAME-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/boots"
start=$SECONDS

for v in baseline patched; do
	log "kernel: $v (CFG=perf)"
	"$TOP/scripts/tree.sh" "$v"
	BASELINE=$([ $v = baseline ] && echo 1 || echo 0) "$TOP/scripts/build.sh"
	BASELINE=$([ $v = baseline ] && echo 1 || echo 0) "$TOP/scripts/initramfs.sh"
done

job=$OUT/job.sh
# shellcheck disable=SC2086 # GUEST_ENV is a list of assignments
printf '#!/bin/sh\nexport %s\nexec /bin/bench.sh\n' "$GUEST_ENV" >"$job"

accel_session
args=()
accels=()
failed=0
total=$((RUNS * 2))
i=0
for run in $(seq 1 "$RUNS"); do
	for v in baseline patched; do
		i=$((i + 1))
		tag=bench-$NAME-$v
		t0=$SECONDS
		rc=0
		BASELINE=$([ $v = baseline ] && echo 1 || echo 0) TAG=$tag TIMEOUT=900 \
			"$TOP/scripts/qemu.sh" "$job" >"$OUT/boots/$v-$run.qemu.log" 2>&1 || rc=$?
		cp "$BUILD/runs/$tag/serial.log" "$OUT/boots/$v-$run.log"
		# the accelerator chosen by the first boot holds for all of them
		[ $i -gt 1 ] || grep -h '^\[qemu\] KVM unusable' "$OUT/boots/$v-$run.qemu.log" >&2 || true
		a=$(cat "$BUILD/runs/$tag/accel" 2>/dev/null || echo none)
		accels+=("$a")
		echo "$a" >"$OUT/boots/$v-$run.accel"
		args+=("$v:$run:$OUT/boots/$v-$run.log")
		[ $rc -eq 0 ] || failed=$((failed + 1))
		# one progress line per boot, with the figures that boot produced
		line=$(tr -d '\r' <"$OUT/boots/$v-$run.log" | awk '
			/^BENCH victim .*load=1/ { for (i = 1; i <= NF; i++) if ($i ~ /^(foreign_in_victim|p999_ns)=/) f = f " " $i }
			/^BENCH rtnetloop / { for (i = 1; i <= NF; i++) if ($i ~ /^max_us=/) f = f " net_" $i }
			END { print f }')
		log "boot $i/$total: $v #$run $([ $rc -eq 0 ] && echo ok || echo FAILED) in $((SECONDS - t0)) s:$line"
		[ $rc -eq 0 ] || grep -E 'fail|SPLAT|timed out|did not' "$OUT/boots/$v-$run.qemu.log" | head -5 >&2
	done
done

ln -sfn "$(basename "$OUT")" "$BUILD/bench/latest"
rc=0
mapfile -t distinct < <(printf '%s\n' "${accels[@]}" | sort -u)
if [ ${#distinct[@]} -ne 1 ]; then
	log "boots ran under different accelerators (${distinct[*]}): not comparable"
	rc=1
fi
BENCH_ACCEL=$(IFS=,; echo "${distinct[*]}") python3 "$TOP/scripts/bench.py" "$OUT" "${args[@]}" || rc=1
log "$total boots in $((SECONDS - start)) s total; results in $OUT"
if [ $failed -gt 0 ]; then
	log "$failed of $total boots failed (guest result, splat or timeout): see $OUT/boots/*.qemu.log"
	rc=1
fi
exit $rc
