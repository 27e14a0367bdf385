#!/usr/bin/env bash
# The test job: apply the series with zero fuzz, checkpatch it, then for each
# configuration build the kernel, boot it under QEMU and run the smoke suite,
# the softirq kselftests and the KUnit suites in the guest; scan every log.
# On 7.3 x86_64 (BH lock off) also make regress's CI subset: the kernel's
# own net selftests and torture runs in a Debian userland (CHECK_REGRESS=0:
# not).
# Ends with 'N passed, N failed'.
#
# usage: [ARCH=x86_64|arm64] [KERNEL=7.3] [BASELINE=1] [BH_LOCK=1] [NORT=1] [ACCEL=auto|kvm|tcg] scripts/check.sh
#   without ARCH/BH_LOCK: x86_64, arm64 and x86_64 with BH_LOCK=1
#   NORT=1: one kernel (x86_64 unless ARCH) without PREEMPT_RT, whose guest
#   runs the KUnit suites, the kselftests and the short soak: the series
#   claims that !PREEMPT_RT behaves as before
# output: build/check/results, build/check-6.12/results for KERNEL=6.12,
#         build/check-nort/results for NORT=1 (one 'pass|fail|skip name' per line)

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BASELINE=1] [BH_LOCK=1] [NORT=1] $0" >&2; exit 2; }

# Validate what the user gave before spending minutes on anything.
[ -z "${ARCH:-}" ] || check_value ARCH "$ARCH" "$VALID_ARCH"
[ -z "${BH_LOCK:-}" ] || check_value BH_LOCK "$BH_LOCK" "$VALID_BOOL"
check_value KERNEL "${KERNEL:-7.3}" "$VALID_KERNEL"
check_value BASELINE "${BASELINE:-0}" "$VALID_BOOL"
check_value ACCEL "${ACCEL:-auto}" "$VALID_ACCEL"
check_value NORT "${NORT:-0}" "$VALID_BOOL"
export KERNEL=${KERNEL:-7.3}
# shellcheck source=scripts/kernels/7.3.conf
. "$TOP/scripts/kernels/$KERNEL.conf"
[ "${BH_LOCK:-1}" = 1 ] || [ "$BH_LOCK_BUILTIN" = 0 ] ||
	die "KERNEL=$KERNEL always has the BH lock on PREEMPT_RT: BH_LOCK=0 needs KERNEL=7.3"
accel_session

# the configuration of every kernel: the debug one, or it without PREEMPT_RT
CHECK_CFG=debug
if [ "${NORT:-0}" = 1 ]; then
	if [ "$KERNEL" != 7.3 ] || [ "${BH_LOCK:-0}" != 0 ]; then
		die "NORT=1 builds 7.3 without PREEMPT_RT, so without the BH lock: not KERNEL=$KERNEL${BH_LOCK:+ BH_LOCK=$BH_LOCK}"
	fi
	MATRIX=("${ARCH:-x86_64}:0")
	CHECK_CFG=nort
elif [ -n "${ARCH:-}" ] || [ -n "${BH_LOCK:-}" ]; then
	MATRIX=("${ARCH:-$(host_arch)}:${BH_LOCK:-$BH_LOCK_BUILTIN}")
elif [ "$BH_LOCK_BUILTIN" = 1 ]; then
	MATRIX=(x86_64:1 arm64:1)
else
	MATRIX=(x86_64:0 arm64:0 x86_64:1)
fi
VARIANT_NAME=patched
[ "${BASELINE:-0}" = 1 ] && VARIANT_NAME=baseline

# 7.3 in build/check, 6.12 in build/check-6.12; 6.12's names start "6.12-"
CHECK_DIR=$(line_dir check)
# NORT=1 keeps the results of the last full make check
[ "$CHECK_CFG" = debug ] || CHECK_DIR=$(line_dir check-nort)
RESULTS=$CHECK_DIR/results
mkdir -p "$CHECK_DIR"
: >"$RESULTS"
START=$SECONDS

record() { # record pass|fail NAME
	echo "$1 $2" >>"$RESULTS"
	[ "$1" = pass ] || log "FAIL $2"
}

TIMINGS=$CHECK_DIR/timings
: >"$TIMINGS"
step() { # step NAME command...: run a stage, record its outcome and time
	local name=$1 t0=$SECONDS rc=0
	shift
	"$@" || rc=$?
	echo "$name $((SECONDS - t0))" >>"$TIMINGS"
	if [ $rc -eq 0 ]; then
		record pass "$name"
	else
		record fail "$name"
		return 1
	fi
}

checkpatch() {
	local src p rc=0 st
	src=$(ARCH=x86_64 BASELINE=0 load_params && src_dir patched)
	while read -r p; do
		st=0
		run_checkpatch "$src" "$TOP/$p" >"$CHECK_DIR/checkpatch.out" || st=$?
		if [ $st -ne 1 ]; then
			[ $st -eq 0 ] || sed 's/^/  justified below ---: /' "$CHECK_DIR/checkpatch.out"
			record pass "checkpatch.${p##*/}"
		else
			sed 's/^/  /' "$CHECK_DIR/checkpatch.out"
			record fail "checkpatch.${p##*/}"
			rc=1
		fi
	done < <(series_patches)
	return $rc
}

