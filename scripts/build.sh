#!/usr/bin/env bash
# Build a kernel: Kconfig fragments from configs/ merged onto allnoconfig,
# compiled through ccache into one object directory per
# (version, arch, variant, config).
#
# usage: ARCH=x86_64|arm64 KERNEL=7.3 [BASELINE=1] [BH_LOCK=1] [CFG=debug|perf|kasan|regress|nort] scripts/build.sh
# output: build/<version>/obj/<name>/{<image>,modules/}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: ARCH=x86_64|arm64 KERNEL=7.3|6.12 [BASELINE=1] [BH_LOCK=1] [CFG=debug|perf|kasan|regress|nort] $0" >&2; exit 2; }
load_params
KVER=$(kernel_version)
SRC=$(src_dir "$VARIANT")
OBJ=$(obj_dir)
LOG_TAG="$ARCH $KVER $VARIANT"
[ "$BH_LOCK" = 1 ] && LOG_TAG="$LOG_TAG bh-lock"
[ -f "$SRC/Makefile" ] || die "no source tree at $SRC (run scripts/tree.sh $VARIANT)"

fragments() {
	echo "$TOP/configs/rt.config"
	echo "$TOP/configs/$ARCH.config"
	[ "$CFG" = perf ] || echo "$TOP/configs/debug.config"
	[ "$CFG" != perf ] || echo "$TOP/configs/perf.config"
	[ "$CFG" = kasan ] && echo "$TOP/configs/kasan.config"
	# make regress: KASAN where TCG affords it, and what the net tests need
	[ "$CFG" = regress ] && [ "$ARCH" = x86_64 ] && echo "$TOP/configs/kasan.config"
	[ "$CFG" = regress ] && echo "$TOP/configs/net.config"
	# make check's 7.3 x86_64 kernel with the BH lock off too: CI runs
	# make regress's CI subset on it (scripts/check.sh). Not the BH-lock
	# one: no test of make check needs it there (arm64 runs them all
	# without it), and since no object which includes interrupt.h is
	# shared between the two through ccache, it cost a cold CI run a
	# third more objects for nothing.
	[ "$CFG" = debug ] && [ "$ARCH" = x86_64 ] && [ "$KERNEL" = 7.3 ] &&
		[ "$BH_LOCK" = 0 ] && echo "$TOP/configs/net.config"
	[ "$BH_LOCK" = 1 ] && [ "${BH_LOCK_BUILTIN:-0}" = 0 ] &&
		echo "$TOP/configs/bh-lock.config"
	# make check NORT=1: the same kernel without PREEMPT_RT
	[ "$CFG" = nort ] && echo "$TOP/configs/nort-check.config"
	return 0
}

kbuild_env
MAKEARGS=(-C "$SRC" O="$OBJ" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" LOCALVERSION=
	CC="ccache ${CROSS_COMPILE}gcc" HOSTCC="ccache gcc" -j"$(nproc)")

configure() {
	local stamp frags
	mapfile -t frags < <(fragments)
	# the fragments, and the tree's Kconfig files, which the series changes
	stamp=$( (cat "${frags[@]}"; git -C "$SRC" rev-parse HEAD 2>/dev/null || true) |
		sha256sum | cut -c1-16)
	# ... and the .config it produced: anything that rewrote it since
	# (a make run against another state of the tree) means merging again
	if [ -f "$OBJ/.config" ] &&
		[ "$(cat "$OBJ/.softirq-rt-config" 2>/dev/null)" = "$stamp $(sha256sum <"$OBJ/.config" | cut -c1-16)" ]; then
		return 0
	fi
	mkdir -p "$OBJ"
	log "configuring: allnoconfig + $(fragments | xargs -n1 basename | tr '\n' ' ')"
	(cd "$SRC" && ARCH=$KARCH CROSS_COMPILE=$CROSS_COMPILE \
		scripts/kconfig/merge_config.sh -n -O "$OBJ" "${frags[@]}") >"$OBJ/config.log" 2>&1 ||
		die "kconfig failed, see $OBJ/config.log"
	check_config
	echo "$stamp $(sha256sum <"$OBJ/.config" | cut -c1-16)" >"$OBJ/.softirq-rt-config"
}

