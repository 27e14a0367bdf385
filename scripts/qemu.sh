#!/usr/bin/env bash
# Boot a built kernel under QEMU with the initramfs and a job, record the
# full serial log, parse its KTAP and scan it for splats.
#
# usage: ARCH=.. KERNEL=.. [BASELINE=1] [BH_LOCK=1] [CFG=..] [TIMEOUT=s] [TAG=name] \
#        scripts/qemu.sh JOB_SCRIPT
# output: build/runs/<tag>/{serial.log,results}; exit 0 only when every
# result passed and the log is clean.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: ARCH=x86_64|arm64 KERNEL=7.3|6.12 [BASELINE=1] [BH_LOCK=1] [TIMEOUT=s] [TAG=name] $0 JOB_SCRIPT" >&2
	exit 2
}
[ $# -eq 1 ] || usage
JOB=$1
[ -r "$JOB" ] || die "no job script $JOB"
load_params
OBJ=$(obj_dir)
TIMEOUT=${TIMEOUT:-600}
TAG=${TAG:-$CONFIG_NAME}
RUN=$BUILD/runs/$TAG
LOG_TAG=$TAG
[[ $TIMEOUT =~ ^[0-9]+$ ]] || die "TIMEOUT must be a number of seconds, not '$TIMEOUT'"
[ -f "$OBJ/$KIMAGE" ] || die "no kernel image $OBJ/$KIMAGE (run scripts/build.sh)"
[ -f "$OBJ/payload.cpio" ] || die "no initramfs payload in $OBJ (run scripts/initramfs.sh)"

accel() {
	# KVM only when it is there and really starts: a machine-less QEMU runs
	# until killed when the accelerator initialised, and exits at once when not.
	if [ "$ARCH" = "$(host_arch)" ] && [ -w /dev/kvm ]; then
		timeout 3 "$QEMU_BIN" -accel kvm -M none -display none -monitor none \
			-nodefaults </dev/null >/dev/null 2>&1
		if [ $? -eq 124 ]; then
			echo "-accel kvm"
			return
		fi
	fi
	echo "-accel tcg,thread=multi"
}

rm -rf "$RUN"
mkdir -p "$RUN/job"
cp "$JOB" "$RUN/job/job.sh"
chmod +x "$RUN/job/job.sh"
printf 'file /job.sh %s 0755 0 0\n' "$RUN/job/job.sh" >"$RUN/job.list"
"$BUILD/tools/gen_init_cpio" "$RUN/job.list" >"$RUN/job.cpio"
cat "$BUILD/initramfs/$ARCH/base.cpio" "$OBJ/payload.cpio" "$RUN/job.cpio" >"$RUN/initrd.cpio"

LOG=$RUN/serial.log
APPEND="console=$QEMU_CONSOLE loglevel=5 panic=-1 rcupdate.rcu_cpu_stall_suppress_at_boot=1 $QEMU_APPEND ${GUEST_APPEND:-}"
read -ra ACCEL <<<"$(accel)"
cmd=("$QEMU_BIN" "${QEMU_MACHINE[@]}" "${ACCEL[@]}" -smp 2 -m 2048 -display none
	-no-reboot -monitor none -serial "file:$LOG" -kernel "$OBJ/$KIMAGE"
	-initrd "$RUN/initrd.cpio" -append "$APPEND")
echo "${cmd[*]}" >"$RUN/qemu.cmd"
log "booting ($(basename "$JOB"), timeout ${TIMEOUT}s)"
start=$(date +%s.%N)
: >"$LOG"
"${cmd[@]}" >"$RUN/qemu.out" 2>&1 &
qpid=$!
booted=""
status=ok
while kill -0 $qpid 2>/dev/null; do
	if [ -z "$booted" ] && grep -q '^softirq-rt: guest up' "$LOG"; then
		booted=$(echo "$(date +%s.%N) - $start" | bc)
		printf '%.1f\n' "$booted" >"$RUN/boot-seconds"
		log "booted to userspace in $(cat "$RUN/boot-seconds") s"
	fi
	if [ "$(echo "$(date +%s.%N) - $start > $TIMEOUT" | bc)" = 1 ]; then
		kill $qpid 2>/dev/null
		sleep 1
		kill -9 $qpid 2>/dev/null || true
		status=timeout
		break
	fi
	sleep 0.2
done
wait $qpid 2>/dev/null || true
elapsed=$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")
echo "$elapsed" >"$RUN/wall-seconds"

rc=0
python3 "$TOP/scripts/ktap.py" --prefix "$TAG" --results "$RUN/results" "$LOG" || rc=1
if [ $status = timeout ]; then
	echo "fail $TAG.guest_finished" >>"$RUN/results"
	log "guest timed out after ${TIMEOUT}s: $LOG"
	exit 1
fi
if ! grep -q '^softirq-rt: dmesg end' "$LOG"; then
	echo "fail $TAG.guest_finished" >>"$RUN/results"
	grep -m1 -E 'Kernel panic|end Kernel panic' "$LOG" >&2 || true
	log "guest did not finish its job (crash or panic): $LOG"
	exit 1
fi
echo "pass $TAG.guest_finished" >>"$RUN/results"
[ $rc -eq 0 ] || { log "failed, log: $LOG"; exit 1; }
log "passed in ${elapsed} s, log: $LOG"
