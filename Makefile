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
HEADERS := include/sdkpp.h include/sdkpp.hpp
CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -O1 -Iinclude
CFLAGS := -std=c11 -Wall -Wextra -Werror -O1 -Iinclude
RPATH = -Wl,-rpath,$(abspath $(BUILD))

.PHONY: all lib tools generate check-generated deps test test-go test-fuzz fuzz test-native test-csharp test-e2e test-browser bench windows demo clean

all: lib tools

deps:
	@build/scripts/deps.sh test

# The library and its headers.
lib: $(LIB)
$(LIB): $(GO_SOURCES) $(HEADERS)
	CGO_ENABLED=1 $(GO) build -buildmode=c-shared -ldflags "$(LDFLAGS)" -o $@ ./capi

# The service and its companions: sdkpp-server, the stand-in browser for tests, and the stand-in
# desktop client.
TOOLS := $(BUILD)/sdkpp-server $(BUILD)/sdkpp-browser $(BUILD)/sdkpp-desktop
tools: $(TOOLS)
$(BUILD)/sdkpp-%: $(shell find cmd server core wire internal -name '*.go' -not -name '*_test.go') go.mod go.sum
	$(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/sdkpp-$*

# Regenerate every layer from api/sdkpp.api.
generate:
	$(GO) run ./build/gen

check-generated:
	$(GO) run ./build/gen -check

windows:
	@build/scripts/deps.sh windows
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=x86_64-w64-mingw32-gcc-posix \
		$(GO) build -buildmode=c-shared -ldflags "$(LDFLAGS)" -o $(DLL) ./capi
	@# cgo writes its export header beside the DLL as sdkpp.h; it would shadow include/sdkpp.h.
	rm -f $(BUILD)/sdkpp.h
	@# The C test compiles against the header's Windows declarations and links to the DLL.
	@mkdir -p $(BUILD)/test/windows
	x86_64-w64-mingw32-gcc-posix $(CFLAGS) tests/c/handle_test.c -o $(BUILD)/test/windows/handle_test.exe $(DLL) -lpthread
	@echo "built $(DLL)"

# Every test: generated code current, Go tests, then C, C++ and C# against the real library.
test: deps check-generated test-go test-fuzz test-native test-csharp test-e2e test-browser
	@echo "make test: all suites passed"

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Fuzzing: test-go runs every target's committed corpus as plain tests; test-fuzz fuzzes each
# target briefly, make fuzz long (FUZZTIME each: a duration, or a count of inputs like 5000x).
FUZZTIME_TEST ?= 3s
FUZZTIME ?= 3m
test-fuzz:
	GO=$(GO) bash build/scripts/fuzz.sh $(FUZZTIME_TEST)

fuzz:
	GO=$(GO) bash build/scripts/fuzz.sh $(FUZZTIME)

NATIVE := $(BUILD)/test/native
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
	$(NATIVE)/handle_test
	$(NATIVE)/abuse_test
	$(NATIVE)/stress_test $(STRESS_CALLS) $(STRESS_THREADS)
	$(NATIVE)/handle_test_cpp
	$(NATIVE)/readme_quickstart

test-csharp: $(LIB)
	bash tests/csharp/run.sh

# C++ and C# programs linked to the real library, against a live service (tests/e2e).
E2E := $(BUILD)/test/e2e
test-e2e: $(LIB) $(BUILD)/sdkpp-browser
	@mkdir -p $(E2E)
	$(CXX) $(CXXFLAGS) tests/cpp/auth_e2e.cpp -o $(E2E)/auth_e2e_cpp -L$(BUILD) -lsdkpp -lpthread $(RPATH)
	bash tests/csharp/e2e/build.sh
	LD_LIBRARY_PATH=$(abspath $(BUILD)) SDKPP_E2E_CPP=$(abspath $(E2E))/auth_e2e_cpp \
		SDKPP_E2E_CSHARP=$(abspath $(E2E))/AuthE2E.exe SDKPP_BROWSER=$(abspath $(BUILD))/sdkpp-browser \
		$(GO) test -count=1 -v ./tests/e2e/

# The consent page in a real browser: headless Chromium from Debian.
test-browser:
	@build/scripts/deps.sh browser
	SDKPP_REQUIRE_BROWSER=1 SDKPP_ARTIFACTS_DIR=$(abspath $(BUILD))/test $(GO) test -count=1 ./tests/browser/

# Benchmarks print each figure beside its anchor measured in the same run.
bench:
	@build/scripts/deps.sh bench
	bash bench/run.sh

# Starts sdkpp-server on its default address and runs the sample game for two players.
demo: $(LIB) $(BUILD)/sdkpp-server $(BUILD)/sdkpp-browser
	@mkdir -p $(BUILD)/demo
	$(CXX) $(CXXFLAGS) examples/cpp/sample_game.cpp -o $(BUILD)/demo/sample_game -L$(BUILD) -lsdkpp $(RPATH)
	@$(GO) run ./examples/demo -bin $(BUILD)

clean:
	rm -rf $(LIB) $(TOOLS) $(BUILD)/libsdkpp.h $(DLL) $(BUILD)/sdkpp.h $(BUILD)/test $(BUILD)/demo $(BUILD)/bench