# Options the guests rely on: a missing one is a broken fragment, not
# something to discover at boot.
check_config() {
	local sym want=(SMP HOTPLUG_CPU BLK_DEV_INITRD MODULES NET INET
		DEBUG_FS TRACING KUNIT)
	if [ "$CFG" = nort ]; then
		want+=(PREEMPT)
		! grep -q '^CONFIG_PREEMPT_RT=y' "$OBJ/.config" ||
			die "CONFIG_PREEMPT_RT is set in CFG=nort (see $OBJ/config.log)"
	else
		want+=(PREEMPT_RT)
	fi
	[ "$CFG" = perf ] || want+=(PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_PREEMPT)
	[ "$CFG" = kasan ] && want+=(KASAN)
	[ "$CFG" = regress ] && want+=(VETH NET_NS IPV6 BPF_SYSCALL NETFILTER FILE_LOCKING)
	[ "$BH_LOCK" = 1 ] && [ "${BH_LOCK_BUILTIN:-0}" = 0 ] &&
		want+=(PREEMPT_RT_NEEDS_BH_LOCK)
	for sym in "${want[@]}"; do
		grep -q "^CONFIG_$sym=y" "$OBJ/.config" ||
			die "CONFIG_$sym is not set after merging the fragments (see $OBJ/config.log)"
	done
	if [ "$BH_LOCK" = 0 ] && grep -q '^CONFIG_PREEMPT_RT_NEEDS_BH_LOCK=y' "$OBJ/.config"; then
		die "CONFIG_PREEMPT_RT_NEEDS_BH_LOCK is set without BH_LOCK=1"
	fi
}

# How many objects a full build of this configuration compiles: the count
# of its last full build here, else the one measured for the project
# (configs/objects), else the last full build of any configuration (~).
object_total() {
	local f key n
	f=$CACHE/objects-$KVER-$CONFIG_NAME
	if [ -s "$f" ]; then
		cat "$f"
		return
	fi
	key=$ARCH-$CFG
	[ "$BH_LOCK" = 1 ] && key=$key-bhlock
	n=$(awk -v k="$KERNEL $key" '$1 " " $2 == k { print $3 }' "$TOP/configs/objects" 2>/dev/null)
	if [ -n "$n" ]; then
		echo "$n"
		return
	fi
	f=$(find "$CACHE" -maxdepth 1 -name 'objects-*' -printf '%T@ %p\n' 2>/dev/null |
		sort -rn | head -n 1 | cut -d' ' -f2-)
	if [ -n "$f" ]; then
		echo "~$(cat "$f")"
	else
		echo "?"
	fi
}

# Print a progress line every 250 compiled objects; the full log is kept.
compile() {
	local total n=0 start=$SECONDS
	total=$(object_total)
	log "compiling (log: $OBJ/build.log)"
	set +e
	make "${MAKEARGS[@]}" all 2>&1 | tee "$OBJ/build.log" |
		while IFS= read -r line; do
			case $line in
			"  CC "*)
				n=$((n + 1))
				[ $((n % 250)) -eq 0 ] && log "$n/$total objects"
				;;
			esac
		done
	local rc=${PIPESTATUS[0]}
	set -e
	if [ "$rc" -ne 0 ]; then
		grep -E 'error|Error' "$OBJ/build.log" | head -n 20 >&2
		die "build failed, see $OBJ/build.log"
	fi
	n=$(grep -c '^  CC ' "$OBJ/build.log" || true)
	# remember the size of a full build, for the next progress lines
	[ "$n" -gt "$(cat "$CACHE/objects-$KVER-$CONFIG_NAME" 2>/dev/null || echo 0)" ] &&
		echo "$n" >"$CACHE/objects-$KVER-$CONFIG_NAME"
	log "built in $((SECONDS - start)) s ($n objects compiled)"
}

install_modules() {
	rm -rf "$OBJ/modules"
	make "${MAKEARGS[@]}" INSTALL_MOD_PATH="$OBJ/modules" INSTALL_MOD_STRIP=1 \
		DEPMOD=true modules_install >"$OBJ/modules.log" 2>&1 ||
		die "modules_install failed, see $OBJ/modules.log"
}

# The project's measuring module (module/), built against this tree and
# installed beside its modules: built in a copy, so that the checkout keeps
# no build products and each object directory its own.
build_module() {
	local dir=$OBJ/module-build
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$TOP"/module/Makefile "$TOP"/module/test_softirq.c "$dir/"
	if ! make "${MAKEARGS[@]}" M="$dir" modules >"$OBJ/module.log" 2>&1 ||
		! make "${MAKEARGS[@]}" M="$dir" INSTALL_MOD_PATH="$OBJ/modules" \
			INSTALL_MOD_STRIP=1 INSTALL_MOD_DIR=extra DEPMOD=true \
			modules_install >>"$OBJ/module.log" 2>&1; then
		die "building module/ against $KVER failed, see $OBJ/module.log"
	fi
	log "module: $(find "$OBJ/modules" -name test_softirq.ko -printf '%P')"
}

configure
compile
install_modules
build_module
[ -f "$OBJ/$KIMAGE" ] || die "no $KIMAGE after the build"
log "image: $OBJ/$KIMAGE"
