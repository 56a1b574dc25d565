# sdkpp: `make demo` runs the sample games, `make test` runs every test.
SHELL := /bin/bash
GO ?= go
BUILD := build
LIB := $(BUILD)/libsdkpp.so
DLL := $(BUILD)/sdkpp.dll
VERSION_HASH := $(shell git rev-parse --short HEAD 2>/dev/null || echo dev)
LDFLAGS := -X sdkpp/core.versionHash=$(VERSION_HASH)
GO_SOURCES := $(shell find capi core audio -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum
HEADERS := include/sdkpp.h include/sdkpp.hpp
CXXFLAGS := -std=c++17 -Wall -Wextra -Werror -O1 -Iinclude
CFLAGS := -std=c11 -Wall -Wextra -Werror -O1 -Iinclude
RPATH = -Wl,-rpath,$(abspath $(BUILD))

.PHONY: all lib generate check-generated deps test test-go test-native test-csharp bench windows demo clean

all: lib

deps:
	@build/scripts/deps.sh test

# The library and its headers.
lib: $(LIB)
$(LIB): $(GO_SOURCES) $(HEADERS)
	CGO_ENABLED=1 $(GO) build -buildmode=c-shared -ldflags "$(LDFLAGS)" -o $@ ./capi

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
test: deps check-generated test-go test-native test-csharp
	@echo "make test: all suites passed"

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

NATIVE := $(BUILD)/test/native
test-native: $(LIB)
	@mkdir -p $(NATIVE)
	@# The generated header must agree with cgo's own prototypes of the exports.
	$(CC) $(CFLAGS) -I$(BUILD) -fsyntax-only tests/c/header_match.c
	$(CC) $(CFLAGS) tests/c/handle_test.c -o $(NATIVE)/handle_test -L$(BUILD) -lsdkpp -lpthread $(RPATH)
	$(CC) $(CFLAGS) -D_DEFAULT_SOURCE tests/c/abuse_test.c -o $(NATIVE)/abuse_test -L$(BUILD) -lsdkpp $(RPATH)
	$(CXX) $(CXXFLAGS) tests/cpp/handle_test.cpp -o $(NATIVE)/handle_test_cpp -L$(BUILD) -lsdkpp -lpthread $(RPATH)
	@# The README's C++ quick start compiles and runs exactly as written.
	awk '/^```cpp/{on=1;next} /^```/{on=0} on' README.md > $(NATIVE)/readme_quickstart.cpp
	$(CXX) $(CXXFLAGS) $(NATIVE)/readme_quickstart.cpp -o $(NATIVE)/readme_quickstart -L$(BUILD) -lsdkpp $(RPATH)
	$(NATIVE)/handle_test
	$(NATIVE)/abuse_test
	$(NATIVE)/handle_test_cpp
	$(NATIVE)/readme_quickstart

test-csharp: $(LIB)
	bash tests/csharp/run.sh

# Benchmarks print each figure beside its anchor measured in the same run.
bench:
	@build/scripts/deps.sh test
	bash bench/run.sh

demo: $(LIB)
	@mkdir -p $(BUILD)/demo
	$(CXX) $(CXXFLAGS) examples/cpp/sample_game.cpp -o $(BUILD)/demo/sample_game -L$(BUILD) -lsdkpp $(RPATH)
	$(BUILD)/demo/sample_game

clean:
	rm -rf $(LIB) $(BUILD)/libsdkpp.h $(DLL) $(BUILD)/sdkpp.h $(BUILD)/test $(BUILD)/demo $(BUILD)/bench
