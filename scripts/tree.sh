#!/usr/bin/env bash
# Extract a pristine kernel tree and apply series/patches/ with zero fuzz, as a
# git repository with one commit per patch.
#
# usage: KERNEL=7.3 scripts/tree.sh [linux|patched|baseline]
#   linux    the developer's edit tree (default); never overwritten unless FORCE=1
#   patched  the tree make check builds; re-created whenever patches/ change
#   baseline the pristine source plus the test-only patches of the series
#            (so the tests can show what the unpatched kernel does)
# output: build/<version>/<name>

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: KERNEL=7.3|6.12 [FORCE=1] $0 [linux|patched|baseline]" >&2
	exit 2
}
[ $# -le 1 ] || usage
NAME=${1:-linux}
check_value tree "$NAME" "linux patched baseline"
load_params
KVER=$(kernel_version)
DIR=$(src_dir "$NAME")
LOG_TAG="$NAME $KVER"

extract() {
	local tmp=$DIR.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	log "extracting $(basename "$(kernel_tarball)")"
	tar -xJf "$(kernel_tarball)" -C "$tmp" --strip-components=1
	mv "$tmp" "$DIR"
}

git_tree() {
	git -C "$DIR" -c user.name="softirq-rt" -c user.email="softirq-rt@localhost" "$@"
}

# Debian's linux-source ships a .gitignore which ignores everything at the
# top level (its packaging repository layout). Files a patch adds would be
# ignored by git in the edit tree, so restore upstream's rules.
fix_gitignore() {
	sed -i '/^# Debian packaging: ignore everything/,/^!\/debian\/$/d' "$DIR/.gitignore"
}

make_git() {
	log "recording the pristine tree in git"
	fix_gitignore
	git_tree init -q
	git_tree config core.autocrlf false
	git_tree config gc.auto 0
	# notes (the text below a patch's '---') follow commits through
	# rebase and amend
	git_tree config notes.rewriteRef refs/notes/commits
	git_tree add -A -f .
	git_tree commit -q -m "Linux $KVER ($(cat "$CACHE/dl/$KSRC_PKG.deb-name" 2>/dev/null || echo "$KSRC_PKG"))"
	git_tree tag pristine
}

# Apply the patches ($1: all or tests) with git am, which never applies
# with fuzz: a hunk whose context does not match exactly fails the patch.
apply_series() {
	local p out notes n=0
	while read -r p; do
		[ "$1" = tests ] && ! is_test_patch "$TOP/$p" && continue
		[ -f "$TOP/$p" ] || die "series names $p, which does not exist"
		if ! out=$(git_tree am -q --keep-cr "$TOP/$p" 2>&1); then
			git_tree am --abort >/dev/null 2>&1 || true
			echo "$out" | grep -E '^(error|fatal):' | sed "s|^|[$STAGE] $p: |" >&2
			die "$p does not apply to $KVER (hunk above)"
		fi
		# the patch's notes below '---', which git am drops
		notes=$(python3 "$TOP/scripts/notes.py" get "$TOP/$p")
		[ -z "$notes" ] || git_tree notes add -f -m "$notes" HEAD
		n=$((n + 1))
	done < <(series_patches)
	log "applied $n patches ($1)"
}

# A series change re-applies every patch, which gives every file the series
# touches a new mtime and the builds a near full recompile (sched.h). Keep
# the mtime of each file whose content the new series leaves as it was.
save_mtimes() {
	git_tree diff --name-only pristine HEAD 2>/dev/null | while read -r f; do
		[ -f "$DIR/$f" ] &&
			echo "$(git_tree hash-object "$f") $(stat -c %Y "$DIR/$f") $f"
	done >"$DIR/.git/softirq-rt-mtimes" || true
}

restore_mtimes() {
	local hash mtime f n=0
	[ -f "$DIR/.git/softirq-rt-mtimes" ] || return 0
	while read -r hash mtime f; do
		if [ -f "$DIR/$f" ] && [ "$(git_tree hash-object "$f")" = "$hash" ]; then
			touch -d "@$mtime" "$DIR/$f"
			n=$((n + 1))
		fi
	done <"$DIR/.git/softirq-rt-mtimes"
	rm -f "$DIR/.git/softirq-rt-mtimes"
	log "kept the mtime of $n unchanged files"
}

reset_tree() {
	git_tree am --abort >/dev/null 2>&1 || true
	git_tree reset -q --hard pristine
	git_tree clean -q -fdx
}

mkdir -p "$(dirname "$DIR")"
case $NAME in
baseline | patched)
	set=all
	[ "$NAME" = baseline ] && set=tests
	stamp=$(series_hash)-$set
	if [ -d "$DIR/.git" ] && [ "$(cat "$DIR/.git/softirq-rt-series" 2>/dev/null)" = "$stamp" ]; then
		log "up to date with patches/ ($stamp)"
		exit 0
	fi
	if [ -d "$DIR/.git" ]; then
		save_mtimes
		reset_tree
	else
		[ -f "$DIR/Makefile" ] || { rm -rf "$DIR"; extract; }
		make_git
	fi
	rm -f "$DIR/.git/softirq-rt-series"
	apply_series $set
	restore_mtimes
	echo "$stamp" >"$DIR/.git/softirq-rt-series"
	log "ready: $DIR"
	;;
linux)
	if [ -d "$DIR/.git" ] && [ "${FORCE:-0}" != 1 ]; then
		log "exists: $DIR (FORCE=1 re-creates it from patches/, dropping its commits)"
		exit 0
	fi
	if [ -d "$DIR/.git" ]; then
		reset_tree
	else
		rm -rf "$DIR"
		extract
		make_git
	fi
	apply_series all
	log "ready: $DIR (edit, commit, then 'make export')"
	;;
esac
