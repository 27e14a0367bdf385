#!/usr/bin/env bash
# Boot a built kernel under QEMU with the initramfs and a job, record the
# full serial log, parse its KTAP and scan it for splats.
#
# usage: ARCH=.. KERNEL=.. [BASELINE=1] [BH_LOCK=1] [CFG=..] [TIMEOUT=s] [TAG=name] \
#        [ACCEL=auto|kvm|tcg] [ICOUNT=auto|0..10] [QEMU_DEVICES=args] scripts/qemu.sh JOB_SCRIPT
# ACCEL=auto uses KVM only once a guest booted under it printed a kernel or
# init line within ACCEL_PROBE_SECONDS (20); otherwise this guest and every
# later one of the same invocation ($ACCEL_STATE) run under TCG.
# ICOUNT=auto|N runs TCG guests with -icount shift=auto|N,sleep=off:
# virtual time from the instruction count instead of the host clock, on one
# host thread for all vCPUs (make run's latency evaluation; KVM ignores it).
# QEMU_DEVICES: more QEMU arguments, split on spaces (make run's disk and NIC).
# ROOTFS=1 adds the Debian userland of scripts/rootfs.sh; the job runs in it.
# EXTRA_CPIO: more initramfs archives, split on spaces (make regress's tests).
# output: build/runs/<tag>/{serial.log,results,accel}; exit 0 only when
# every result passed and the log is clean.

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

rm -rf "$RUN"
mkdir -p "$RUN/job"
cp "$JOB" "$RUN/job/job.sh"
chmod +x "$RUN/job/job.sh"
printf 'file /job.sh %s 0755 0 0\n' "$RUN/job/job.sh" >"$RUN/job.list"
"$BUILD/tools/gen_init_cpio" "$RUN/job.list" >"$RUN/job.cpio"
ROOTFS_CPIO=
if [ "${ROOTFS:-0}" = 1 ]; then
	ROOTFS_CPIO=$BUILD/initramfs/$ARCH/rootfs.cpio
	[ -f "$ROOTFS_CPIO" ] || die "no $ROOTFS_CPIO (run scripts/rootfs.sh)"
fi
read -ra EXTRA <<<"${EXTRA_CPIO:-}"
cat "$BUILD/initramfs/$ARCH/base.cpio" "$OBJ/payload.cpio" ${ROOTFS_CPIO:+"$ROOTFS_CPIO"} \
	${EXTRA[@]+"${EXTRA[@]}"} "$RUN/job.cpio" >"$RUN/initrd.cpio"

LOG=$RUN/serial.log
APPEND="console=$QEMU_CONSOLE loglevel=5 panic=-1 rcupdate.rcu_cpu_stall_suppress_at_boot=1 $QEMU_APPEND ${GUEST_APPEND:-}"
KVM_DEV=${KVM_DEV:-/dev/kvm}
PROBE_SECONDS=${ACCEL_PROBE_SECONDS:-20}
[[ $PROBE_SECONDS =~ ^[1-9][0-9]*$ ]] || die "ACCEL_PROBE_SECONDS must be a number of seconds"

# A line only the guest kernel (printk with PRINTK_TIME) or our init can
# print. Firmware output proves nothing: on some hosts SeaBIOS prints its
# banner under KVM and the kernel then never runs.
guest_proof() {
	grep -qE '^(softirq-rt: guest up|\[ *[0-9]+\.[0-9]+\] )' "$LOG"
}

