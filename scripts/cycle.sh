#!/usr/bin/env bash
# The BH fast path, baseline vs patched, three ways (docs/benchmarks.md: BH cycle cost):
#   icount  guest instructions: TCG with -icount shift=0, where a nanosecond
#           of guest time is one instruction, so the cycle loop's ns per
#           cycle is its instruction count; deterministic, one boot each;
#   tcg     plain TCG nanoseconds, RUNS boots each, alternating, with their
#           spread (TCG's memory emulation inflates exactly this cost);
#   refscale the upstream benchmark's incpercpubh reader (ns per loop), in
#           the same boots (not its bh reader: scripts/guest/cycle.sh says
#           why).
#   trace   (TRACE=1, x86_64) every instruction of one iteration of each
#           cycle, single-stepped through QEMU's gdb stub, counted per
#           function: where a difference comes from (scripts/cycle_trace.py).
# Both cycles: with a raise (local_bh_disable(); tasklet_schedule();
# local_bh_enable()) and without (local_bh_disable(); local_bh_enable(),
# what spin_lock_bh() sections are). Kernels: make run's (CFG=perf).
#
# usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [TRACE=1] scripts/cycle.sh
# output: build/cycle/<arch>[-bhlock]-<stamp>/{table.txt,<boot>.log,trace.txt}, and
#   build/cycle/latest -> it

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: [ARCH=x86_64|arm64] [KERNEL=7.3|6.12] [BH_LOCK=1] [RUNS=n] [TRACE=1] $0" >&2
	exit 2
}
[ $# -eq 0 ] || usage
[ -z "${BASELINE:-}" ] || die "BASELINE= does not apply: make cycle boots both kernels"
export CFG=perf
RUNS=${RUNS:-3}
[[ $RUNS =~ ^[1-9][0-9]?$ ]] || die "RUNS must be a number from 1 to 99, not '$RUNS'"
TRACE=${TRACE:-0}
check_value TRACE "$TRACE" "$VALID_BOOL"
ICOUNT=
load_params
NAME=$CHECK_PREFIX$ARCH
[ "$BH_LOCK" = 1 ] && [ "$BH_LOCK_BUILTIN" = 0 ] && NAME=$NAME-bhlock
LOG_TAG="cycle $NAME"
OUT=$BUILD/cycle/$NAME-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"

build_pair

job() { # job FILE ENV...: the guest script with its environment
	local f=$1
	shift
	{
		echo '#!/bin/sh'
		echo "export $*"
		sed 1d "$TOP/scripts/guest/cycle.sh"
	} >"$f"
}
job "$OUT/job-icount.sh" REPS=3
job "$OUT/job-tcg.sh" REPS=5

accel_session
boot() { # boot GROUP VARIANT RUN ENV...
	local g=$1 v=$2 r=$3 tag rc=0 t0=$SECONDS
	shift 3
	tag=cycle-$NAME-$g-$v
	boot_variant "$v" "$tag" "$OUT/job-$g.sh" "$OUT/$g-$v-$r" 1200 "$@" || rc=$?
	log "$g $v #$r: $([ $rc -eq 0 ] && echo ok || echo FAILED) in $((SECONDS - t0)) s"
	return $rc
}

failed=0
for v in baseline patched; do
	boot icount "$v" 1 ACCEL=tcg ICOUNT=0 || failed=$((failed + 1))
done
for r in $(seq "$RUNS"); do
	for v in baseline patched; do
		boot tcg "$v" "$r" ACCEL=tcg || failed=$((failed + 1))
	done
done

# trace VARIANT RAISE: boot with QEMU's gdb stub, the guest looping the
# cycle, and let gdb single-step a few iterations of it
trace() {
	local v=$1 raise=$2 mode tag port rc=0
	mode=$([ "$raise" = 1 ] && echo raise || echo noraise)
	tag=cycle-$NAME-trace-$v
	port=$((20000 + RANDOM % 20000))
	cat >"$OUT/job-trace-$mode.sh" <<EOT
#!/bin/sh
modprobe test_softirq || exit 1
echo "softirq-rt: trace ready"
while :; do echo "cycle 1 10000000 $raise" >/sys/kernel/debug/test_softirq/control || exit 1; done
EOT
	env BASELINE="$([ "$v" = baseline ] && echo 1 || echo 0)" TAG="$tag" TIMEOUT=900 ACCEL=tcg \
		QEMU_DEVICES="-gdb tcp:127.0.0.1:$port" \
		"$TOP/scripts/qemu.sh" "$OUT/job-trace-$mode.sh" >"$OUT/trace-$v-$mode.qemu.log" 2>&1 &
	for _ in $(seq 600); do
		grep -q '^softirq-rt: trace ready' "$BUILD/runs/$tag/serial.log" 2>/dev/null && break
		sleep 0.5
	done
	sleep 2 # into the loop
	PORT=$port MODE=$mode PCS=$OUT/$v-$mode.pcs timeout 900 \
		gdb -q -batch -x "$TOP/scripts/cycle_trace.py" "$OUT/$v.vmlinux" \
		>"$OUT/trace-$v-$mode.gdb.log" 2>&1 || rc=$?
	pkill -f "file:$BUILD/runs/$tag/serial.log" || true
	wait
	log "trace $v $mode: $([ $rc -eq 0 ] && echo ok || echo "FAILED, see $OUT/trace-$v-$mode.gdb.log")"
	return $rc
}
if [ "$TRACE" = 1 ]; then
	[ "$ARCH" = x86_64 ] || die "TRACE=1 needs ARCH=x86_64 (the host's gdb)"
	for v in baseline patched; do
		ln -sf "$BUILD/$(kernel_version)/obj/$(config_name "$v")/vmlinux" "$OUT/$v.vmlinux"
		for raise in 1 0; do
			trace "$v" "$raise" || failed=$((failed + 1))
		done
	done
	python3 "$TOP/scripts/cycle_trace.py" table "$OUT" >"$OUT/trace.txt" || failed=$((failed + 1))
fi

python3 - "$OUT" "$RUNS" >"$OUT/table.txt" <<'EOF'
import glob, os, re, statistics, sys

out, runs = sys.argv[1], int(sys.argv[2])

def figures(path):
    """{metric: [values]} of one boot's BENCH lines."""
    f = {}
    for line in open(path, errors="replace"):
        line = line.strip()
        if not line.startswith("BENCH "):
            continue
        d = dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv)
        kind = line.split()[1]
        if kind in ("cycle", "cycle_noraise") and "cycle_ps" in d:
            f.setdefault(kind, []).append(int(d["cycle_ps"]) / 1000)
        elif kind == "refscale" and d.get("ns_per_loop"):
            f.setdefault("refscale_" + d["type"], []).append(float(d["ns_per_loop"]))
    return f

