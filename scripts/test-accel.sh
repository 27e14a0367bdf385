#!/usr/bin/env bash
# Host-side test of the accelerator choice in scripts/qemu.sh, no guest:
# a fake QEMU (QEMU_WRAPPER) fails or boots the way real hosts do, a fake
# /dev/kvm (KVM_DEV) is present or not, and every case checks which
# accelerator the guest ran under and what was said.
#
# usage: scripts/test-accel.sh
# output: one 'ok|not ok N name' line per case; exit 0 when all passed.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: $0" >&2; exit 2; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# a sandbox build and cache directory holding just what qemu.sh checks for
ARCH=$(host_arch)
export BUILD_DIR=$T/build SOFTIRQ_RT_CACHE=$T/cache ARCH KERNEL=7.3 \
	BASELINE=0 BH_LOCK=0 CFG=debug ACCEL_PROBE_SECONDS=2 TIMEOUT=30
load_params
mkdir -p "$SOFTIRQ_RT_CACHE/dl" "$BUILD_DIR/tools" "$BUILD_DIR/initramfs/$ARCH"
echo 7.3.0 >"$SOFTIRQ_RT_CACHE/dl/$KSRC_PKG.version"
OBJ=$BUILD_DIR/7.3.0/obj/$CONFIG_NAME
mkdir -p "$OBJ/$(dirname "$KIMAGE")"
: >"$OBJ/$KIMAGE"
: >"$OBJ/payload.cpio"
: >"$BUILD_DIR/initramfs/$ARCH/base.cpio"
printf '#!/bin/sh\n:\n' >"$BUILD_DIR/tools/gen_init_cpio"
chmod +x "$BUILD_DIR/tools/gen_init_cpio"
printf '#!/bin/sh\n' >"$T/job.sh"

# The fake QEMU: FAKE_KVM says what KVM does on this "host" (abort: the MSR
# assertion; bios: firmware banner, then silence; ok: boots). TCG boots.
cat >"$T/qemu" <<'FAKE'
#!/bin/bash
accel= serial=
while [ $# -gt 0 ]; do
	case $1 in
	-accel) accel=${2%%,*}; shift ;;
	-serial) serial=${2#file:}; shift ;;
	esac
	shift
done
echo "$accel" >>"$FAKE_CALLS"
boot() {
	printf '[    0.000000] Linux version 7.3.0\r\n' >>"$serial"
	printf 'softirq-rt: guest up at 0.5 s\r\nTAP version 13\r\n1..1\r\nok 1 fake\r\n' >>"$serial"
	printf 'softirq-rt: dmesg end\r\n' >>"$serial"
}
if [ "$accel" = kvm ]; then
	case $FAKE_KVM in
	abort)
		echo 'qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69' >&2
		echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
		# as QEMU does: abort(), so that the shell sees a signal
		kill -ABRT $$ ;;
	bios)
		printf 'SeaBIOS (version 1.16.2-debian-1.16.2-1)\r\nBooting from ROM...\r\n' >>"$serial"
		exec sleep 60 ;;
	ok) boot; exit 0 ;;
	esac
fi
boot
FAKE
chmod +x "$T/qemu"
export QEMU_WRAPPER=$T/qemu FAKE_CALLS=$T/calls

n=0
failed=0
result() { # result OK NAME [why]
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2${3:+ # $3}"
		failed=$((failed + 1))
	fi
}

# run_qemu KVM_MODE HAS_KVM ACCEL [STATE]: one qemu.sh call; leaves its
# status in $T/rc, its output in $T/out, the accelerator in $T/used
run_qemu() {
	local dev=$T/no-kvm rc=0
	if [ "$2" = 1 ]; then
		dev=$T/kvm
		: >"$dev"
	fi
	: >"$FAKE_CALLS"
	FAKE_KVM=$1 KVM_DEV=$dev ACCEL=$3 ACCEL_STATE=${4:-} TAG=accel \
		"$TOP/scripts/qemu.sh" "$T/job.sh" >"$T/out" 2>&1 || rc=$?
	echo $rc >"$T/rc"
	cat "$BUILD_DIR/runs/accel/accel" 2>/dev/null >"$T/used" || echo none >"$T/used"
}
used() { [ "$(cat "$T/used")" = "$1" ]; }
passed() { [ "$(cat "$T/rc")" = 0 ]; }
said() { grep -c "$1" "$T/out" || true; }
calls() { grep -c "^$1\$" "$FAKE_CALLS" || true; }

# KVM present, the probe of old would pass, but every guest aborts
state=$T/state-abort
: >"$state"
run_qemu abort 1 auto "$state"
ok=0
used tcg && passed && [ "$(said '^\[qemu\] KVM unusable here (qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69), using TCG$')" = 1 ] &&
	[ "$(said 'Aborted')" = 0 ] && ok=1
result $ok "auto: KVM aborts -> TCG, one fallback line" "$(tail -n 3 "$T/out" | tr '\n' ' ')"
# ... and the next guest of the same invocation neither probes nor repeats it
run_qemu abort 1 auto "$state"
ok=0
used tcg && passed && [ "$(calls kvm)" = 0 ] && [ "$(said 'KVM unusable')" = 0 ] && ok=1
result $ok "auto: later guests of the invocation use TCG without a probe"

# firmware banner under KVM, then nothing from the kernel: not proof
run_qemu bios 1 auto
ok=0
used tcg && passed && [ "$(said 'KVM unusable here (no guest kernel output in 2 s under KVM)')" = 1 ] && ok=1
result $ok "auto: firmware output only -> TCG" "$(grep KVM "$T/out" | head -n 1)"

run_qemu ok 1 auto
ok=0
used kvm && passed && [ "$(said 'KVM unusable')" = 0 ] && ok=1
result $ok "auto: KVM boots -> KVM"

run_qemu ok 0 auto
ok=0
used tcg && passed && [ "$(calls kvm)" = 0 ] && [ "$(said 'KVM unusable here (no writable ')" = 1 ] && ok=1
result $ok "auto: no /dev/kvm -> TCG"

run_qemu ok 1 tcg
ok=0
used tcg && passed && [ "$(calls kvm)" = 0 ] && [ "$(said 'KVM unusable')" = 0 ] && ok=1
result $ok "ACCEL=tcg -> TCG without a probe"

run_qemu abort 1 kvm
ok=0
! passed && [ "$(said 'error: KVM unusable here (qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69), and ACCEL=kvm was asked for')" = 1 ] && [ "$(calls tcg)" = 0 ] && ok=1
result $ok "ACCEL=kvm, KVM aborts -> error, no fallback"

run_qemu ok 1 bogus
ok=0
! passed && [ "$(said "unknown ACCEL='bogus' (valid: auto, kvm, tcg)")" = 1 ] && [ ! -s "$FAKE_CALLS" ] && ok=1
result $ok "ACCEL=bogus (qemu.sh) -> error listing the valid values"

# the entry points refuse it before installing or building anything
for entry in check.sh run.sh setup.sh soak.sh; do
	rc=0
	env -u BASELINE -u BH_LOCK -u CFG ACCEL=bogus timeout 20 "$TOP/scripts/$entry" >"$T/out" 2>&1 || rc=$?
	ok=0
	[ $rc -ne 0 ] && [ "$rc" != 124 ] && [ "$(said "unknown ACCEL='bogus' (valid: auto, kvm, tcg)")" = 1 ] && ok=1
	result $ok "ACCEL=bogus ($entry) -> error before any work" "$(head -n 2 "$T/out" | tr '\n' ' ')"
done

echo "# accel: $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
