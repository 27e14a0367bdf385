#!/usr/bin/env bash
# Check that patches/ applies to the pristine kernel the two ways people
# apply a series: 'git am' (maintainers, b4) and 'quilt push -a' (RT
# integrators, distributions), both without fuzz. Works on a copy of only
# the files the series touches, so it takes a second.
#
# usage: [KERNEL=7.3] scripts/apply-check.sh git-am|quilt
# output: status 0 when the whole series applied

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

case "$#:${1:-}" in
1:git-am | 1:quilt) ;;
*) echo "usage: [KERNEL=7.3|6.12] $0 git-am|quilt" >&2; exit 2 ;;
esac
MODE=$1
ARCH=${ARCH:-x86_64}
load_params
LOG_TAG=$MODE
SRC=$(src_dir patched)
[ -d "$SRC/.git" ] || die "no tree at $SRC (run scripts/tree.sh patched)"
git -C "$SRC" rev-parse -q --verify pristine >/dev/null || die "no pristine tag in $SRC"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the files the series touches which exist before it (a patch may change
# a file an earlier one created)
mapfile -t files < <(series_patches | while read -r p; do
	grep '^--- a/' "$TOP/$p" | cut -c7-
done | sort -u | while read -r f; do
	git -C "$SRC" cat-file -e "pristine:$f" 2>/dev/null && echo "$f"
done)
mkdir -p "$tmp/tree"
git -C "$SRC" archive pristine -- "${files[@]}" | tar -x -C "$tmp/tree"

n=0
case $MODE in
git-am)
	git -C "$tmp/tree" init -q
	git -C "$tmp/tree" add -A
	git -C "$tmp/tree" -c user.name=check -c user.email=check@localhost commit -q -m base
	while read -r p; do
		if ! git -C "$tmp/tree" -c user.name=check -c user.email=check@localhost \
			am -q --keep-cr "$TOP/$p" >"$tmp/out" 2>&1; then
			sed "s|^|  |" "$tmp/out" >&2
			die "git am: $p does not apply"
		fi
		n=$((n + 1))
	done < <(series_patches)
	;;
quilt)
	command -v quilt >/dev/null || die "quilt is not installed (run scripts/setup.sh)"
	if ! (cd "$tmp/tree" && QUILT_PATCHES=$TOP/patches QUILT_SERIES=$TOP/series \
		QUILT_PC=.pc quilt push -a -q --fuzz=0) >"$tmp/out" 2>&1; then
		sed "s|^|  |" "$tmp/out" >&2
		die "quilt push -a failed"
	fi
	n=$(grep -c '^Applying patch' "$tmp/out" || true)
	[ "$n" -eq "$(series_patches | wc -l)" ] || die "quilt applied $n patches, the series has $(series_patches | wc -l)"
	;;
esac
log "$n patches applied without fuzz"
