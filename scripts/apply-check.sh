#!/usr/bin/env bash
# Check that $KERNEL's series applies to the pristine kernel the two ways
# people apply a series: 'git am' (maintainers, b4) and 'quilt push -a' (RT
# integrators, distributions), both without fuzz. Works on a copy of only
# the files the series touches, so it takes a second.
#
# 'drift' does the same against the newest linux-source package of the line
# in Debian's archive, which may be newer than the one the pipeline builds,
# and reports every hunk which does not apply at its line: offset, fuzz or
# failure, so a stable update which moves or breaks the context is seen
# before it is rebased on (docs/6.12.md: "Drift and rebasing").
#
# usage: [KERNEL=7.3|6.12] scripts/apply-check.sh git-am|quilt|drift
# output: status 0 when the whole series applied without fuzz

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

case "$#:${1:-}" in
1:git-am | 1:quilt | 1:drift) ;;
*) echo "usage: [KERNEL=7.3|6.12] $0 git-am|quilt|drift" >&2; exit 2 ;;
esac
MODE=$1
ARCH=${ARCH:-x86_64}
load_params
LOG_TAG=$MODE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# drift: apply each patch with patch(1), which reports where each hunk
# went, to the newest source; fuzz is allowed here only to be reported.
drift() {
	local newest deb tarball p out n=0 bad=0 line
	newest=$("$TOP/scripts/kernel-src.sh" --newest | tail -n 1)
	deb=${newest%% *}
	tarball=${newest#* }
	log "against $deb"
	mapfile -t files < <(series_patches | while read -r p; do
		grep '^--- a/' "$TOP/$p" | cut -c7-
	done | sort -u | sed "s|^|$KSRC_PKG/|")
	mkdir -p "$tmp/tree"
	tar -xJf "$tarball" -C "$tmp/tree" --strip-components=1 "${files[@]}" 2>/dev/null || true
	while read -r p; do
		out=$(cd "$tmp/tree" && patch -p1 -F3 -N --no-backup-if-mismatch <"$TOP/$p" 2>&1) || bad=1
		n=$((n + 1))
		while IFS= read -r line; do
			case $line in
			"patching file "*) file=${line#patching file } ;;
			*"with fuzz"* | *FAILED* | *offset*)
				echo "  ${p##*/}: $file: $line"
				case $line in *"with fuzz"* | *FAILED*) bad=1 ;; esac
				;;
			*"can't find file"* | *"Reversed"*)
				echo "  ${p##*/}: $line"
				bad=1
				;;
			esac
		done <<<"$out"
	done < <(series_patches)
	[ "$bad" = 0 ] || die "$n patches: hunks above need fuzz or fail on $deb; rebase (docs/6.12.md: Drift and rebasing)"
	log "$n patches apply to $deb without fuzz (offsets, if any, listed above)"
}
if [ "$MODE" = drift ]; then
	drift
	exit 0
fi

SRC=$(src_dir patched)
[ -d "$SRC/.git" ] || die "no tree at $SRC (run scripts/tree.sh patched)"
git -C "$SRC" rev-parse -q --verify pristine >/dev/null || die "no pristine tag in $SRC"

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
	if ! (cd "$tmp/tree" && QUILT_PATCHES=$TOP/$PATCHES QUILT_SERIES=$TOP/$SERIES \
		QUILT_PC=.pc quilt push -a -q --fuzz=0) >"$tmp/out" 2>&1; then
		sed "s|^|  |" "$tmp/out" >&2
		die "quilt push -a failed"
	fi
	n=$(grep -c '^Applying patch' "$tmp/out" || true)
	[ "$n" -eq "$(series_patches | wc -l)" ] || die "quilt applied $n patches, the series has $(series_patches | wc -l)"
	;;
esac
log "$n patches applied without fuzz"
