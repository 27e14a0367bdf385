# softirq-rt: per-task softirq processing for PREEMPT_RT.
#
#   make run      boot the patched kernel in QEMU and measure (README command 1)
#   make check    apply, checkpatch, build x86_64 + arm64, boot, run the tests
#
# Variables: ARCH=x86_64|arm64 KERNEL=7.3|6.12 BASELINE=1 BH_LOCK=1
# Everything is done by the scripts in scripts/, one stage each.

SHELL := /bin/bash
S := scripts

export ARCH KERNEL BASELINE BH_LOCK CFG

.PHONY: run check setup kernel-src tree export build initramfs bisect-check lint-scripts clean help

help:
	@sed -n '3,8p' Makefile | sed 's/^# \{0,1\}//'

run: setup kernel-src
	$(S)/run.sh

check:
	$(S)/check.sh

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

# Build x86_64 after each patch, RT and !RT; report the first that breaks.
bisect-check: kernel-src
	$(S)/bisect-check.sh

lint-scripts:
	shellcheck -x $(S)/*.sh $(S)/guest/* .ci/run
	python3 $(S)/ktap.py --selftest

clean:
	rm -rf build
