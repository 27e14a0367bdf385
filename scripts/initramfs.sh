#!/usr/bin/env bash
# Build the guest initramfs for ARCH: a base archive (busybox, rt-tests and
# their libraries, init) shared by every kernel of that arch, and a payload
# archive per kernel build (its modules and the softirq selftests compiled
# statically for ARCH from the kernel tree). The kernel accepts the two
# archives concatenated; qemu.sh appends the job as a third. The payload
# also carries the measuring module (module/, built by build.sh) and its
# control-file test.
#
# usage: ARCH=x86_64|arm64 KERNEL=7.3 [BASELINE=1] [BH_LOCK=1] [CFG=..] scripts/initramfs.sh
# output: build/initramfs/<arch>/base.cpio, <obj>/payload.cpio

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: ARCH=x86_64|arm64 KERNEL=7.3|6.12 [BASELINE=1] [BH_LOCK=1] $0" >&2; exit 2; }
load_params
SRC=$(src_dir "$VARIANT")
OBJ=$(obj_dir)
ROOT=$CACHE/userland/$DEB_ARCH
OUT=$BUILD/initramfs/$ARCH
LOG_TAG=$ARCH
GEN=$BUILD/tools/gen_init_cpio

[ -x "$ROOT/bin/busybox" ] || die "no $DEB_ARCH userland in $ROOT (run scripts/setup.sh)"
[ -d "$OBJ/modules" ] || die "no build in $OBJ (run scripts/build.sh)"

gen_tool() {
	[ -x "$GEN" ] && return 0
	mkdir -p "$(dirname "$GEN")"
	gcc -O2 -o "$GEN" "$SRC/usr/gen_init_cpio.c"
}