GUEST_JOB=$CHECK_DIR/guest-job.sh
SOAK_SECONDS=${SOAK_SECONDS:-60}
[[ $SOAK_SECONDS =~ ^[1-9][0-9]*$ ]] || die "SOAK_SECONDS must be a number of seconds"
GUEST_TESTS="/bin/smoke.sh /selftests/softirq/softirq_kunit.sh /selftests/softirq/softirq_attribution /bin/test_softirq_ctl"
# Without PREEMPT_RT the smoke suite (is this the RT kernel?) and the
# module's control-file test (the measuring tooling) have nothing to check.
[ "$CHECK_CFG" = debug ] ||
	GUEST_TESTS="/selftests/softirq/softirq_kunit.sh /selftests/softirq/softirq_attribution"
sed -e "s/\${SOAK_SECONDS}/$SOAK_SECONDS/" -e "s|\${GUEST_TESTS}|$GUEST_TESTS|" >"$GUEST_JOB" <<'JOB'
#!/bin/sh
# make check, inside the guest
export KTAP_TIMEOUT=600
ktap-run ${GUEST_TESTS}
# the short soak: make soak for a minute
DURATION=${SOAK_SECONDS} soak.sh
JOB

run_config() { # ARCH:BH_LOCK
	local arch=${1%:*} bh=${1#*:} name
	name=$CHECK_PREFIX$arch-$VARIANT_NAME
	[ "$bh" = 1 ] && name=$name-bhlock
	[ "$CHECK_CFG" = debug ] || name=$name-$CHECK_CFG
	export ARCH=$arch BH_LOCK=$bh CFG=$CHECK_CFG
	log "== $name"
	step "$name.build" "$TOP/scripts/build.sh" || return 0
	step "$name.initramfs" "$TOP/scripts/initramfs.sh" || return 0
	local t0=$SECONDS
	TIMEOUT=${CHECK_TIMEOUT:-900} TAG=check-$name "$TOP/scripts/qemu.sh" "$GUEST_JOB" || true
	echo "$name.guest $((SECONDS - t0)) ($(cat "$BUILD/runs/check-$name/accel" 2>/dev/null || echo '?'))" >>"$TIMINGS"
	# a guest which left no results (qemu.sh died, the guest never ran)
	# is a failure, not an absence of failures
	if [ -s "$BUILD/runs/check-$name/results" ]; then
		sed "s/ check-$name\./ $name./" "$BUILD/runs/check-$name/results" >>"$RESULTS"
	else
		record fail "$name.guest"
	fi
	# make regress's CI subset (the kernel's own net selftests, torture)
	# on this kernel, which carries configs/net.config for it
	if [ "$arch" = x86_64 ] && [ "$bh" = 0 ] && [ "$KERNEL" = 7.3 ] && [ "$CFG" = debug ] &&
		[ "${CHECK_REGRESS:-1}" = 1 ]; then
		local res=$BUILD/runs/regress-$arch-$VARIANT_NAME-debug/results
		t0=$SECONDS
		rm -f "$res"
		# its verdict is in the results, whatever it exits with
		SET=ci TESTS="" ONLY=$VARIANT_NAME REGRESS_CFG=debug "$TOP/scripts/regress.sh" \
			>"$CHECK_DIR/regress.log" 2>&1 || true
		echo "$name.regress $((SECONDS - t0))" >>"$TIMINGS"
		tail -n 12 "$CHECK_DIR/regress.log" | sed 's/^/  /'
		if [ -s "$res" ]; then
			sed "s/ regress-$arch-$VARIANT_NAME-debug\./ $name.regress./" "$res" >>"$RESULTS"
		else
			record fail "$name.regress"
		fi
	fi
	return 0
}

step setup "$TOP/scripts/setup.sh" || true
step lint.shellcheck make -s -C "$TOP" lint-scripts || true
step host.accel "$TOP/scripts/test-accel.sh" || true
step kernel-src "$TOP/scripts/kernel-src.sh"
step "apply.$VARIANT_NAME" "$TOP/scripts/tree.sh" "$VARIANT_NAME"
if [ "$VARIANT_NAME" = patched ]; then
	step apply.git-am "$TOP/scripts/apply-check.sh" git-am || true
	step apply.quilt "$TOP/scripts/apply-check.sh" quilt || true
	step apply.newest-debian "$TOP/scripts/apply-check.sh" drift || true
	checkpatch || true
	# each posting of ./postings applies to the pristine tree alone, as
	# make mail sends it (7.3 only: the 6.12 line is not posted)
	if [ "$KERNEL" = 7.3 ]; then
		step apply.postings env MAIL_APPLY_ONLY=1 "$TOP/scripts/mail.sh" || true
	fi
fi
for cfg in "${MATRIX[@]}"; do
	run_config "$cfg"
done

pass=$(grep -c '^pass ' "$RESULTS" || true)
fail=$(grep -c '^fail ' "$RESULTS" || true)
skip=$(grep -c '^skip ' "$RESULTS" || true)
echo
grep '^fail ' "$RESULTS" | sed 's/^fail /FAILED: /' || true
log "seconds per stage:"
sed 's/^/  /' "$TIMINGS"
log "results: $RESULTS ($((SECONDS - START)) s)"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
