# sdkpp: `make demo` runs the sample games, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
BUILD := build
LIB := $(BUILD)/libsdkpp.so
DLL := $(BUILD)/sdkpp.dll
VERSION_HASH := $(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
LDFLAGS := -X sdkpp/core.versionHash=$(VERSION_HASH)
# Every file of this module that the library links, as go list -deps sees it: an edit anywhere
# the library reaches (wire/, internal/, audio/ ...) rebuilds it.
LIB_DEPS_FMT := {{if .Module}}{{if .Module.Main}}{{range .GoFiles}}{{$$.Dir}}/{{.}} {{end}}{{range .CgoFiles}}{{$$.Dir}}/{{.}} {{end}}{{range .CFiles}}{{$$.Dir}}/{{.}} {{end}}{{range .HFiles}}{{$$.Dir}}/{{.}} {{end}}{{end}}{{end}}
GO_SOURCES := $(shell $(GO) list -deps -f '$(LIB_DEPS_FMT)' ./capi 2>/dev/null) go.mod go.sum
GO_SOURCES_WINDOWS := $(shell CGO_ENABLED=1 GOOS=windows $(GO) list -deps -f '$(LIB_DEPS_FMT)' ./capi 2>/dev/null) go.mod go.sum
HEADERS := include/sdkpp.h include/sdkpp.hpp
CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -O1 -Iinclude
CFLAGS := -std=c11 -Wall -Wextra -Werror -O1 -Iinclude
RPATH = -Wl,-rpath,$(abspath $(BUILD))

# Audio cgo (audio/codec, audio/apm) links libopus and libspeexdsp built from Debian's source
# packages by build/scripts/clibs.sh as static PIC archives, never a system copy. Every go command
# run by this Makefile gets this environment, and every target that runs one depends on $(CLIBS):
# - PKG_CONFIG_LIBDIR holds only our opus.pc and speexdsp.pc (hraban/opus uses #cgo pkg-config),
#   so no system libopus can be found;
# - Go's build cache does not track the pkg-config environment but does track CGO_CFLAGS and
#   CGO_LDFLAGS: they name our headers, our archives and the key of clibs.sh, so a build made
#   with other libraries (or older archives) can never be reused from the cache;
# - the tag nolibopusfile drops hraban/opus's files that need libopusfile. A go command given its
#   own -tags must repeat it (GOFLAGS' -tags is replaced, not merged): see bench/run.sh.
CLIBS_DIR = $(abspath $(BUILD))/clibs/$(1)
CLIBS_KEY := $(shell sha256sum build/scripts/clibs.sh | cut -c1-16)
CLIBS := $(BUILD)/clibs/linux-amd64/stamp
CLIBS_WINDOWS := $(BUILD)/clibs/windows-amd64/stamp
export GOFLAGS += -tags=nolibopusfile
export PKG_CONFIG_PATH :=
export PKG_CONFIG_LIBDIR := $(call CLIBS_DIR,linux-amd64)/lib/pkgconfig
# audio/device's C devices (devices.c) include miniaudio.h for its declarations only, from
# the malgo module that compiles miniaudio's implementation, so the two always agree.
MALGO_DIR := $(shell $(GO) mod download github.com/gen2brain/malgo 2>/dev/null; $(GO) list -m -f '{{.Dir}}' github.com/gen2brain/malgo 2>/dev/null)
export CGO_CFLAGS := -O2 -g -I$(call CLIBS_DIR,linux-amd64)/include -I$(MALGO_DIR) -DSDKPP_CLIBS=$(CLIBS_KEY)
export CGO_LDFLAGS := $(addprefix $(call CLIBS_DIR,linux-amd64)/lib/,libopus.a libspeexdsp.a) -lm
# The library exports only its Sdkpp_ functions (not miniaudio's ma_*, opus_* or speex_*).
EXPORTS_MAP := capi/exports.map
SHARED_LDFLAGS := -extldflags=-Wl,--version-script=$(abspath $(EXPORTS_MAP))
# The library's version is the one api/sdkpp.api declares (Sdkpp_Client_GetVersion* report it);
# its SONAME carries the major version, and build/ holds that name as a link to libsdkpp.so so
# that programs linked there find it.
VERSION := $(shell awk '$$1 == "version" {print $$2; exit}' api/sdkpp.api)
VERSION_MAJOR := $(word 1,$(subst ., ,$(VERSION)))
SONAME := libsdkpp.so.$(VERSION_MAJOR)
LIB_LDFLAGS := -extldflags=-Wl,--version-script=$(abspath $(EXPORTS_MAP)),-soname,$(SONAME)

.PHONY: cluster all lib tools dist install test-dist clibs generate check-generated check-layers check-linkage deps bots test test-go test-postgres test-audio test-fuzz fuzz test-native test-csharp test-e2e test-browser test-windows bench windows demo clean

all: lib tools

deps:
	@build/scripts/deps.sh test

# Static libopus and libspeexdsp (instant when built; see build/scripts/clibs.sh).
clibs: $(CLIBS)
$(BUILD)/clibs/%/stamp: build/scripts/clibs.sh
	build/scripts/clibs.sh $*

# The library and its headers.
lib: $(LIB)
$(LIB): $(GO_SOURCES) $(HEADERS) $(EXPORTS_MAP) $(CLIBS)
	CGO_ENABLED=1 $(GO) build -buildmode=c-shared -ldflags "$(LDFLAGS) $(LIB_LDFLAGS)" -o $@ ./capi
	ln -sf $(@F) $(BUILD)/$(SONAME)

# The service and its companions: sdkpp-server, the stand-in browser for tests, and the stand-in
# desktop client.
TOOLS := $(BUILD)/sdkpp-server $(BUILD)/sdkpp-browser $(BUILD)/sdkpp-desktop
tools: $(TOOLS)
$(BUILD)/sdkpp-%: $(shell find cmd server core wire internal -name '*.go' -not -name '*_test.go') go.mod go.sum | $(CLIBS)
	$(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/sdkpp-$*

# Regenerate every layer from api/sdkpp.api (and the Go side table build/gen/facade_bodies.txt).
generate: $(CLIBS)
	$(GO) run ./build/gen

check-generated: $(CLIBS)
	$(GO) run ./build/gen -check

# The layers' arrows go one way: nothing the library links is under server/, and the service
# links nothing of the SDK's core/ or audio/.
check-layers: $(CLIBS)
	@! $(GO) list -deps ./capi | grep '^sdkpp/server' || { echo "check-layers: the library links server/" >&2; exit 1; }
	@! $(GO) list -deps ./cmd/sdkpp-server | grep -E '^sdkpp/(core|audio|capi)' || { echo "check-layers: the service links the SDK" >&2; exit 1; }
	@echo "check-layers: capi links nothing under server/; the service nothing of core/, audio/, capi/"

# The library, and a probe library that links audio/codec and audio/apm the same way (until capi
# imports audio), need nothing at run time beyond the C runtime and export no ma_, opus_ or
# speex_ symbols.
PROBE := $(BUILD)/test/linkprobe/liblinkprobe.so
$(PROBE): $(GO_SOURCES) $(shell find tests/linkprobe -name '*.go') $(EXPORTS_MAP) $(CLIBS)
	CGO_ENABLED=1 $(GO) build -buildmode=c-shared -ldflags "$(SHARED_LDFLAGS)" -o $@ ./tests/linkprobe
check-linkage: $(LIB) $(PROBE)
	build/scripts/check-linkage.sh $(LIB) $(PROBE)
	$(CC) $(CFLAGS) tests/c/linkprobe.c -o $(dir $(PROBE))linkprobe $(PROBE) -Wl,-rpath,$(abspath $(dir $(PROBE)))
	$(dir $(PROBE))linkprobe

# The Windows DLL, cross-built with mingw (posix threads), links the same libraries cross-built
# with mingw; the C test is linked to it. It exports only the functions of include/sdkpp.h, listed
# in build/sdkpp.def: Go's linker would otherwise hand the linker a .def of every cgo export,
# the internal callbacks of its dependencies (goDataCallback, sdkppOSThreadRun ...) included; it
# does not when the flags name --export-all-symbols, which --exclude-all-symbols then cancels.
# The same link writes mingw's import library, build/libsdkpp.dll.a; llvm-dlltool writes from
# the .def the short-format import library MSVC's own tools write, build/sdkpp.lib.
MINGW_CC := x86_64-w64-mingw32-gcc-posix
MINGW_CXX := x86_64-w64-mingw32-g++-posix
WIN := $(BUILD)/test/windows
DEF := $(BUILD)/sdkpp.def
IMPLIB_GNU := $(BUILD)/libsdkpp.dll.a
IMPLIB_MSVC := $(BUILD)/sdkpp.lib
DLL_LDFLAGS := '-extldflags=-Wl,--export-all-symbols -Wl,--exclude-all-symbols $(abspath $(DEF)) -Wl,--out-implib,$(abspath $(IMPLIB_GNU))'
windows $(DLL): export PKG_CONFIG_LIBDIR := $(call CLIBS_DIR,windows-amd64)/lib/pkgconfig
windows $(DLL): export CGO_CFLAGS := -O2 -g -I$(call CLIBS_DIR,windows-amd64)/include -I$(MALGO_DIR) -DSDKPP_CLIBS=$(CLIBS_KEY)
windows $(DLL): export CGO_LDFLAGS := $(addprefix $(call CLIBS_DIR,windows-amd64)/lib/,libopus.a libspeexdsp.a) -lm

$(DEF): include/sdkpp.h
	@mkdir -p $(@D)
	{ echo 'LIBRARY sdkpp.dll'; echo 'EXPORTS'; \
	  sed -n 's/^SDKPP_API .* SDKPP_CALL \(Sdkpp_[A-Za-z0-9_]*\)(.*/    \1/p' $<; } > $@

$(DLL) $(IMPLIB_GNU) &: $(GO_SOURCES_WINDOWS) $(HEADERS) $(DEF) $(CLIBS_WINDOWS)
	@build/scripts/deps.sh windows
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(MINGW_CC) \
		$(GO) build -buildmode=c-shared -ldflags "$(LDFLAGS) $(DLL_LDFLAGS)" -o $(DLL) ./capi
	@# cgo writes its export header beside the DLL as sdkpp.h; it would shadow include/sdkpp.h.
	rm -f $(BUILD)/sdkpp.h

$(IMPLIB_MSVC): $(DEF)
	@build/scripts/deps.sh windows
	llvm-dlltool -m i386:x86-64 -d $< -l $@

windows: $(DLL) $(IMPLIB_MSVC)
	@# The C test compiles against the header's Windows declarations and links to the DLL.
	@mkdir -p $(WIN)
	$(MINGW_CC) $(CFLAGS) tests/c/handle_test.c -o $(WIN)/handle_test.exe $(DLL) -lpthread
	@# The audio link probe cross-built the same way: the DLLs import only KERNEL32 and msvcrt.
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(MINGW_CC) \
		$(GO) build -buildmode=c-shared -o $(WIN)/linkprobe.dll ./tests/linkprobe
	build/scripts/check-linkage.sh $(DLL) $(WIN)/linkprobe.dll
	@echo "built $(DLL)"

# The Windows build at run time, under Debian's Wine in a prefix of its own (build/wine/prefix):
# the C and C++ tests against build/sdkpp.dll, the named-pipe IPC's Go tests, and the C++
# account-linking program against a live service on loopback, its desktop link included
# (tests/e2e with SDKPP_E2E_WINE). Wine 8 lacks ProcessPrng, which every Go 1.26 program and
# DLL needs at start: the prefix gets a stand-in bcryptprimitives.dll (tests/wine).
WINE := $(CURDIR)/build/scripts/wine.sh
WINE_PREFIX := $(BUILD)/wine/prefix
WINE_STANDIN := $(BUILD)/wine/bcryptprimitives.dll
WINE_SYSTEM := $(WINE_PREFIX)/drive_c/windows/system32
# The posix-threaded mingw runtime the programs link to; Windows finds it beside them.
MINGW_RUNTIME := libgcc_s_seh-1.dll libwinpthread-1.dll libstdc++-6.dll
WIN_GO := CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GO)

$(WINE_STANDIN): tests/wine/bcryptprimitives.c
	@build/scripts/deps.sh windows
	@mkdir -p $(@D)
	$(MINGW_CC) $(CFLAGS) -O2 -shared -o $@ $< -ladvapi32

$(WINE_SYSTEM)/bcryptprimitives.dll: $(WINE_STANDIN)
	@build/scripts/deps.sh wine
	$(WINE) wineboot --init
	cp $< $@

test-windows: windows $(WINE_SYSTEM)/bcryptprimitives.dll
	$(MINGW_CC) $(CFLAGS) tests/c/abuse_test.c -o $(WIN)/abuse_test.exe $(DLL)
	$(MINGW_CXX) $(CXXFLAGS) tests/cpp/handle_test.cpp -o $(WIN)/handle_test_cpp.exe $(DLL) -lpthread
	$(MINGW_CXX) $(CXXFLAGS) tests/cpp/auth_e2e.cpp -o $(WIN)/auth_e2e.exe $(DLL) -lpthread
	cp $(DLL) $(WIN)/
	for f in $(MINGW_RUNTIME); do cp "$$($(MINGW_CXX) -print-file-name=$$f)" $(WIN)/; done
	$(WIN_GO) build -ldflags "$(LDFLAGS)" -o $(WIN)/sdkpp-desktop.exe ./cmd/sdkpp-desktop
	$(WIN_GO) build -ldflags "$(LDFLAGS)" -o $(WIN)/sdkpp-browser.exe ./cmd/sdkpp-browser
	$(WIN_GO) test -c -o $(WIN)/rpc_test.exe ./core/rpc
	$(WIN_GO) test -c -o $(WIN)/desktop_test.exe ./cmd/sdkpp-desktop
	$(WINE) $(WIN)/handle_test.exe
	$(WINE) $(WIN)/abuse_test.exe
	$(WINE) $(WIN)/handle_test_cpp.exe
	@# The named pipes: the SDK's RPC client and the desktop client's peer, both sides on Windows.
	$(WINE) $(WIN)/rpc_test.exe -test.count=1
	$(WINE) $(WIN)/desktop_test.exe -test.count=1
	SDKPP_E2E_WINE=$(abspath $(WIN)) SDKPP_WINE=$(WINE) build/scripts/vtest.sh $(WIN)/e2e.log \
		$(GO) test -count=1 -v -run 'TestAccountLinking' ./tests/e2e/
	$(WINE) wineserver -w

# What a game team downloads, into build/dist/ from the libraries built above (build/scripts/dist.sh):
# the Linux and Windows archives, each a prefix with include/, lib/ (CMake config package and
# pkg-config file included) and the docs. make install copies the Linux one into
# $(DESTDIR)$(PREFIX).
DIST := $(BUILD)/dist
LINUX_STAGE := $(DIST)/sdkpp-$(VERSION)-linux-x64
WIN_STAGE := $(DIST)/sdkpp-$(VERSION)-win-x64
DIST_COMMON := $(HEADERS) README.md $(wildcard docs/*.md) $(wildcard build/package/*) build/scripts/dist.sh
PREFIX ?= /usr/local
NUGET := $(DIST)/Sdkpp.$(VERSION).nupkg
UPM := $(DIST)/com.sdkpp.sdk-$(VERSION).tgz
dist: $(LINUX_STAGE).tar.gz $(WIN_STAGE).zip $(NUGET) $(UPM)

# (tar and gzip only: make install needs none of the Windows tools deps.sh dist brings.)
$(LINUX_STAGE).tar.gz: $(LIB) $(DIST_COMMON)
	build/scripts/dist.sh linux $(VERSION) $(LINUX_STAGE)

$(WIN_STAGE).zip: $(DLL) $(IMPLIB_GNU) $(IMPLIB_MSVC) $(DIST_COMMON)
	@build/scripts/deps.sh dist
	build/scripts/dist.sh windows $(VERSION) $(WIN_STAGE)

# The NuGet package: the C# binding (lib/netstandard2.0/) and both libraries (runtimes/).
$(NUGET): $(LIB) $(DLL) $(wildcard bindings/csharp/*.cs) build/package/Sdkpp.nuspec.in build/scripts/dist.sh README.md
	@build/scripts/deps.sh dist
	@build/scripts/deps.sh mono
	build/scripts/dist.sh nuget $(VERSION) $(DIST)/nuget

# The Unity package: the binding with its assembly definition, both libraries with their import
# settings, and a sample (build/package/upm/).
$(UPM): $(LIB) $(DLL) $(wildcard bindings/csharp/*.cs) $(shell find build/package/upm -type f) build/scripts/dist.sh README.md
	build/scripts/dist.sh upm $(VERSION) $(DIST)/upm

install: $(LINUX_STAGE).tar.gz
	build/scripts/dist.sh install $(LINUX_STAGE) "$(DESTDIR)$(PREFIX)"

# The packages in build/dist/, unpacked afresh, as a game team would use them (tests/dist/run.sh).
test-dist: dist $(WINE_SYSTEM)/bcryptprimitives.dll
	rm -rf $(BUILD)/test/dist-install
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(BUILD))/test/dist-install PREFIX=/opt/sdkpp
	MINGW_CC=$(MINGW_CC) WINE=$(WINE) SONAME=$(SONAME) \
		bash tests/dist/run.sh $(VERSION) $(abspath $(BUILD))/test/dist-install/opt/sdkpp

# Every test: generated code current, Go tests, then C, C++ and C# against the real library, and
# the Windows DLL under Wine.
test: deps check-generated check-layers test-go test-fuzz check-linkage test-native test-csharp test-e2e test-browser test-windows test-dist
	@echo "make test: all suites passed"

# tests/bots runs a bot written with discord.js: npm installs the version that
# tests/bots/testdata/package-lock.json pins into build/bots/discordjs (npm ci: exactly the lock
# file, whose entries carry no registry address, so npm takes them from the registry it is set up
# with and checks each against its integrity hash), before and outside the timed tests; the stamp
# makes it a no-op until the lock file changes. To change the version, edit package.json there and
# run in that directory: npm install --package-lock-only --omit-lockfile-registry-resolved
DISCORDJS := $(BUILD)/bots/discordjs
bots: $(DISCORDJS)/stamp
$(DISCORDJS)/stamp: tests/bots/testdata/package.json tests/bots/testdata/package-lock.json
	@build/scripts/deps.sh node
	rm -rf $(DISCORDJS)
	mkdir -p $(DISCORDJS)
	cp $^ $(DISCORDJS)/
	cd $(DISCORDJS) && npm ci --ignore-scripts --no-audit --no-fund
	touch $@

# Audio tests run against a private PulseAudio (audio/internal/pulsetest); here a missing one fails.
# The tests that play sound in real time and score what is heard (the engine through the sound
# server, the three-player call of tests/voicecall, and the same across three nodes in
# tests/cluster/voicecall) run afterwards, one package at a time, with their figures printed:
# beside other test packages on a two-core machine the engine misses its deadlines and the echo
# canceller loses much of its effect (see audio/engine/pulse_test.go).
REALTIME_TESTS := ^(TestPulse(SpeechQuality|EchoCancellation)|TestThreePlayersHearEachOther|TestThreeNodesVoiceCall)$$
REALTIME_PKGS := ./audio/engine ./tests/voicecall ./tests/cluster/voicecall
test-go: $(CLIBS) $(DISCORDJS)/stamp
	@unformatted=$$("$$($(GO) env GOROOT)/bin/gofmt" -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt: not formatted: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	SDKPP_REQUIRE_AUDIO=1 SDKPP_REQUIRE_BOTS=1 SDKPP_REQUIRE_POSTGRES=1 $(GO) test -count=1 -skip '$(REALTIME_TESTS)' ./...
	@mkdir -p $(BUILD)/test
	@SDKPP_REQUIRE_AUDIO=1 SDKPP_REQUIRE_POSTGRES=1 $(GO) test -count=1 -p 1 -run '$(REALTIME_TESTS)' -v $(REALTIME_PKGS) >$(BUILD)/test/realtime.log 2>&1; \
		rc=$$?; grep -E '^(--- |ok|FAIL)|dB|Error' $(BUILD)/test/realtime.log; exit $$rc

# The service's test suite with every test server on PostgreSQL (a fresh database each, on a
# private server build/scripts/pg.sh starts); make test runs the store's conformance suite on
# both databases already.
test-postgres: $(CLIBS)
	@build/scripts/deps.sh postgres
	SDKPP_TEST_STORE=postgres build/scripts/pg.sh run $(BUILD)/pg-suite $(GO) test -count=1 -tags=nolibopusfile ./server/... ./cmd/sdkpp-server

# Only the voice engine's packages, with the race detector.
test-audio: $(CLIBS)
	$(GO) vet ./audio/... ./tests/linkprobe
	$(GO) test -count=1 -race ./audio/...

# Fuzzing: test-go runs every target's committed corpus as plain tests; test-fuzz fuzzes each
# target briefly, make fuzz long (FUZZTIME each: a duration, or a count of inputs like 5000x).
FUZZTIME_TEST ?= 3s
FUZZTIME ?= 3m
test-fuzz: $(CLIBS)
	GO=$(GO) bash build/scripts/fuzz.sh $(FUZZTIME_TEST)

fuzz: $(CLIBS)
	GO=$(GO) bash build/scripts/fuzz.sh $(FUZZTIME)

NATIVE := $(BUILD)/test/native
SAMPLE_GAME := $(BUILD)/demo/sample_game
SAMPLE_GAME_C := $(BUILD)/demo/sample_game_c
SAMPLE_GAME_CS := $(BUILD)/demo/csharp/SampleGame.exe
# Random calls to every export, from STRESS_THREADS threads (tests/c/stress_test.c).
STRESS_CALLS ?= 1000000
STRESS_THREADS ?= 4
test-native: $(LIB)
	@mkdir -p $(NATIVE)
	@# The generated header must agree with cgo's own prototypes of the exports.
	$(CC) $(CFLAGS) -I$(BUILD) -fsyntax-only tests/c/header_match.c
	$(CC) $(CFLAGS) tests/c/handle_test.c -o $(NATIVE)/handle_test -L$(BUILD) -lsdkpp -lpthread $(RPATH)
	$(CC) $(CFLAGS) -D_DEFAULT_SOURCE tests/c/abuse_test.c -o $(NATIVE)/abuse_test -L$(BUILD) -lsdkpp $(RPATH)
	$(CC) $(CFLAGS) tests/c/stress_test.c -o $(NATIVE)/stress_test -L$(BUILD) -lsdkpp -lpthread -lm $(RPATH)
	$(CXX) $(CXXFLAGS) tests/cpp/handle_test.cpp -o $(NATIVE)/handle_test_cpp -L$(BUILD) -lsdkpp -lpthread $(RPATH)
	@# The README's C++ quick start compiles and runs exactly as written; its account-linking
	@# fragment compiles inside a function that supplies client and appId.
	awk '/^```cpp/{n++; on=(n==1); next} /^```/{on=0} on' README.md > $(NATIVE)/readme_quickstart.cpp
	$(CXX) $(CXXFLAGS) $(NATIVE)/readme_quickstart.cpp -o $(NATIVE)/readme_quickstart -L$(BUILD) -lsdkpp $(RPATH)
	{ echo '#include "sdkpp.hpp"'; echo 'void Link(sdkpp::Client& client, uint64_t appId) {'; \
	  awk '/^```cpp/{n++; on=(n==2); next} /^```/{on=0} on' README.md; echo '}'; } > $(NATIVE)/readme_linking.cpp
	$(CXX) $(CXXFLAGS) -Wno-unused-parameter -Wno-unused-variable -fsyntax-only $(NATIVE)/readme_linking.cpp
	@# Its chat fragment compiles inside a function that supplies client.
	{ echo '#include "sdkpp.hpp"'; echo '#include <cstdio>'; echo 'void Chat(sdkpp::Client& client) {'; \
	  awk '/^```cpp/{n++; on=(n==3); next} /^```/{on=0} on' README.md; echo '}'; } > $(NATIVE)/readme_chat.cpp
	$(CXX) $(CXXFLAGS) -fsyntax-only $(NATIVE)/readme_chat.cpp
	@# Its voice fragment compiles inside a function that supplies client and lobbyId.
	{ echo '#include "sdkpp.hpp"'; echo '#include <cstdio>'; echo 'void Voice(sdkpp::Client& client, uint64_t lobbyId) {'; \
	  awk '/^```cpp/{n++; on=(n==4); next} /^```/{on=0} on' README.md; echo '}'; } > $(NATIVE)/readme_voice.cpp
	$(CXX) $(CXXFLAGS) -fsyntax-only $(NATIVE)/readme_voice.cpp
	@# The README's C quick start compiles and runs exactly as written.
	awk '/^```c$$/{n++; on=(n==1); next} /^```/{on=0} on' README.md > $(NATIVE)/readme_quickstart_c.c
	$(CC) $(CFLAGS) $(NATIVE)/readme_quickstart_c.c -o $(NATIVE)/readme_quickstart_c -L$(BUILD) -lsdkpp $(RPATH)
	$(NATIVE)/handle_test
	$(NATIVE)/abuse_test
	$(NATIVE)/stress_test $(STRESS_CALLS) $(STRESS_THREADS)
	$(NATIVE)/handle_test_cpp
	$(NATIVE)/readme_quickstart
	$(NATIVE)/readme_quickstart_c

# The C# tests run against the binding and the library unpacked from build/dist's NuGet package.
test-csharp: $(NUGET) $(BUILD)/sdkpp-desktop
	rm -rf $(BUILD)/test/nuget && mkdir -p $(BUILD)/test/nuget
	unzip -q $(NUGET) -d $(BUILD)/test/nuget
	SDKPP_CSHARP_PACKAGE=$(abspath $(BUILD))/test/nuget bash tests/csharp/run.sh
	@# The README's C# quick start compiles against the binding (built by run.sh) and runs as written.
	awk '/^```csharp$$/{n++; on=(n==1); next} /^```/{on=0} on' README.md > $(BUILD)/test/csharp/QuickStart.cs
	mcs -langversion:7 -nologo -warn:4 -warnaserror+ -r:$(BUILD)/test/csharp/Sdkpp.dll \
		-out:$(BUILD)/test/csharp/QuickStart.exe $(BUILD)/test/csharp/QuickStart.cs
	cd $(BUILD)/test/csharp && LD_LIBRARY_PATH=$(abspath $(BUILD))/test/nuget/runtimes/linux-x64/native mono QuickStart.exe

# C++ and C# programs linked to the real library, against a live service (tests/e2e).
E2E := $(BUILD)/test/e2e
test-e2e: $(LIB) $(BUILD)/sdkpp-browser $(BUILD)/sdkpp-server $(SAMPLE_GAME) $(SAMPLE_GAME_C) $(SAMPLE_GAME_CS)
	@mkdir -p $(E2E)
	$(CXX) $(CXXFLAGS) tests/cpp/auth_e2e.cpp -o $(E2E)/auth_e2e_cpp -L$(BUILD) -lsdkpp -lpthread $(RPATH)
	bash tests/csharp/e2e/build.sh
	@# The demo, as make demo runs it (tests/e2e/demo_test.go).
	@build/scripts/deps.sh demo
	$(GO) build -o $(E2E)/demo ./examples/demo
	SDKPP_DEMO=$(abspath $(E2E))/demo SDKPP_DEMO_BIN=$(abspath $(BUILD)) \
	LD_LIBRARY_PATH=$(abspath $(BUILD)) SDKPP_E2E_CPP=$(abspath $(E2E))/auth_e2e_cpp \
		SDKPP_E2E_CSHARP=$(abspath $(E2E))/AuthE2E.exe SDKPP_BROWSER=$(abspath $(BUILD))/sdkpp-browser \
		build/scripts/vtest.sh $(E2E)/e2e.log $(GO) test -count=1 -v ./tests/e2e/

# The consent page in a real browser: headless Chromium from Debian.
test-browser: $(CLIBS)
	@build/scripts/deps.sh browser
	SDKPP_REQUIRE_BROWSER=1 SDKPP_ARTIFACTS_DIR=$(abspath $(BUILD))/test $(GO) test -count=1 ./tests/browser/

# Benchmarks print each figure beside its anchor measured in the same run.
bench: $(CLIBS)
	@build/scripts/deps.sh bench
	@build/scripts/deps.sh postgres
	bash bench/run.sh

# Three nodes on this machine, as a studio runs them on several (README, "Running a cluster"):
# PostgreSQL, NATS with JetStream, three sdkpp-server nodes and HAProxy in front of them on the
# default address, all from Debian's packages (deps.sh cluster); Ctrl-C stops everything.
cluster: $(BUILD)/sdkpp-server
	@build/scripts/deps.sh cluster
	build/scripts/cluster.sh $(BUILD)

# Starts sdkpp-server on its default address and runs a sample game for two players: SAMPLE=cpp
# (examples/cpp, the default), c (examples/c) or csharp (examples/csharp, with Mono). CLUSTER=1
# starts a three-node cluster there instead (as make cluster does) and puts each player on a
# different node.
SAMPLE ?= cpp
CLUSTER ?=
SAMPLE_PROGRAM_cpp := $(SAMPLE_GAME)
SAMPLE_PROGRAM_c := $(SAMPLE_GAME_C)
SAMPLE_PROGRAM_csharp := $(SAMPLE_GAME_CS)
demo: $(LIB) $(BUILD)/sdkpp-server $(BUILD)/sdkpp-browser $(SAMPLE_PROGRAM_$(SAMPLE))
	@build/scripts/deps.sh demo
	@$(if $(filter 1,$(CLUSTER)),build/scripts/deps.sh cluster)
	@$(GO) run ./examples/demo -bin $(BUILD) -sample $(SAMPLE) $(if $(filter 1,$(CLUSTER)),-cluster)

$(SAMPLE_GAME): examples/cpp/sample_game.cpp $(HEADERS) $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) examples/cpp/sample_game.cpp -o $@ -L$(BUILD) -lsdkpp $(RPATH)

$(SAMPLE_GAME_C): examples/c/sample_game.c include/sdkpp.h $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) examples/c/sample_game.c -o $@ -L$(BUILD) -lsdkpp $(RPATH)

# The C# sample against the binding compiled as its own assembly, as a game uses it.
$(SAMPLE_GAME_CS): examples/csharp/SampleGame.cs $(wildcard bindings/csharp/*.cs)
	@build/scripts/deps.sh mono
	@mkdir -p $(dir $@)
	mcs -langversion:7 -nologo -warn:4 -warnaserror+ -target:library -out:$(dir $@)Sdkpp.dll bindings/csharp/*.cs
	mcs -langversion:7 -nologo -warn:4 -warnaserror+ -target:exe -r:$(dir $@)Sdkpp.dll -out:$@ examples/csharp/SampleGame.cs

clean:
	@# build/clibs stays: rebuilding it takes minutes and clibs.sh knows when it is stale.
	rm -rf $(LIB) $(BUILD)/$(SONAME) $(TOOLS) $(BUILD)/libsdkpp.h $(DLL) $(BUILD)/sdkpp.h $(DEF) $(IMPLIB_GNU) $(IMPLIB_MSVC) $(DIST) $(BUILD)/test $(BUILD)/demo $(BUILD)/bench $(BUILD)/wine
