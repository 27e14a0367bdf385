#!/usr/bin/env bash
# Soak the patched debug kernel (lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_PREEMPT,
# and KASAN on x86_64): the test module's stress mode on every CPU and in
# every context, CPU hotplug churn, stress-ng and torture modules, for
# DURATION seconds (scripts/guest/soak.sh). Passes when nothing was lost,
# every verdict passed and the kernel log is clean (no WARNING, BUG,
# lockdep report, NOHZ tick-stop error, RCU stall or hung task).
#
# usage: [ARCH=x86_64|arm64] [DURATION=600] [BASELINE=1] [BH_LOCK=1] [KASAN=0|1] scripts/soak.sh
# output: build/runs/soak-<config>/{serial.log,results}, build/soak/<config>.summary

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: [ARCH=x86_64|arm64] [DURATION=s] [BASELINE=1] [BH_LOCK=1] [KASAN=0|1] $0" >&2
	exit 2
}
[ $# -eq 0 ] || usage
DURATION=${DURATION:-600}
[[ $DURATION =~ ^[1-9][0-9]*$ ]] || die "DURATION must be a number of seconds, not '$DURATION'"
ARCH=${ARCH:-$(host_arch)}
# KASAN where it is affordable under TCG: x86_64 by default
KASAN=${KASAN:-$([ "$ARCH" = x86_64 ] && echo 1 || echo 0)}
check_value KASAN "$KASAN" "0 1"
export CFG
CFG=$([ "$KASAN" = 1 ] && echo kasan || echo debug)
load_params
accel_session
LOG_TAG="soak $CONFIG_NAME"

"$TOP/scripts/tree.sh" "$VARIANT"
"$TOP/scripts/build.sh"
"$TOP/scripts/initramfs.sh"

mkdir -p "$BUILD/soak"
job=$BUILD/soak/job-$CONFIG_NAME.sh
printf '#!/bin/sh\nexport DURATION=%s\nexec /bin/soak.sh\n' "$DURATION" >"$job"
tag=soak-$CONFIG_NAME
log "soaking for ${DURATION}s"
rc=0
TAG=$tag TIMEOUT=$((DURATION + 600)) "$TOP/scripts/qemu.sh" "$job" || rc=$?

serial=$BUILD/runs/$tag/serial.log
summary=$BUILD/soak/$CONFIG_NAME.summary
{
	echo "soak $CONFIG_NAME, DURATION=${DURATION}s, $(cat "$BUILD/runs/$tag/wall-seconds" 2>/dev/null)s wall"
	tr -d '\r' <"$serial" | grep -E '^SOAK (start|hotplug|stress |torture)' | sed 's/^SOAK /  /'
	tr -d '\r' <"$serial" | grep -E '^SOAK .*stress-ng' | sed 's/^SOAK /  /' | tail -n 8
	sed 's/^/  result: /' "$BUILD/runs/$tag/results"
} >"$summary"
cat "$summary"
if [ $rc -eq 0 ]; then
	log "clean: $summary"
else
	log "FAILED: $summary, log $serial"
fi
exit $rc