def boots(group, variant):
    return [figures(p) for p in sorted(glob.glob(f"{out}/{group}-{variant}-*.log"))]

metrics = [("cycle", "raise cycle (module)"), ("cycle_noraise", "no-raise cycle (module)"),
           ("refscale_incpercpubh", "refscale incpercpubh")]
print(f"# {os.path.basename(out)}: QEMU TCG; baseline vs patched, same config and command")
print("# icount: -icount shift=0, one boot each, median of the reps: instructions per cycle")
print(f"# tcg: plain TCG, {runs} boots each, median of each boot's median: ns [min-max of boots]")
for group, unit in (("icount", "insns"), ("tcg", "ns")):
    b, p = boots(group, "baseline"), boots(group, "patched")
    print(f"\n{group:8} {'':24} {'baseline':>22} {'patched':>22} {'ratio':>6}")
    for key, label in metrics:
        def per_boot(bs):
            return [statistics.median(x[key]) for x in bs if x.get(key)]
        vb, vp = per_boot(b), per_boot(p)
        if not vb or not vp:
            print(f"{'':8} {label:24} {'-':>22} {'-':>22} {'-':>6}")
            continue
        mb, mp = statistics.median(vb), statistics.median(vp)
        def cell(v, m):
            return f"{m:.1f} [{min(v):.1f}-{max(v):.1f}]" if len(v) > 1 else f"{m:.1f}"
        print(f"{'':8} {label:24} {cell(vb, mb):>22} {cell(vp, mp):>22} {mp / mb:6.3f}")
EOF
ln -sfn "$(basename "$OUT")" "$BUILD/cycle/latest"
cat "$OUT/table.txt"
[ "$TRACE" = 0 ] || { echo; cat "$OUT/trace.txt"; }
log "results in $OUT"
[ $failed -eq 0 ] || die "$failed boots failed: see $OUT/*.qemu.log"
