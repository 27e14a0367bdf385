#!/usr/bin/env bash
# Install what the project needs on a Debian 12 machine: host packages, the
# arm64 multiarch package lists, and the guest userland (busybox, rt-tests
# and their libraries) for every guest arch, unpacked under the cache.
# Idempotent and quiet when everything is present.
#
# usage: scripts/setup.sh
# output: $CACHE/userland/<arch>/ (a root filesystem fragment per guest arch)

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: $0" >&2; exit 2; }
# fail on a bad ARCH=, KERNEL=, ... before installing anything
load_params

HOST_PKGS=(gcc make gdb flex bison bc libelf-dev libssl-dev cpio quilt ccache
	xz-utils rsync python3 python3-ply python3-git git kmod
	qemu-system-x86 qemu-system-arm ipxe-qemu
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross libc6-dev
	rt-tests busybox-static gnuplot-nox sparse stress-ng shellcheck
	python3-sphinx python3-sphinx-rtd-theme debian-archive-keyring
	libtracefs-dev libtraceevent-dev pkg-config)
# Guest userland, per Debian arch; unpacked, never installed on the host.
# stress-ng comes with the packages of its shared libraries (see
# guest_packages); initramfs.sh picks the files a program needs.
GUEST_PKGS=(busybox-static rt-tests libnuma1 libc6 libgcc-s1 stress-ng)
GUEST_ARCHES="amd64 arm64"

missing_host_pkgs() {
	local p
	for p in "${HOST_PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			echo "$p"
	done
}

apt_updated=0
apt_update() {
	[ $apt_updated = 1 ] && return 0
	log "apt-get update"
	as_root apt-get -q update >"$CACHE/apt-update.log" 2>&1 ||
		die "apt-get update failed, see $CACHE/apt-update.log"
	apt_updated=1
}

install_host() {
	local missing
	mapfile -t missing < <(missing_host_pkgs)
	[ ${#missing[@]} -eq 0 ] && return 0
	apt_update
	log "installing ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get -q -y install \
		--no-install-recommends "${missing[@]}" >"$CACHE/apt-install.log" 2>&1 ||
		die "apt-get install failed, see $CACHE/apt-install.log"
}

enable_arm64() {
	dpkg --print-foreign-architectures | grep -qx arm64 && return 0
	log "dpkg --add-architecture arm64"
	as_root dpkg --add-architecture arm64
	apt_updated=0
}

# GUEST_PKGS for Debian arch $1, with stress-ng's dependency closure (its
# shared libraries come from a dozen packages). apt-cache names packages of
# the native arch and of arch "all" without a suffix, and those take none.
guest_packages() {
	local darch=$1
	{
		printf '%s\n' "${GUEST_PKGS[@]/%/:$darch}"
		apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
			--no-breaks --no-replaces --no-enhances "stress-ng:$darch" 2>/dev/null |
			grep -v '^[ <]' | awk -F: -v a="$darch" 'NF == 1 || $2 == a'
	} | sort -u
}

# Unpack the guest packages of one Debian arch into $CACHE/userland/<arch>.
unpack_userland() {
	local darch=$1 dest=$CACHE/userland/$1 stamp pkgs=()
	stamp=$(echo "${GUEST_PKGS[*]} closure" | sha256sum | cut -c1-16)
	[ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	apt_update
	mapfile -t pkgs < <(guest_packages "$darch")
	[ ${#pkgs[@]} -gt ${#GUEST_PKGS[@]} ] || die "no dependencies found for the $darch guest packages"
	case " ${pkgs[*]} " in *" busybox-static:$darch "*) ;; *) die "apt-cache found no busybox-static:$darch" ;; esac
	log "downloading the $darch guest userland: ${GUEST_PKGS[*]}"
	unpack_debs "$dest" "$CACHE/userland/$darch.log" "${pkgs[@]}"
	echo "$stamp" >"$dest/.stamp"
}

mkdir -p "$CACHE"
enable_arm64
install_host
for a in $GUEST_ARCHES; do
	unpack_userland "$a"
done
