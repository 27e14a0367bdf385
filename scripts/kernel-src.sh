#!/usr/bin/env bash
# Fetch the kernel source from Debian's archive as a linux-source-X package,
# without touching the machine's apt configuration: a private sources list and
# state directory are used for this one download, signed by the Debian archive
# keyring. The archive's address comes from the machine's own apt setup, so a
# local mirror keeps working.
#
# usage: KERNEL=7.3|6.12 scripts/kernel-src.sh [--newest]
# output: $CACHE/dl/<pkg>.tar.xz and <pkg>.version (e.g. 7.3.4); with
#   --newest (apply-check drift): "<deb name> <tarball>" of the newest
#   package in the archive, downloaded to $CACHE/dl/newest/ if not cached

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: KERNEL=7.3|6.12 $0 [--newest]" >&2
	exit 2
}
[ $# -eq 0 ] || [ "$*" = --newest ] || usage
load_params

DL=$CACHE/dl
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

# The machine's archive base for a repository named $1 ('debian' or
# 'debian-security'), as its apt configuration has it.
archive_uri() {
	# shellcheck disable=SC2016 # an apt format string, not a shell expansion
	apt-get indextargets --format '$(REPO_URI)' 2>/dev/null |
		sed 's,/*$,,' | grep -E "/$1\$" | head -n 1
}

# The private apt setup for one download: opts[] for apt-get, apt-cache.
apt_setup() {
	local uri
	uri=$(archive_uri "$KSRC_REPO")
	[ -n "$uri" ] || die "no '$KSRC_REPO' archive in this machine's apt sources (apt-get indextargets)"
	[ -r "$KEYRING" ] || die "$KEYRING missing (install debian-archive-keyring)"

	apt_dir=$CACHE/apt-$KERNEL
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$DL"
	echo "deb [signed-by=$KEYRING] $uri $KSRC_SUITE main" >"$apt_dir/sources.list"
	opts=(
		-o "Dir::Etc::SourceList=$apt_dir/sources.list"
		-o "Dir::Etc::SourceParts=/dev/null"
		-o "Dir::State::Lists=$apt_dir/lists"
		-o "Dir::State::Status=/dev/null"
		-o "Dir::Cache=$apt_dir"
		-o "APT::Sandbox::User=root"
		-o "Debug::NoLocking=1"
	)
	log "updating the package index of $uri $KSRC_SUITE"
	apt-get -q "${opts[@]}" update >"$apt_dir/update.log" 2>&1 ||
		die "apt-get update failed, see $apt_dir/update.log"
}

# Download $KSRC_PKG and move its source tarball to $1/$KSRC_PKG.tar.xz.
download_to() {
	local deb
	log "downloading $KSRC_PKG"
	(cd "$apt_dir/archives" && rm -f ./*.deb &&
		apt-get -q "${opts[@]}" download "$KSRC_PKG" >"$apt_dir/download.log" 2>&1) ||
		die "apt-get download $KSRC_PKG failed, see $apt_dir/download.log"
	deb=$(ls "$apt_dir"/archives/"$KSRC_PKG"_*.deb)
	log "extracting $(basename "$deb")"
	rm -rf "$apt_dir/x"
	dpkg-deb -x "$deb" "$apt_dir/x"
	mkdir -p "$1"
	mv "$apt_dir/x/usr/src/$KSRC_PKG.tar.xz" "$1/$KSRC_PKG.tar.xz.tmp"
	rm -rf "$apt_dir/x" "$deb"
	basename "$deb" >"$1/$KSRC_PKG.deb-name"
	mv "$1/$KSRC_PKG.tar.xz.tmp" "$1/$KSRC_PKG.tar.xz"
}

fetch() {
	apt_setup
	download_to "$DL"
}

# --newest: the newest $KSRC_PKG in the archive, which may be newer than
# the cached one the pipeline builds. Prints "<deb name> <tarball>"; the
# tarball is the cached one when it is the newest, else a download kept
# apart in $DL/newest/.
newest() {
	local v cached
	apt_setup >&2
	v=$(apt-cache "${opts[@]}" policy "$KSRC_PKG" | sed -n 's/^ *Candidate: //p')
	case $v in "" | "(none)") die "$KSRC_PKG is not in $KSRC_SUITE" ;; esac
	cached=$(cat "$DL/$KSRC_PKG.deb-name" 2>/dev/null || true)
	if [ "$cached" = "${KSRC_PKG}_${v}_all.deb" ] && [ -s "$DL/$KSRC_PKG.tar.xz" ]; then
		echo "$cached $DL/$KSRC_PKG.tar.xz"
		return
	fi
	if [ "$(cat "$DL/newest/$KSRC_PKG.deb-name" 2>/dev/null)" != "${KSRC_PKG}_${v}_all.deb" ]; then
		download_to "$DL/newest" >&2
	fi
	echo "$(cat "$DL/newest/$KSRC_PKG.deb-name") $DL/newest/$KSRC_PKG.tar.xz"
}

record_version() {
	local mk v p s
	mk=$(tar -xJOf "$DL/$KSRC_PKG.tar.xz" "$KSRC_PKG/Makefile")
	v=$(sed -n 's/^VERSION = //p' <<<"$mk")
	p=$(sed -n 's/^PATCHLEVEL = //p' <<<"$mk")
	s=$(sed -n 's/^SUBLEVEL = //p' <<<"$mk")
	echo "$v.$p.$s" >"$DL/$KSRC_PKG.version"
}

if [ "${1:-}" = --newest ]; then
	newest
	exit 0
fi
if [ -s "$DL/$KSRC_PKG.tar.xz" ] && [ -s "$DL/$KSRC_PKG.version" ]; then
	log "cached: $(cat "$DL/$KSRC_PKG.deb-name" 2>/dev/null || echo "$KSRC_PKG") ($(cat "$DL/$KSRC_PKG.version"))"
	exit 0
fi
[ -s "$DL/$KSRC_PKG.tar.xz" ] || fetch
record_version
log "$KSRC_PKG is upstream $(cat "$DL/$KSRC_PKG.version"): $DL/$KSRC_PKG.tar.xz"
