#!/usr/bin/env bash
# Static checks of what the series touches, on the patched tree:
#  - the C files it changes, compiled with W=1 and checked with sparse
#    (C=2: every named object; skipped, and said so, when the kernel refuses
#    the installed sparse) for x86_64 and arm64, PREEMPT_RT + debug
#    fragment, in their own object directories; any warning fails;
#  - its documentation, built with Sphinx (make htmldocs for the directory
#    it touches); any warning naming a file of the series fails;
#  - checkpatch --strict on every patch of patches/.
#
# usage: [KERNEL=7.3] [ARCHES="x86_64 arm64"] scripts/lint.sh
# output: build/lint/{summary,<arch>.log,htmldocs.log,checkpatch.log}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: [KERNEL=7.3|6.12] [ARCHES=\"x86_64 arm64\"] $0" >&2; exit 2; }
load_params
LOG_TAG=lint
patched_tree_stage lint
fail=0

note() {
	echo "$1" | tee -a "$SUMMARY"
	case $1 in FAIL*) fail=1 ;; esac
}

# C files of the series, as objects (a header is checked through them)
mapfile -t OBJS < <(git -C "$SRC" diff --name-only pristine HEAD -- '*.c' |
	grep -v '^tools/' | sed 's/\.c$/.o/')
mapfile -t DOCS < <(git -C "$SRC" diff --name-only pristine HEAD -- 'Documentation/*.rst')

# The kernel runs sparse only when scripts/checker-valid.sh accepts it: 7.3
# needs __typeof_unqual__, which Debian's sparse (0.6.4) does not know.
CHECK=(C=2)
CHECKER="sparse"
if [ "$(cd "$SRC" && sh scripts/checker-valid.sh sparse 2>/dev/null || echo 0)" != 1 ]; then
	CHECK=()
	CHECKER="no sparse"
	note "SKIP sparse: $(sparse --version 2>/dev/null || echo missing) is not accepted by $KVER's scripts/checker-valid.sh (__typeof_unqual__)"
fi

for arch in ${ARCHES:-x86_64 arm64}; do
	(
		ARCH=$arch
		load_params
		kbuild_env
		obj=$BUILD/$KVER/obj/$arch-lint
		mkdir -p "$obj"
		(cd "$SRC" && ARCH=$KARCH CROSS_COMPILE=$CROSS_COMPILE scripts/kconfig/merge_config.sh \
			-n -O "$obj" "$TOP/configs/rt.config" "$TOP/configs/$arch.config" \
			"$TOP/configs/debug.config") >"$obj/config.log" 2>&1 || exit 1
		make -C "$SRC" O="$obj" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" LOCALVERSION= \
			CC="ccache ${CROSS_COMPILE}gcc" HOSTCC="ccache gcc" -j"$(nproc)" \
			W=1 "${CHECK[@]}" "${OBJS[@]}" >"$OUT/$arch.log" 2>&1
	)
	rc=$?
	warn=$(grep -cE 'warning:|error:' "$OUT/$arch.log" || true)
	if [ $rc -ne 0 ] || [ "$warn" -ne 0 ]; then
		note "FAIL $arch W=1 ($CHECKER): $warn warnings/errors, exit $rc, see $OUT/$arch.log"
		grep -E 'warning:|error:' "$OUT/$arch.log" | head -10 >&2
	else
		note "ok   $arch W=1 ($CHECKER): ${OBJS[*]}"
	fi
done

if [ ${#DOCS[@]} -gt 0 ]; then
	dirs=$(printf '%s\n' "${DOCS[@]}" | sed 's|^Documentation/||; s|/[^/]*$||' | sort -u | tr '\n' ' ')
	make -C "$SRC" O="$BUILD/$KVER/obj/htmldocs" SPHINXDIRS="$dirs" htmldocs \
		>"$OUT/htmldocs.log" 2>&1
	rc=$?
	bad=$(grep -E 'WARNING|ERROR' "$OUT/htmldocs.log" | grep -F -f <(printf '%s\n' "${DOCS[@]}") || true)
	if [ $rc -ne 0 ] || [ -n "$bad" ]; then
		note "FAIL htmldocs ($dirs): exit $rc, see $OUT/htmldocs.log"
		echo "$bad" | head -10 >&2
	else
		note "ok   htmldocs SPHINXDIRS=$dirs: ${DOCS[*]}"
	fi
fi

: >"$OUT/checkpatch.log"
while read -r p; do
	st=0
	run_checkpatch "$SRC" "$TOP/$p" >>"$OUT/checkpatch.log" || st=$?
	case $st in
	0) note "ok   checkpatch --strict: ${p##*/}" ;;
	2) note "ok   checkpatch --strict: ${p##*/}: finding justified in the changelog" ;;
	*) note "FAIL checkpatch --strict: ${p##*/}, see $OUT/checkpatch.log" ;;
	esac
done < <(series_patches)

log "summary in $SUMMARY"
exit $fail
