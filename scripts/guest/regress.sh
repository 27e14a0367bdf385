#!/bin/bash
# make regress, inside the guest's Debian userland (scripts/rootfs.sh):
# run the kernel's own selftests under /kselftest one after the other, each
# from its own directory with its timeout, as the kselftest runner would,
# and report one KTAP line per test. What a test prints goes to the console
# as KTAP diagnostics ('# '), which the host does not take for results or
# splats; kernel messages keep their timestamps and are scanned.
#
# usage: regress.sh TEST:SECONDS[:ARG,ARG...]...
#   TEST is a script under /kselftest (net/udpgro.sh), called with the ARGs,
#   or torture=rcutorture or refscale=<scale_type> for a torture or
#   reference-benchmark smoke run. An ARG NAME=WORD+WORD is put in the
#   test's environment instead, as NAME="WORD WORD".

# torture_smoke MODULE SECONDS: load, let it run, unload; the module prints
# its verdict when it is unloaded
torture_smoke() {
	local v
	case $1 in
	# as in make soak: two checks assume wall-clock bounds TCG does not give
	rcutorture) modprobe rcutorture fwd_progress=0 stutter=0 || return 1 ;;
	*) modprobe "$1" || return 1 ;;
	esac
	sleep "$2"
	rmmod "$1" || return 1
	v=$(dmesg | grep -E -- '--- End of test: (SUCCESS|FAILURE)' | tail -n 1)
	echo "verdict: ${v:-none}"
	case $v in *SUCCESS*) return 0 ;; *) return 1 ;; esac
}

# refscale_smoke TYPE: one short run of the reference benchmark; rc 4
# (skip) where the kernel has no such scale_type
refscale_smoke() {
	local i=0 from
	# the host scans the whole kernel log at the end: never clear it
	from=$(dmesg | wc -l)
	# shutdown_secs: refscale powers the machine off at its end otherwise
	if ! modprobe refscale scale_type="$1" nreaders=2 loops=2000 nruns=3 shutdown_secs=0; then
		dmesg | tail -n +"$from" | grep -q 'invalid scale.type' && return 4
		return 1
	fi
	while ! dmesg | tail -n +"$from" | grep -q 'END OF TEST'; do
		i=$((i + 1))
		[ $i -lt 150 ] || return 1
		sleep 2
	done
	dmesg | tail -n +"$from" | grep -A4 'END OF TEST'
	rmmod refscale
}

export KSFT_MACHINE_SLOW=yes
echo "TAP version 13"
echo "1..$#"
n=0
for t in "$@"; do
	n=$((n + 1))
	test=${t%%:*}
	rest=${t#*:}
	secs=${rest%%:*}
	args=()
	[ "$rest" = "$secs" ] || IFS=, read -ra args <<<"${rest#*:}"
	env=()
	words=()
	for a in "${args[@]}"; do
		if [[ $a =~ ^[A-Z_][A-Z0-9_]*= ]]; then
			env+=("${a//+/ }")
		else
			words+=("$a")
		fi
	done
	args=("${words[@]}")
	echo "# regress: $test start (timeout ${secs}s) ${env[*]} ${args[*]}"
	t0=$SECONDS
	out=/tmp/regress.out
	retried=
	for try in 1 2; do
		case $test in
		torture=*) torture_smoke "${test#torture=}" "$secs" >$out 2>&1 ;;
		refscale=*) refscale_smoke "${test#refscale=}" >$out 2>&1 ;;
		*)
			if [ ! -x "/kselftest/$test" ]; then
				echo "no /kselftest/$test" >$out
				false
			else
				(cd "/kselftest/${test%/*}" && env "${env[@]}" timeout -k 10 "$secs" "./${test##*/}" "${args[@]}") </dev/null >$out 2>&1
			fi
			;;
		esac
		rc=$?
		sed 's/^/# /' $out
		# what a failed test left behind must not fail the next one
		ip -all netns delete 2>/dev/null
		# A test which fails (not a timeout) runs once more, as netdev's
		# CI retries: several wait for a listener with a fixed 1 s bound,
		# which TCG misses now and then on either kernel.
		case $rc in 0 | 4 | 124 | 137) break ;; esac
		# a torture or refscale failure is never a slow machine's
		case $test in torture=* | refscale=*) break ;; esac
		[ $try = 2 ] || { retried=" # failed once ($rc), passed on retry"; echo "# regress: $test failed ($rc), once more"; }
	done
	dt=$((SECONDS - t0))
	echo "# regress: $test exit $rc after ${dt}s"
	case $rc in
	0) echo "ok $n $test${retried}" ;;
	4) echo "ok $n $test # SKIP $(grep -i -m1 'skip' $out | cut -c1-100)" ;;
	124 | 137) echo "not ok $n $test # TIMEOUT after ${secs}s" ;;
	*) echo "not ok $n $test # exit $rc${retried:+, twice}" ;;
	esac
done