# Shared libraries (DT_NEEDED, recursively) of the given ELF files, as
# paths inside $ROOT.
needed_libs() {
	local todo=("$@") seen=" " f lib p
	while [ ${#todo[@]} -gt 0 ]; do
		f=${todo[0]}
		todo=("${todo[@]:1}")
		for lib in $(readelf -d "$ROOT/$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			for p in lib/$GNU_TRIPLET usr/lib/$GNU_TRIPLET; do
				if [ -e "$ROOT/$p/$lib" ]; then
					case $seen in *" $p/$lib "*) ;; *)
						seen="$seen$p/$lib "
						echo "$p/$lib"
						todo+=("$p/$lib")
						;;
					esac
					break
				fi
			done
		done
	done
	# the program interpreter
	readelf -l "$ROOT/$1" | sed -n 's/.*Requesting program interpreter: \/\(.*\)\]/\1/p'
}

# gen_init_cpio entry for a file inside $ROOT. Symlinks are followed
# inside $ROOT: an absolute link target means $ROOT/<target>, not the host's.
root_file() {
	local f=$1 path=$1 t n=0
	while [ -L "$ROOT/$path" ] && [ $n -lt 16 ]; do
		t=$(readlink "$ROOT/$path")
		case $t in
		/*) path=${t#/} ;;
		*) path=$(dirname "$path")/$t ;;
		esac
		n=$((n + 1))
	done
	[ -f "$ROOT/$path" ] || die "$f: $path is not in the $DEB_ARCH userland"
	echo "file /$f $ROOT/$path 0755 0 0"
}

dirs_of() {
	local d
	for d in "$@"; do
		while [ "$d" != . ] && [ "$d" != / ]; do
			echo "$d"
			d=$(dirname "$d")
		done
	done | sort -u | awk '{print "dir /" $1 " 0755 0 0"}'
}

# The project's own guest programs (bench/), static for ARCH.
bench_tools() {
	mkdir -p "$OUT"
	"$TARGET_CC" -O2 -Wall -Wextra -Werror -static -pthread -o "$OUT/rtnetloop" \
		"$TOP/bench/rtnetloop.c" || die "building bench/rtnetloop.c for $ARCH failed"
}

base() {
	local list=$OUT/base.list progs=(usr/bin/cyclictest usr/bin/hackbench usr/bin/stress-ng)
	local files stamp
	mapfile -t files < <(printf '%s\n' "${progs[@]}"; needed_libs "${progs[@]}" | sort -u)
	stamp=$( (cat "$TOP"/scripts/guest/* "$TOP"/bench/*.c; printf '%s\n' "${files[@]}"
		cat "$ROOT/.stamp") | sha256sum)
	[ -f "$OUT/base.cpio" ] && [ "$(cat "$OUT/base.stamp" 2>/dev/null)" = "$stamp" ] && return 0
	bench_tools
	{
		printf '%s\n' dev proc sys tmp root etc bin sbin usr/bin usr/sbin \
			sys/kernel/debug sys/kernel/tracing lib/modules "${files[@]%/*}" | sort -u |
			while read -r d; do dirs_of "$d"; done | sort -u
		echo "nod /dev/console 0600 0 0 c 5 1"
		echo "nod /dev/null 0666 0 0 c 1 3"
		echo "file /init $TOP/scripts/guest/init 0755 0 0"
		echo "file /bin/busybox $ROOT/bin/busybox 0755 0 0"
		echo "file /bin/ktap-run $TOP/scripts/guest/ktap-run 0755 0 0"
		echo "file /bin/smoke.sh $TOP/scripts/guest/smoke.sh 0755 0 0"
		echo "file /bin/bench.sh $TOP/scripts/guest/bench.sh 0755 0 0"
		echo "file /bin/soak.sh $TOP/scripts/guest/soak.sh 0755 0 0"
		echo "file /bin/rtnetloop $OUT/rtnetloop 0755 0 0"
		# for su: the soak runs a stressor unprivileged
		echo "file /etc/passwd $TOP/scripts/guest/passwd 0644 0 0"
		echo "file /etc/group $TOP/scripts/guest/group 0644 0 0"
		for f in "${files[@]}"; do
			root_file "$f"
		done
	} | awk '!seen[$0]++' >"$list"
	"$GEN" "$list" >"$OUT/base.cpio"
	echo "$stamp" >"$OUT/base.stamp"
	log "base initramfs: $(du -h "$OUT/base.cpio" | cut -f1)"
}

# rtla from this tree's tools/tracing/rtla, static (Debian's libtracefs and
# libtraceevent archives), for make run's timerlat phase: Debian's own rtla
# is 6.1's, without the auto-analysis. Built for the host's arch only (the
# -dev packages are the host's), once per kernel version: the series does
# not touch tools/. Prints the binary, or nothing.
rtla_tool() {
	local dest
	dest=$BUILD/tools/rtla-$(kernel_version)
	[ "$CFG" = perf ] && [ "$ARCH" = "$(host_arch)" ] || return 0
	[ -d "$SRC/tools/tracing/rtla" ] || return 0
	if [ ! -x "$dest/rtla-static" ]; then
		mkdir -p "$dest"
		make -s -C "$SRC/tools/tracing/rtla" O="$dest" BUILD_BPF_SKEL=0 static \
			>"$dest/build.log" 2>&1 || die "building rtla failed, see $dest/build.log"
	fi
	echo "$dest/rtla-static"
}

# The softirq kselftests of this tree, built static for ARCH.
selftests() {
	local st=$SRC/tools/testing/selftests/softirq dest=$OBJ/selftests
	rm -rf "$dest"
	mkdir -p "$dest"
	[ -d "$st" ] || return 0
	make -s -C "$SRC/tools/testing/selftests" TARGETS=softirq ARCH="$KARCH" \
		CROSS_COMPILE="$CROSS_COMPILE" CC="$TARGET_CC" LDFLAGS=-static \
		O="$OBJ/selftests-build" KHDR_INCLUDES="-isystem $OBJ/usr/include" \
		INSTALL_PATH="$dest" install >"$OBJ/selftests.log" 2>&1 ||
		die "building the selftests failed, see $OBJ/selftests.log"
}

# The measuring module's control-file test (module/test_softirq_ctl.c), a
# project test, with the kselftest harness of this tree.
ctl_test() {
	"$TARGET_CC" -O2 -Wall -Werror -static -pthread \
		-I "$SRC/tools/testing/selftests" -isystem "$OBJ/usr/include" \
		-o "$OBJ/test_softirq_ctl" "$TOP/module/test_softirq_ctl.c" ||
		die "building module/test_softirq_ctl.c for $ARCH failed"
}

payload() {
	local list=$OBJ/payload.list rtla
	make -s -C "$SRC" O="$OBJ" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" \
		headers_install INSTALL_HDR_PATH="$OBJ/usr" >/dev/null 2>&1 || true
	selftests
	ctl_test
	rtla=$(rtla_tool) || exit 1
	{
		echo "dir /lib 0755 0 0"
		echo "dir /lib/modules 0755 0 0"
		(cd "$OBJ/modules" && find lib -mindepth 2 -type d) | awk '{print "dir /" $1 " 0755 0 0"}'
		(cd "$OBJ/modules" && find lib -type f -name '*.ko') |
			awk -v o="$OBJ/modules" '{print "file /" $1 " " o "/" $1 " 0644 0 0"}'
		echo "dir /selftests 0755 0 0"
		(cd "$OBJ/selftests" && find . -mindepth 1 -type d | sed 's|^\./||') |
			awk '{print "dir /selftests/" $1 " 0755 0 0"}'
		(cd "$OBJ/selftests" && find . -type f | sed 's|^\./||') |
			awk -v o="$OBJ/selftests" '{print "file /selftests/" $1 " " o "/" $1 " 0755 0 0"}'
		echo "file /bin/test_softirq_ctl $OBJ/test_softirq_ctl 0755 0 0"
		[ -z "$rtla" ] || echo "file /bin/rtla $rtla 0755 0 0"
	} >"$list"
	"$GEN" "$list" >"$OBJ/payload.cpio"
	log "payload initramfs: $(du -h "$OBJ/payload.cpio" | cut -f1) ($(grep -c '\.ko ' "$list" || true) modules, $(find "$OBJ/selftests" -type f | wc -l) selftest files)"
}

gen_tool
base
payload