# boot tcg|kvm PROVE: run the guest until it exits or TIMEOUT. With
# PROVE=1, give up after PROBE_SECONDS without a guest line (status
# noproof) or when QEMU exits before one (status aborted).
boot() {
	local accel=$1 prove=$2 qpid proven=0 now
	local cmd=("$QEMU_BIN" "${QEMU_MACHINE[@]}")
	case $accel in
	kvm) cmd+=(-accel kvm) ;;
	tcg)
		if [ -n "$ICOUNT" ]; then
			# icount needs one TCG thread for all vCPUs
			cmd+=(-accel "tcg,thread=single" -icount "shift=$ICOUNT,sleep=off")
		else
			cmd+=(-accel "tcg,thread=multi")
		fi
		;;
	esac
	cmd+=(-smp 2 -m 2048 -display none -no-reboot -monitor none
		-serial "file:$LOG" -kernel "$OBJ/$KIMAGE"
		-initrd "$RUN/initrd.cpio" -append "$APPEND")
	if [ -n "${QEMU_DEVICES:-}" ]; then
		local devices
		read -ra devices <<<"$QEMU_DEVICES"
		cmd+=("${devices[@]}")
	fi
	[ -z "${QEMU_WRAPPER:-}" ] || cmd=("$QEMU_WRAPPER" "${cmd[@]}")
	echo "${cmd[*]}" >"$RUN/qemu.cmd"
	log "booting ($(basename "$JOB"), $accel, timeout ${TIMEOUT}s)"
	start=$(date +%s.%N)
	booted=""
	status=ok
	: >"$LOG"
	"${cmd[@]}" >"$RUN/qemu.out" 2>&1 </dev/null &
	qpid=$!
	# A QEMU which aborts is reported by the fallback line and qemu.out,
	# not by bash's job notice on the terminal.
	disown $qpid
	while kill -0 $qpid 2>/dev/null; do
		now=$(echo "$(date +%s.%N) - $start" | bc)
		[ $proven = 1 ] || ! guest_proof || proven=1
		if [ -z "$booted" ] && grep -q '^softirq-rt: guest up' "$LOG"; then
			booted=$now
			printf '%.1f\n' "$booted" >"$RUN/boot-seconds"
			log "booted to userspace in $(cat "$RUN/boot-seconds") s"
		fi
		if [ "$prove" = 1 ] && [ $proven = 0 ] && [ "$(echo "$now > $PROBE_SECONDS" | bc)" = 1 ]; then
			status=noproof
		elif [ "$(echo "$now > $TIMEOUT" | bc)" = 1 ]; then
			status=timeout
		fi
		if [ $status != ok ]; then
			kill $qpid 2>/dev/null
			sleep 1
			kill -9 $qpid 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	wait $qpid 2>/dev/null || true
	[ $proven = 1 ] || ! guest_proof || proven=1
	[ "$prove" = 1 ] && [ $proven = 0 ] && [ $status = ok ] && status=aborted
	return 0
}

# Why KVM did not boot, in QEMU's own words where it said something.
kvm_failure() {
	local why
	why=$(grep -m1 -iE 'error|assert|fail|abort' "$RUN/qemu.out" 2>/dev/null || true)
	[ -n "$why" ] || why=$(grep -m1 . "$RUN/qemu.out" 2>/dev/null || true)
	if [ -z "$why" ]; then
		if [ "$status" = noproof ]; then
			why="no guest kernel output in ${PROBE_SECONDS} s under KVM"
		else
			why="QEMU exited before the guest kernel printed"
		fi
	fi
	echo "$why" | cut -c1-200
}

# give_up_kvm REASON: ACCEL=kvm fails; auto falls back, once per invocation
give_up_kvm() {
	[ "$ACCEL" = kvm ] && die "KVM unusable here ($1), and ACCEL=kvm was asked for"
	echo "tcg $1" >"$ACCEL_STATE"
	echo "[qemu] KVM unusable here ($1), using TCG" >&2
	USE=tcg
}

# The accelerator is decided by what really boots, once per make
# invocation: ACCEL_STATE holds 'kvm' or 'tcg <reason>' once decided.
[ -n "${ACCEL_STATE:-}" ] || { ACCEL_STATE=$RUN.accel; : >"$ACCEL_STATE"; }
decided=$(cat "$ACCEL_STATE" 2>/dev/null || true)
PROVE=0
if [ "$ACCEL" = tcg ]; then
	USE=tcg
elif [ "$ARCH" != "$(host_arch)" ]; then
	[ "$ACCEL" = kvm ] && die "ACCEL=kvm: no KVM for $ARCH guests on a $(host_arch) host"
	USE=tcg
elif [ -n "$decided" ]; then
	USE=${decided%% *}
	[ "$USE" = tcg ] && [ "$ACCEL" = kvm ] && die "KVM unusable here (${decided#tcg }), and ACCEL=kvm was asked for"
elif [ ! -w "$KVM_DEV" ]; then
	give_up_kvm "no writable $KVM_DEV"
else
	USE=kvm
	PROVE=1
fi

boot "$USE" $PROVE
if [ $PROVE = 1 ]; then
	if [ $status = ok ] || [ $status = timeout ]; then
		echo kvm >"$ACCEL_STATE"
	else
		give_up_kvm "$(kvm_failure)"
		cp "$RUN/qemu.out" "$RUN/qemu-kvm.out"
		boot tcg 0
	fi
fi
if [ "$USE" = tcg ] && [ -n "$ICOUNT" ]; then
	echo "tcg-icount-$ICOUNT" >"$RUN/accel"
else
	echo "$USE" >"$RUN/accel"
fi
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
