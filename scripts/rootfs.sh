#!/usr/bin/env bash
# A Debian userland for guests which run the kernel's own tests: iproute2,
# ethtool, python3, socat, jq, nftables and what they need, unpacked from
# Debian's packages for ARCH and their dependency closure (never installed
# on the host, no maintainer scripts run; the few things those scripts
# would do are done here). Packed as an initramfs archive whose files live
# under /rootfs: the guest's busybox init runs a job inside it with
# chroot when the job asks for it (ROOTFS=1 scripts/qemu.sh).
#
# usage: ARCH=x86_64|arm64 scripts/rootfs.sh
# output: $CACHE/rootfs/<deb-arch>/ (the tree), build/initramfs/<arch>/rootfs.cpio

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: ARCH=x86_64|arm64 $0" >&2; exit 2; }
load_params
LOG_TAG=$ARCH
# What the net selftests and their helpers call, beyond coreutils.
ROOTFS_PKGS=(base-files base-passwd bash dash coreutils util-linux findutils
	grep sed gawk diffutils procps kmod iproute2 ethtool iputils-ping
	netcat-openbsd socat jq nftables python3 bc tcpdump iptables iperf3)
DEST=$CACHE/rootfs/$DEB_ARCH
OUT=$BUILD/initramfs/$ARCH

# ROOTFS_PKGS for Debian arch $1 with their dependency closure. apt-cache
# names a package without a suffix when it is of arch "all", or when a
# Multi-Arch: foreign dependency was resolved to the host's arch (libc6,
# perl-base): take the $1 build of those where there is one.
closure() {
	local p
	apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
		--no-breaks --no-replaces --no-enhances "${ROOTFS_PKGS[@]/%/:$1}" 2>/dev/null |
		grep -v '^[ <]' | awk -F: -v a="$1" 'NF == 1 || $2 == a' | sed "s/:$1\$//" | sort -u |
		while read -r p; do
			if [ "$(apt-cache show "$p:$1" 2>/dev/null | grep -c "^Architecture: $1\$")" != 0 ]; then
				echo "$p:$1"
			else
				echo "$p"
			fi
		done
}

unpack() {
	local stamp pkgs=()
	stamp=$(echo "${ROOTFS_PKGS[*]} v8" | sha256sum | cut -c1-16)
	[ "$(cat "$DEST/.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	mapfile -t pkgs < <(closure "$DEB_ARCH")
	[ ${#pkgs[@]} -gt ${#ROOTFS_PKGS[@]} ] ||
		die "apt-cache found no dependencies for $DEB_ARCH (run scripts/setup.sh)"
	log "downloading ${#pkgs[@]} packages"
	unpack_debs "$DEST" "$CACHE/rootfs/$DEB_ARCH.log" "${pkgs[@]}"
	fixup
	echo "$stamp" >"$DEST/.stamp"
	log "unpacked: $(du -sh "$DEST" | cut -f1)"
}

# What maintainer scripts would have done: users and groups, the
# alternatives the tests call by their generic names, /bin/sh.
fixup() {
	local d=$DEST
	cp "$d/usr/share/base-passwd/passwd.master" "$d/etc/passwd"
	cp "$d/usr/share/base-passwd/group.master" "$d/etc/group"
	# the system user tcpdump's postinst adds: Debian's tcpdump drops its
	# privileges to it, and captures nothing without it
	echo "tcpdump:x:100:101::/nonexistent:/usr/sbin/nologin" >>"$d/etc/passwd"
	echo "tcpdump:x:101:" >>"$d/etc/group"
	ln -sfn dash "$d/bin/sh"
	ln -sfn gawk "$d/usr/bin/awk"
	ln -sfn nc.openbsd "$d/bin/nc"
	# Debian's default iptables is the nftables one
	local t
	for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
		ln -sfn xtables-nft-multi "$d/usr/sbin/$t"
	done
	# no udev daemon runs in the guest: nothing to wait for
	# shellcheck disable=SC2016 # the stub's own $1
	printf '#!/bin/sh\n[ "$1" = settle ] && exit 0\necho "udevadm: no udev in this guest" >&2\nexit 1\n' \
		>"$d/usr/bin/udevadm"
	chmod 755 "$d/usr/bin/udevadm"
	# as base-files' postinst leaves them: ip netns keeps its names in
	# /var/run/netns, which tests open by that path
	rm -rf "$d/var/run" "$d/var/lock"
	ln -sfn /run "$d/var/run"
	ln -sfn /run/lock "$d/var/lock"
	mkdir -p "$d/proc" "$d/sys" "$d/dev" "$d/tmp" "$d/run" "$d/lib/modules" "$d/selftests"
	chmod 1777 "$d/tmp"
	# documentation, translations, iconv modules and perl (a dependency of
	# debconf's, which no test calls) are half of the tree
	rm -rf "$d/usr/share/doc" "$d/usr/share/man" "$d/usr/share/info" "$d/usr/share/locale" \
		"$d/usr/share/perl" "$d/usr/lib/$GNU_TRIPLET/perl" "$d/usr/lib/$GNU_TRIPLET/gconv"
}

# gen_init_cpio entries for the tree, under /rootfs.
pack() {
	local list=$OUT/rootfs.list
	mkdir -p "$OUT"
	cpio_list "$DEST" /rootfs >"$list"
	"$(gen_init_cpio)" "$list" >"$OUT/rootfs.cpio"
	log "rootfs initramfs: $(du -h "$OUT/rootfs.cpio" | cut -f1)"
}

unpack
[ "$OUT/rootfs.cpio" -nt "$DEST/.stamp" ] || pack
