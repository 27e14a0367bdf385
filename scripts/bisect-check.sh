#!/usr/bin/env bash
# Build x86_64 after each patch of the series, with PREEMPT_RT and without,
# and report the first patch that breaks. Also records the text size of
# kernel/softirq.o and net/core/dev.o after every patch, which on
# !PREEMPT_RT only the stand-alone fixes may change: another patch which
# changes it fails the check.
#
# It checks out each commit of the generated tree build/<version>/patched
# in turn (so ccache finds the objects of earlier builds of that tree) and
# returns it to the full series at the end.
#
# CONFIGS: nort (full !PREEMPT_RT build), rt (full PREEMPT_RT build, debug
# fragment), rtobj (PREEMPT_RT, debug fragment, only kernel/softirq.o and the
# objects of the files each patch touches, with W=1: quick).
#
# usage: [KERNEL=7.3] [CONFIGS="nort rt"] scripts/bisect-check.sh
# output: build/bisect/summary (build/bisect-6.12/summary for KERNEL=6.12)

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: [KERNEL=7.3|6.12] [CONFIGS=\"rt nort\"] $0" >&2; exit 2; }
ARCH=x86_64
load_params
patched_tree_stage "$(basename "$(line_dir bisect)")"

kbuild_env

# The RT build uses the debug fragment of make check, so ccache already
# holds most of its objects.
frags() { # rt|nort
	echo "$TOP/configs/rt.config"
	echo "$TOP/configs/x86_64.config"
	if [ "$1" = nort ]; then
		echo "$TOP/configs/nort.config"
	else
		echo "$TOP/configs/debug.config"
	fi
}

# kernel/, lib/ and net/ C files changed by the commit, as make targets
changed_objects() {
	git -C "$SRC" diff --name-only "$1^" "$1" -- 'kernel/*.c' 'lib/*.c' 'net/*.c' | sed 's/\.c$/.o/'
}

build_at() { # commit config
	local obj=$BUILD/$KVER/obj/x86_64-bisect-$2 targets=()
	git -C "$SRC" checkout -q "$1"
	mkdir -p "$obj"
	local f
	mapfile -t f < <(frags "$2")
	(cd "$SRC" && ARCH=x86 scripts/kconfig/merge_config.sh -n -O "$obj" "${f[@]}") \
		>"$obj/config.log" 2>&1 || return 1
	if [ "$2" = rtobj ]; then
		mapfile -t targets < <( (echo kernel/softirq.o; [ "$1" = pristine ] || changed_objects "$1") | sort -u)
		make -C "$SRC" O="$obj" ARCH=x86 LOCALVERSION= CC="ccache gcc" HOSTCC="ccache gcc" \
			W=1 "${targets[@]}" >"$obj/bisect.log" 2>&1 || return 1
		if grep -q 'warning:' "$obj/bisect.log"; then
			return 1
		fi
		return 0
	fi
	if [ "$2" = nort ] && grep -q '^CONFIG_PREEMPT_RT=y' "$obj/.config"; then
		echo "nort config has PREEMPT_RT" >&2
		return 1
	fi
	make -C "$SRC" O="$obj" ARCH=x86 LOCALVERSION= CC="ccache gcc" HOSTCC="ccache gcc" \
		-j"$(nproc)" >"$obj/build.log" 2>&1
}

# Text sizes of the objects the PREEMPT_RT-only patches touch: on the
# !PREEMPT_RT build only the stand-alone fixes (the postings other than
# the "*" one in ./postings, by subject prefix) may change them.
RT_ONLY_OBJS="kernel/softirq.o net/core/dev.o"
objs_text() { # config
	local o out=()
	for o in $RT_ONLY_OBJS; do
		out+=("${o##*/} $(size "$BUILD/$KVER/obj/x86_64-bisect-$1/$o" 2>/dev/null | awk 'NR == 2 {print $1}')")
	done
	(IFS=,; echo "${out[*]}")
}

is_fix() { # subject
	local owner
	owner=$(posting_of "$1") && [ "${owner#* }" != "*" ]
}

head=$(git -C "$SRC" rev-parse HEAD)
trap 'git -C "$SRC" checkout -q "$head"' EXIT
mapfile -t commits < <(git -C "$SRC" rev-list --reverse pristine..HEAD)
first_bad=""
for cfg in ${CONFIGS:-nort rtobj}; do
	LOG_TAG=$cfg
	start=$SECONDS
	build_at pristine "$cfg" || die "the unpatched tree does not build ($cfg)"
	text=$(objs_text "$cfg")
	echo "$cfg base text: $text" >>"$SUMMARY"
	for c in "${commits[@]}"; do
		subj=$(git -C "$SRC" log -1 --format=%s "$c")
		if build_at "$c" "$cfg"; then
			prev=$text
			text=$(objs_text "$cfg")
			if [ "$cfg" = nort ] && [ "$text" != "$prev" ] && ! is_fix "$subj"; then
				log "TEXT $subj: !PREEMPT_RT text $prev -> $text"
				echo "$cfg TEXT-CHANGED $subj (text: $prev -> $text)" >>"$SUMMARY"
				[ -n "$first_bad" ] || first_bad="$subj (nort: !PREEMPT_RT text changed)"
				continue
			fi
			log "ok   $subj"
			echo "$cfg ok $subj (text: $text)" >>"$SUMMARY"
		else
			log "FAIL $subj (log: $BUILD/$KVER/obj/x86_64-bisect-$cfg/build.log)"
			echo "$cfg FAIL $subj" >>"$SUMMARY"
			[ -n "$first_bad" ] || first_bad="$subj ($cfg)"
		fi
	done
	log "done in $((SECONDS - start)) s"
done
cat "$SUMMARY"
if [ -n "$first_bad" ]; then
	log "first patch that breaks the build or the !PREEMPT_RT text: $first_bad"
	exit 1
fi
log "every patch builds on its own (${CONFIGS:-nort rtobj})"
