# mrxe top-level build.  Everything lands in build/:
#   build/rdma_mrxe.ko  build/libmrxe-rdmav34.so  build/mrxectl  build/unit-tests
# KDIR defaults to Debian 12's installed 6.1 headers (linux-headers-amd64).

KVER	?= $(shell ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
# Other lines (Documentation/testing.rst, "Kernel and rdma-core lines"):
# `make deps-6.12` unpacks Debian's 6.12 under $(MRXE_DEPS); then
# `make module KVER=6.12` (or the full release) builds build/KVER/rdma_mrxe.ko.
MRXE_DEPS ?= /var/cache/mrxe-deps
ifeq ($(KVER),6.12)
override KVER := $(shell cat $(MRXE_DEPS)/linux-6.12/KVER 2>/dev/null || echo 6.12-not-fetched)
endif
KDIR	?= $(firstword $(wildcard /lib/modules/$(KVER)/build) $(MRXE_DEPS)/linux-$(KVER)/lib/modules/$(KVER)/build)
# Every line builds in a tree of links, build/kbuild-KVER (lines never share
# objects, and no kbuild output lands in the source tree); the default (6.1)
# line's module is copied to build/rdma_mrxe.ko, another's to build/KVER/.
KDEFAULT := $(shell ls -d /lib/modules/6.1.*-amd64/build 2>/dev/null | sort -V | tail -n1 | cut -d/ -f4)
BUILD	:= $(CURDIR)/build
DESTDIR	?=
PREFIX	?= /usr
MULTIARCH ?= $(shell gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)

export KVER KDIR BUILD

.PHONY: all module provider tool unit deps check unit-check vm-check demo bench install clean checkpatch \
	deps-6.12 provider-56 check-all lines-build check-lines deb deb-dkms-check deb-stage fuzz soak sim

all: module provider tool

$(BUILD):
	@mkdir -p $@

module: | $(BUILD)
	@test -d "$(KDIR)" || { echo "KDIR=$(KDIR) not found: run 'make deps' (linux-headers-amd64) or 'make deps-6.12'" >&2; exit 1; }
	@mkdir -p $(BUILD)/kbuild-$(KVER)
	@# a removed source leaves a dangling link that Kbuild's wildcard would list
	@find $(BUILD)/kbuild-$(KVER) -xtype l -delete
	@find Kbuild drivers include -type f \( -name '*.[ch]' -o -name Kbuild \) | while read -r f; do \
		mkdir -p "$(BUILD)/kbuild-$(KVER)/$$(dirname "$$f")"; ln -sfn "$(CURDIR)/$$f" "$(BUILD)/kbuild-$(KVER)/$$f"; done
	$(MAKE) -C $(KDIR) M=$(BUILD)/kbuild-$(KVER) modules
ifeq ($(KVER),$(KDEFAULT))
	cp $(BUILD)/kbuild-$(KVER)/rdma_mrxe.ko $(BUILD)/rdma_mrxe.ko
else
	@mkdir -p $(BUILD)/$(KVER)
	cp $(BUILD)/kbuild-$(KVER)/rdma_mrxe.ko $(BUILD)/$(KVER)/rdma_mrxe.ko
endif

provider: | $(BUILD)
	@if [ -f userspace-provider/Makefile ]; then $(MAKE) -C userspace-provider; fi

tool: | $(BUILD)
	@if [ -f tools/mrxectl/Makefile ]; then $(MAKE) -C tools/mrxectl; fi
	$(MAKE) -C tools/mrxe-verify
	$(MAKE) -C tests/transport
	$(MAKE) -C tests/mcast

unit: | $(BUILD)
	$(MAKE) -C tests/unit
	$(MAKE) -C tools/mrxectl tests

deps:
	@bash tools/deps.sh

# Debian 13's line without upgrading Debian 12: kernel 6.12 (bookworm-backports)
# and rdma-core 56 (trixie), unpacked under $(MRXE_DEPS) (tools/deps-line.sh).
deps-6.12:
	@bash tools/deps.sh --line 6.12

# The provider built against rdma-core 56's libibverbs (make deps-6.12):
# build/rdma-core-56/libmrxe-rdmav34.so and provider-tests.
provider-56: | $(BUILD)
	$(MAKE) -C userspace-provider BUILD=$(BUILD)/rdma-core-56 IBVERBS_ROOT=$(MRXE_DEPS)/rdma-core-56/dev

# Kernel lines checked by `make check`: KVERS="6.1 6.12" adds Debian 13's
# line (kernel 6.12, rdma-core 56: deps, module, provider, then the selftests
# in the lab VM booting 6.12 with the trixie userland).  check-all = both.
KVERS ?= 6.1
# Lines after 6.1 (KDIR and KVER unset for them: the exported 6.1 values
# would otherwise build the 6.12 module against 6.1's headers).
# lines-build: deps, provider and module of each such line; `make check`
# runs it, and vm-check the DKMS build check of these lines, before the 6.1
# suite, so that after that suite only the other lines' VM suites are left
# (they are time-bounded, builds are not).  check-lines: their suites
# (LINES_BUILT=1: built and DKMS-checked already).  In CI (MRXE_CI_DEADLINE
# set) they get what is left of the hour, and programs that do not fit are
# skipped, not failed (selftests/run.sh, MRXE_SUITE_BUDGET_SKIP), and
# their list starts at program (commit count mod N) and wraps around
# (MRXE_SUITE_ROTATE, run-selftests.sh), so the skipped tail differs from
# one submission to the next.  make check-all runs them whole.
OTHER_LINES := $(filter-out 6.1,$(KVERS))
lines-build:
	@for l in $(OTHER_LINES); do \
		$(MAKE) deps-$$l provider-56 && \
		env -u KDIR -u KVER $(MAKE) module KVER=$$l || exit 1; done

check-lines:
	@if [ -z "$(LINES_BUILT)" ] && [ -n "$(OTHER_LINES)" ]; then \
		$(MAKE) lines-build && $(MAKE) deb-dkms-check KVERS="$(OTHER_LINES)" || exit 1; fi
	@for l in $(OTHER_LINES); do \
		MRXE_SUITE_BUDGET_SKIP=$${MRXE_CI_DEADLINE:+1} \
		MRXE_SUITE_ROTATE=$${MRXE_SUITE_ROTATE-$${MRXE_CI_DEADLINE:+$$(git rev-list --count HEAD 2>/dev/null)}} \
		MRXE_CI_DEADLINE=$${MRXE_CI_LINES_DEADLINE:-$${MRXE_CI_DEADLINE:-}} \
		LABVM_LINE=$$l bash tools/labvm/run-selftests.sh || exit 1; done

check-all:
	$(MAKE) check KVERS="6.1 6.12"

# Host-side unit tests first, then the selftests inside the lab VM.
check: all unit
	$(MAKE) checkpatch
	$(MAKE) unit-check
	$(MAKE) lines-build
	$(MAKE) vm-check
	$(MAKE) check-lines LINES_BUILT=1

# Kernel style: checkpatch.pl from Debian's linux-source-6.1 (make deps);
# any ERROR or WARNING on drivers/ fails.
CHECKPATCH_SRC ?= $(lastword $(sort $(wildcard /usr/src/linux-source-6.1*.tar.xz)))
checkpatch: | $(BUILD)
	@test -n "$(CHECKPATCH_SRC)" || { echo "checkpatch: linux-source-6.1 missing: make deps" >&2; exit 1; }
	@test -f $(BUILD)/checkpatch/scripts/checkpatch.pl || { mkdir -p $(BUILD)/checkpatch && \
		tar -xJf $(CHECKPATCH_SRC) -C $(BUILD)/checkpatch --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'; }
	@# drivers/mrxe_compat.h is the one file allowed to test LINUX_VERSION_CODE
	@out=$$( { perl $(BUILD)/checkpatch/scripts/checkpatch.pl --no-tree --terse --show-types \
		-f $(filter-out drivers/mrxe_compat.h,$(wildcard drivers/*.[ch])) drivers/proto/*.[ch]; \
		perl $(BUILD)/checkpatch/scripts/checkpatch.pl --no-tree --terse --show-types \
		--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON -f drivers/mrxe_compat.h; } 2>&1 | \
		grep -E 'ERROR|WARNING'); \
	if [ -n "$$out" ]; then printf "%s\n" "$$out"; echo "checkpatch: FAILED"; exit 1; fi; \
	echo "checkpatch: drivers/ clean"

# libFuzzer targets over drivers/proto/ (tests/fuzz, Documentation/testing.rst):
# each runs FUZZ_SECONDS (CI: 10); FUZZ_TARGETS="pkt sack" for a subset.
FUZZ_SECONDS ?= 60
fuzz: | $(BUILD)
	$(MAKE) -C tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)

# The ns-3 leaf-spine simulation (sim/, Documentation/simulation.rst): the
# drivers/proto/ engines on a 100G fabric, standard RoCEv2 vs MetaRoCE.
# QUICK=1 (CI): 4x4x4 fabric, 3 seeds, engine invariants checked, a few
# minutes on 2 cores; without it the documented 8x8x8 run (about 15 minutes).
# Results: build/sim/{quick,full}/ (summary.md, *.csv, sim-*.png).
QUICK ?=
sim: | $(BUILD)
	$(MAKE) -C sim -j2
	/usr/bin/python3 sim/run.py --jobs 2 --bin $(BUILD)/sim/mrxe-fabric $(if $(filter 1,$(QUICK)),--quick --out $(BUILD)/sim/quick,--out $(BUILD)/sim/full)

# The soak (selftests/mrxe_soak.sh, not in check): MRXE_SOAK_SECONDS (600)
# of verified mixed traffic over 4 QPs under loss/reorder/duplication.
soak: all
	bash tools/labvm/run-selftests.sh mrxe_soak.sh

# The host tests in two GoogleTest shards side by side (the randomized
# engine tests take most of a minute on one core); each shard's output
# follows, and a failing shard fails the target.
unit-check: unit
	@GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 $(BUILD)/unit-tests > $(BUILD)/unit-shard1.log 2>&1 & \
	GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0 $(BUILD)/unit-tests > $(BUILD)/unit-shard0.log 2>&1; r0=$$?; \
	wait $$!; r1=$$?; cat $(BUILD)/unit-shard0.log $(BUILD)/unit-shard1.log; \
	echo "unit-tests: shard 0 exit $$r0, shard 1 exit $$r1"; [ $$r0 = 0 ] && [ $$r1 = 0 ]
	$(BUILD)/mrxectl-tests

# The packages first: selftests/mrxe_install.sh installs build/deb's .debs
# (as root, deb-stage installs them on this machine first, in a private
# mount namespace; the guest replays that instead of compiling under TCG).
vm-check: all deb
	@if [ -n "$(OTHER_LINES)" ]; then $(MAKE) deb-dkms-check KVERS="$(OTHER_LINES)"; fi
	@if [ "$$(id -u)" = 0 ]; then $(MAKE) deb-stage || echo "vm-check: staging failed: the guest runs dpkg -i itself"; \
	else echo "vm-check: not root: no staged install, the guest's DKMS compiles the module (minutes)"; fi
	bash tools/labvm/run-selftests.sh

# The README's "main job": boot the lab VM and show mrxe at work.
# Benchmarks (not tests): bench/run.sh, stock rxe / mrxe standard / MetaRoCE
# side by side (TCP reference, loss sweeps, latency, sizes, QPs, multipath,
# ECN bottleneck), medians over repeats, CSV + markdown + PNG in
# bench/results/ (bench/README.md).  make bench QUICK=1 for the short set.
bench: all
	bash bench/run.sh $(if $(QUICK),--quick)

demo: all
	bash tools/labvm/demo.sh

install: all
	install -D -m 0644 $(BUILD)/rdma_mrxe.ko $(DESTDIR)/lib/modules/$(KVER)/updates/rdma_mrxe.ko
	@if [ -f $(BUILD)/libmrxe-rdmav34.so ]; then \
		install -D -m 0755 $(BUILD)/libmrxe-rdmav34.so $(DESTDIR)$(PREFIX)/lib/$(MULTIARCH)/libibverbs/libmrxe-rdmav34.so; \
		install -D -m 0644 userspace-provider/mrxe.driver $(DESTDIR)/etc/libibverbs.d/mrxe.driver; \
		install -D -m 0644 userspace-provider/mrxedv.h $(DESTDIR)$(PREFIX)/include/infiniband/mrxedv.h; \
	fi
	@if [ -f $(BUILD)/mrxectl ]; then \
		install -D -m 0755 $(BUILD)/mrxectl $(DESTDIR)$(PREFIX)/sbin/mrxectl; \
		install -D -m 0644 tools/mrxectl/mrxectl.8 $(DESTDIR)$(PREFIX)/share/man/man8/mrxectl.8; \
		install -D -m 0644 tools/mrxectl/mrxectl.bash-completion $(DESTDIR)$(PREFIX)/share/bash-completion/completions/mrxectl; \
	fi
	install -D -m 0644 include/uapi/rdma/mrxe-abi.h $(DESTDIR)$(PREFIX)/include/rdma/mrxe-abi.h
	install -D -m 0644 include/uapi/rdma/mrxe-netlink.h $(DESTDIR)$(PREFIX)/include/rdma/mrxe-netlink.h
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

# Debian packages (mrxe-dkms, ibverbs-provider-mrxe, mrxectl) with debhelper and
# dh-dkms from a copy of the tree, into build/deb/, then lintian (tools/mkdeb.sh).
# deb-dkms-check: DKMS builds the module from build/deb's mrxe-dkms for each
# line in KVERS on this machine (private DKMS trees, nothing installed).
deb:
	@bash tools/mkdeb.sh

deb-dkms-check:
	@bash tools/mkdeb.sh --dkms-check $(KVERS)

# deb-stage: dpkg -i of build/deb's packages into overlays in a private mount
# namespace (root; nothing of this machine changes): build/deb/install-stage.
deb-stage:
	@bash tools/mkdeb.sh --stage-install

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	-$(MAKE) -C userspace-provider clean 2>/dev/null
	-$(MAKE) -C tests/unit clean 2>/dev/null
	-$(MAKE) -C sim clean 2>/dev/null
	-$(MAKE) -C tools/mrxectl clean 2>/dev/null
	-$(MAKE) -C tests/fuzz clean 2>/dev/null
	rm -rf $(BUILD)
