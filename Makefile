# softirq-rt: per-task softirq processing for PREEMPT_RT.
#
#   make run      benchmark baseline vs patched RT kernels in QEMU (README command 1)
#   make cycle    the BH fast path, baseline vs patched: guest instructions, TCG ns, refscale
#   make holders  who made the RT task wait next to a real raiser (traced), baseline vs patched
#   make check    apply, checkpatch, build x86_64 + arm64, boot, run the tests
#   make soak     stress + hotplug + stress-ng + torture on the patched kernel
#   make regress  the kernel's own net selftests + torture, baseline vs patched
#   make lint     W=1 + sparse on the touched files, htmldocs, checkpatch
#   make mail     format the series for the list into build/outgoing/
#   make apply-check  the series against the newest Debian source of its line
#
# Variables: ARCH=x86_64|arm64 KERNEL=7.3|6.12 BASELINE=1 BH_LOCK=1 NORT=1 (make check) ACCEL=auto|kvm|tcg
#            RUNS=n (make run, cycle, holders) RAISERS= IRQ_PRIO=n STACKS=1 (make holders) TRACE=1 (make cycle) QUICK=1 ICOUNT=off|auto|0..10 (make run)  DURATION=s KASAN=0|1 (make soak)
#            SET=ci|full|all TESTS='net/x.sh:secs ...' ONLY=baseline|patched (make regress)
# Everything is done by the scripts in scripts/, one stage each.

SHELL := /bin/bash
S := scripts

export ARCH KERNEL BASELINE BH_LOCK CFG RUNS RAISERS IRQ_PRIO STACKS QUICK DURATION KASAN ACCEL ICOUNT SET TESTS ONLY TRACE

.PHONY: run cycle holders check soak regress setup kernel-src tree export build initramfs bisect-check apply-check lint lint-scripts mail clean help

help:
	@sed -n '3,16p' Makefile | sed 's/^# \{0,1\}//'

run: setup kernel-src
	$(S)/run.sh

cycle: setup kernel-src
	$(S)/cycle.sh

holders: setup kernel-src
	$(S)/holders.sh

check:
	$(S)/check.sh

soak: setup kernel-src
	$(S)/soak.sh

regress: setup kernel-src
	$(S)/regress.sh

setup:
	$(S)/setup.sh

kernel-src: setup
	$(S)/kernel-src.sh

# The edit tree build/<version>/linux: commit there, then 'make export'.
tree: kernel-src
	$(S)/tree.sh linux

export:
	$(S)/export.sh

build: kernel-src
	$(S)/tree.sh $(if $(filter 1,$(BASELINE)),baseline,patched)
	$(S)/build.sh

initramfs: build
	$(S)/initramfs.sh

# Offset, fuzz or failure per hunk against the newest linux-source package
# of KERNEL's line in Debian's archive (downloaded if newer than the cache).
apply-check: setup
	$(S)/apply-check.sh drift

# Build x86_64 after each patch, RT and !RT; report the first that breaks.
bisect-check: kernel-src
	$(S)/bisect-check.sh

# W=1 and sparse on what the series touches (x86_64, arm64), its
# documentation through Sphinx, checkpatch --strict on every patch.
lint: kernel-src
	$(S)/lint.sh

lint-scripts:
	shellcheck -x $(S)/*.sh $(S)/guest/*.sh $(S)/guest/init $(S)/guest/ktap-run .ci/run
	python3 $(S)/ktap.py --selftest
	python3 $(S)/notes.py --selftest
	python3 $(S)/regress.py --selftest
	python3 $(S)/cycle_trace.py --selftest

# git format-patch --cover-letter output for git send-email or b4; sends nothing.
mail: kernel-src
	$(S)/mail.sh

clean:
	rm -rf build
