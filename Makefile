# Lapse — the two commands: `make demo` (the main job on the bundled sample) and `make test`.
# Both install the Debian packages they need first (a no-op when present).
SHELL := /bin/bash
SHARED_DATA ?= $(abspath ../shared/data)
CONFIG ?= release
# Build and runtime libraries (Leaflet for report pages, fonts for credits): what `make demo` and `make install` need.
PACKAGES := pkg-config libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev \
            libavfilter-dev libimagequant-dev libgif-dev libexif-dev libfreetype-dev fonts-dejavu-core libjs-leaflet
# What the tests and benchmarks add: the reference tools they compare against, the browser the report tests load
# pages in (headless Chromium driven by Debian's selenium), Slurm and MUNGE for the Slurm example's cluster.
TEST_PACKAGES := ffmpeg gifsicle python3 python3-venv parallel chromium chromium-driver python3-selenium \
            slurm-wlm munge
# kubernetes-validate (PyPI: not in Debian) checks the Kubernetes examples against the Kubernetes schemas offline,
# from a virtual environment of Debian's python3 beside the build.
TOOLS_VENV := .build/tools-venv
KUBERNETES_VALIDATE := kubernetes-validate==1.37.0
LAPSE = .build/$(CONFIG)/lapse
PREFIX ?= /usr/local

.PHONY: deps test-deps swift build test lint format leakcheck demo slurm-demo bench fuzz install clean

# Installs the Debian packages of $(1) that are missing (a no-op when all are there).
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps:
	$(call apt_install,$(PACKAGES))

test-deps: deps
	$(call apt_install,$(TEST_PACKAGES))
	@test -x $(TOOLS_VENV)/bin/kubernetes-validate || { /usr/bin/python3 -m venv $(TOOLS_VENV) && \
	  $(TOOLS_VENV)/bin/pip install -q --disable-pip-version-check $(KUBERNETES_VALIDATE); } || \
	  echo "warning: kubernetes-validate could not be installed (no PyPI?): only the Kubernetes example tests need it"

# Swift is not a Debian package: say where to get it rather than fail on "swift: command not found".
swift:
	@command -v swift >/dev/null 2>&1 || { echo "swift not found: install the Swift 6.3 toolchain for Debian 12 from \
	https://www.swift.org/install/linux/ (unpack it, e.g. into /opt/swift, and put its usr/bin on PATH)" >&2; exit 1; }

build: deps swift
	swift build -c $(CONFIG)

# The tool on PATH: PREFIX/bin/lapse (PREFIX default /usr/local; `make install PREFIX=~/.local` writes no system folder;
# the build libraries it installs first need root or sudo once).
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(LAPSE) $(DESTDIR)$(PREFIX)/bin/lapse

# Tests run in release mode (pixel loops are far too slow unoptimised) with testing enabled, one at a time: several
# tests give servers sub-second deadlines, which parallel CPU-heavy tests on 2 cores could starve.
test: test-deps swift
	LAPSE_SHARED_DATA=$(SHARED_DATA) swift test -c release -Xswiftc -enable-testing --no-parallel
	$(MAKE) leakcheck

# The code as the toolchain's swift-format writes it (.swift-format: 4 spaces, lines of 120, the lint rules it switches
# on), no line longer than 120 characters (swift-format leaves long string literals and comments alone), and no stored
# property of a 32-byte SIMD vector (Swift 6.3 miscompiles one kept in an async frame: LapseCore/StoredAsDoubles.swift).
# `make format` rewrites the files.
lint: deps
	swift format lint --strict --parallel --recursive Sources Tests Package.swift
	python3 scripts/long-lines.py --limit 120 Sources Tests Package.swift
	python3 scripts/vector-fields.py Sources Tests

format:
	swift format format --in-place --parallel --recursive Sources Tests Package.swift

# LeakSanitizer (with AddressSanitizer, from the toolchain) over every failing initialiser of the media and GIF
# types (the FailingInit suites), in a debug build of its own: any FFmpeg handle or buffer left allocated, or a freed
# one used again, fails the run. .ci/lsan.supp lists the toolchain's own leaks, nothing of Lapse's or FFmpeg's.
# With them, AddressSanitizer over the stabiliser's analysis tasks on a real video (the AsyncFrames suite), where
# Swift 6.3's async frames once overwrote the heap (LapseCore/StoredAsDoubles.swift), and over JPEGs decoded into
# planes kept between pictures (the PictureMemory suite: LapseMedia/PictureMemory.swift, FFmpeg's get_buffer2).
# Linked with the toolchain's lld: Debian's gold prints hundreds of warnings about the sanitizer runtime's symbols.
leakcheck: test-deps
	swift build -c debug --sanitize=address --build-path .build/asan --build-tests -Xswiftc -use-ld=lld
	LAPSE_SHARED_DATA=$(SHARED_DATA) ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/.ci/lsan.supp \
	  swift test -c debug --sanitize=address --build-path .build/asan --skip-build --filter "FailingInit|AsyncFrames|PictureMemory|SpareFrames|TwoStreamVideo|ransportStream"

demo: build
	@mkdir -p demo
	./scripts/demo.sh $(LAPSE) $(SHARED_DATA)

# The demo job as a Slurm job array on a one-node cluster started as plain processes (scripts/slurm-demo.sh): three
# segments sharing one cache, joined into demo/slurm/hyperlapse.mp4; the cluster stops when it ends.
slurm-demo: build test-deps
	./scripts/slurm-demo.sh $(LAPSE) $(SHARED_DATA) demo/slurm

# Parsers of outside data under libFuzzer with AddressSanitizer (the toolchain's -sanitize=fuzzer): FUZZ_SECONDS each.
FUZZ_SECONDS ?= 60
fuzz: test-deps swift
	./scripts/fuzz.sh $(SHARED_DATA) $(FUZZ_SECONDS)

bench: build test-deps
	@for b in bench/*.sh; do [ "$$b" = bench/lib.sh ] && continue; echo "== $$b"; bash $$b $(LAPSE) $(SHARED_DATA); done

clean:
	rm -rf .build demo
