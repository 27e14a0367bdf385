#!/usr/bin/env bash
# The main job (until the latency benchmark lands): build the patched kernel
# for ARCH (default: the host's), boot it under QEMU and run cyclictest for
# 10 s in the guest, printing its summary.
#
# usage: [ARCH=x86_64|arm64] [KERNEL=7.3] [BASELINE=1] [BH_LOCK=1] scripts/run.sh
# output: build/runs/run-<config>/serial.log

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BASELINE=1] [BH_LOCK=1] $0" >&2; exit 2; }
load_params

"$TOP/scripts/tree.sh" "$VARIANT"
"$TOP/scripts/build.sh"
"$TOP/scripts/initramfs.sh"

job=$BUILD/runs/run-job.sh
mkdir -p "$BUILD/runs"
cat >"$job" <<'JOB'
#!/bin/sh
echo "# cyclictest -m -p95 -i1000 -D10 -a -t (one thread per CPU), QEMU TCG timing"
cyclictest -q -m -p95 -i1000 -D10 -a -t -h 400 >/tmp/ct.out 2>&1
rc=$?
grep -E '^# (Min|Avg|Max) Latencies' /tmp/ct.out | sed 's/^# /cyclictest: /'
grep -E '^# Histogram Overflows' /tmp/ct.out | sed 's/^# /cyclictest: /'
if [ $rc -eq 0 ]; then echo "ok 1 cyclictest"; else echo "not ok 1 cyclictest # rc $rc"; fi
JOB
TAG=run-$CONFIG_NAME TIMEOUT=300 "$TOP/scripts/qemu.sh" "$job" || rc=$?
log "cyclictest summary (latencies in us, emulated by QEMU TCG: compare, do not quote):"
grep '^cyclictest: ' "$BUILD/runs/run-$CONFIG_NAME/serial.log" | tr -d '\r' || true
exit "${rc:-0}"
