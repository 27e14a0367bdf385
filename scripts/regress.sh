#!/usr/bin/env bash
# The kernel's own tests on the baseline and the patched kernel: the net
# selftests that exercise BH and softirq paths without hardware, and
# torture and reference-benchmark smoke runs, in a guest with a Debian
# userland (scripts/rootfs.sh), both kernels with the same debug
# configuration (CFG=regress: lockdep, KASAN on x86_64, configs/net.config).
# One guest per kernel runs the set one test after the other.
#
# The verdict: no test that passes on the baseline fails on the patched
# kernel, and neither log has a splat. A test that fails on both is listed
# with the reason its output gives; docs/regress.md says why each test is
# in the set or out of it.
#
# usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BH_LOCK=1] [SET=ci|full|all]
#        [TESTS='net/x.sh:600 ...'] [ONLY=baseline|patched] scripts/regress.sh
# output: build/regress/[6.12-]<config>/{table.md,summary}, the guests'
#         logs under build/runs/regress-[6.12-]<config>/

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BH_LOCK=1] [SET=ci|full|all] [TESTS='t:secs ...'] [ONLY=baseline|patched] $0" >&2
	exit 2
}
[ $# -eq 0 ] || usage
SET=${SET:-full}
check_value SET "$SET" "ci full all"
ONLY=${ONLY:-}
[ -z "$ONLY" ] || check_value ONLY "$ONLY" "baseline patched"
# CFG=debug: make check's kernel (scripts/check.sh), which carries
# configs/net.config on 7.3 x86_64 with the BH lock off only
export CFG=${REGRESS_CFG:-regress}
check_value REGRESS_CFG "$CFG" "regress debug"
# both kernels, whatever BASELINE make exported
BASELINE=0 load_params
[ "$CFG" = regress ] || { [ "$ARCH" = x86_64 ] && [ "$KERNEL" = 7.3 ] && [ "$BH_LOCK" = 0 ]; } ||
	die "REGRESS_CFG=debug: only make check's 7.3 x86_64 kernel with the BH lock off has the options the tests need"
accel_session

# TEST:SECONDS. The bound is for TCG with KASAN and lockdep; a test that
# hits it fails on both kernels and is reported as a timeout. The CI set
# is the part that fits in CI's budget (docs/regress.md).
CI_TESTS=(
	net/udpgro.sh:900
	net/veth.sh:900
	drivers/net/netdevsim/peer.sh:300
	torture=rcutorture:60
	refscale=incpercpubh:300
)
# the BH paths' tests which fit in about half an hour per kernel under
# TCG with KASAN; nft_concat_range.sh without its long timeout and
# correctness_large cases, pmtu.sh with its tunnel cases
# shellcheck disable=SC2054 # the arguments are comma-separated
FULL_TESTS=(
	"${CI_TESTS[@]}"
	net/udpgro_fwd.sh:1200
	net/gre_gso.sh:600
	net/fou_mcast_encap.sh:600
	net/l2_tos_ttl_inherit.sh:1200
	net/netfilter/nft_concat_range.sh:1800:NFT_CONCAT_RANGE_TESTS=reported_issues+correctness+concurrency
	net/pmtu.sh:1800:pmtu_ipv4_vxlan4_exception,pmtu_ipv6_geneve6_exception,pmtu_ipv4_br_vxlan4_exception,pmtu_ipv4_fou4_exception,pmtu_ipv6_gue6_exception
)
# and all of nft_concat_range.sh, pmtu.sh and fib_tests.sh, and
# udpgro_bench.sh: hours per kernel under TCG, by hand
ALL_TESTS=(
	"${CI_TESTS[@]}"
	"${FULL_TESTS[@]:${#CI_TESTS[@]}:4}"
	net/udpgro_bench.sh:600
	net/netfilter/nft_concat_range.sh:7200
	net/pmtu.sh:7200
	net/fib_tests.sh:7200
)
if [ -n "${TESTS:-}" ]; then
	read -ra LIST <<<"$TESTS"
elif [ "$SET" = ci ]; then
	LIST=("${CI_TESTS[@]}")
elif [ "$SET" = all ]; then
	LIST=("${ALL_TESTS[@]}")
else
	LIST=("${FULL_TESTS[@]}")
fi
budget=600
for t in "${LIST[@]}"; do
	secs=${t#*:}
	secs=${secs%%:*}
	[[ $secs =~ ^[1-9][0-9]*$ ]] || die "'$t': want TEST:SECONDS[:ARG,...]"
	# a test which fails runs twice; timeout's -k 10
	budget=$((budget + 2 * secs + 10))
done

# 6.12's runs carry its prefix: the 7.3 ones have the same configuration names
RUN_NAME=$CHECK_PREFIX$CONFIG_NAME
NAME=${RUN_NAME/-patched-/-}
OUT=$BUILD/regress/$NAME
mkdir -p "$OUT"
JOB=$OUT/job.sh
{
	echo '#!/bin/bash'
	printf 'set -- %s\n' "${LIST[*]}"
	sed 1d "$TOP/scripts/guest/regress.sh"
} >"$JOB"

"$TOP/scripts/tree.sh" baseline
"$TOP/scripts/rootfs.sh"
"$TOP/scripts/selftests.sh"
SELFTESTS=$BUILD/selftests/$(kernel_version)-$ARCH/kselftest.cpio

variants=(baseline patched)
[ -z "$ONLY" ] || variants=("$ONLY")
for v in "${variants[@]}"; do
	b=0
	[ "$v" = baseline ] && b=1
	BASELINE=$b "$TOP/scripts/tree.sh" "$v"
	BASELINE=$b "$TOP/scripts/build.sh"
	BASELINE=$b "$TOP/scripts/initramfs.sh"
	tag=regress-${RUN_NAME/-patched-/-$v-}
	log "== $v: ${#LIST[@]} tests, bound ${budget}s"
	BASELINE=$b TAG=$tag TIMEOUT=$budget ROOTFS=1 EXTRA_CPIO=$SELFTESTS \
		"$TOP/scripts/qemu.sh" "$JOB" >"$OUT/$v.qemu.log" 2>&1 || true
	tail -n 3 "$OUT/$v.qemu.log"
done

# The table and the verdict (scripts/regress.py)
python3 "$TOP/scripts/regress.py" "$BUILD/runs" "${RUN_NAME/-patched-/-baseline-}" \
	"$RUN_NAME" "$OUT" "$ONLY" "${LIST[@]}"
