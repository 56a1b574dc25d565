#!/usr/bin/env bash
# Tests the packages make dist wrote into build/dist/, each unpacked afresh into build/test/dist/
# and used the way a game team would, never the build tree:
#   - the Linux library: SONAME libsdkpp.so.MAJOR, the two links, and a dynamic symbol table
#     holding exactly the functions of include/sdkpp.h, each versioned SDKPP_MAJOR;
#   - the Windows DLL: its export table holds exactly the functions of include/sdkpp.h;
#   - a CMake project (tests/dist/cmake) finds the package through CMAKE_PREFIX_PATH, builds a C and
#     a C++ game against sdkpp::sdkpp, and runs them;
#   - a C game built with pkg-config against the archive runs;
#   - mingw links the C game against lib/sdkpp.lib (MSVC's import library), and it runs under Wine;
#   - the NuGet package holds the binding, both libraries (the archives' own) and its manifest;
#   - the Unity package: its Runtime compiled by mcs with UNITY_5_3_OR_NEWER without engine
#     assemblies (noEngineReferences) and with a stand-in UnityEngine.dll (tests/dist/unity), and
#     without the symbol; its sample against them; package.json, metas, GUIDs and the native
#     import settings (tests/dist/upm_test.go); its libraries the archives';
#   - make install's tree (DESTDIR given by the Makefile) has the same files as the archive.
# Usage: MINGW_CC=... WINE=build/scripts/wine.sh SONAME=libsdkpp.so.0 tests/dist/run.sh VERSION
#        [DESTDIR_PREFIX]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
version=$1
installed=${2:-}
major=${version%%.*}
dist=$root/build/dist
out=$root/build/test/dist
linux_name=sdkpp-$version-linux-x64
win_name=sdkpp-$version-win-x64

fail() { echo "test-dist: $*" >&2; exit 1; }
step() { echo "== test-dist: $*"; }

rm -rf "$out"
mkdir -p "$out"
tar -C "$out" -xzf "$dist/$linux_name.tar.gz"
unzip -q "$dist/$win_name.zip" -d "$out"
linux=$out/$linux_name
win=$out/$win_name

# The functions the header declares, one a line, sorted.
sed -n 's/^SDKPP_API .* SDKPP_CALL \(Sdkpp_[A-Za-z0-9_]*\)(.*/\1/p' "$linux/include/sdkpp.h" | sort >"$out/header.txt"
[ "$(wc -l <"$out/header.txt")" -gt 100 ] || fail "found only $(wc -l <"$out/header.txt") functions in sdkpp.h"

step "Linux library: SONAME, links, versioned exports"
so=$linux/lib/libsdkpp.so.$version
[ -f "$so" ] && [ ! -L "$so" ] || fail "$so is missing"
[ "$(readlink "$linux/lib/libsdkpp.so.$major")" = "libsdkpp.so.$version" ] || fail "libsdkpp.so.$major is not a link to libsdkpp.so.$version"
[ "$(readlink "$linux/lib/libsdkpp.so")" = "libsdkpp.so.$major" ] || fail "libsdkpp.so is not a link to libsdkpp.so.$major"
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "$SONAME" ] && [ "$soname" = "libsdkpp.so.$major" ] || fail "SONAME is '$soname', want libsdkpp.so.$major"
# objdump -T: defined symbols have a section other than *UND*; the version node itself is *ABS*.
objdump -T "$so" | awk '$1 ~ /^[0-9a-f]+$/ && $0 !~ /\*UND\*/' >"$out/dynsym.txt"
others=$(awk '$NF !~ /^Sdkpp_/ && !($(NF-1) == "SDKPP_'"$major"'" && $NF == "SDKPP_'"$major"'")' "$out/dynsym.txt")
[ -z "$others" ] || fail "the library exports more than Sdkpp_ functions: $(head -3 <<<"$others")"
unversioned=$(awk '$NF ~ /^Sdkpp_/ && $(NF-1) != "SDKPP_'"$major"'"' "$out/dynsym.txt")
[ -z "$unversioned" ] || fail "exports without version SDKPP_$major: $(head -3 <<<"$unversioned")"
awk '$NF ~ /^Sdkpp_/ {print $NF}' "$out/dynsym.txt" | sort >"$out/so-exports.txt"
diff -u "$out/header.txt" "$out/so-exports.txt" || fail "the library's exports differ from sdkpp.h's functions (- header, + library)"
echo "SONAME $soname; $(wc -l <"$out/so-exports.txt") exports, all Sdkpp_ at SDKPP_$major"

step "Windows DLL: export table"
dll=$win/bin/sdkpp.dll
for f in "$dll" "$win/lib/sdkpp.lib" "$win/lib/libsdkpp.dll.a"; do [ -f "$f" ] || fail "$f is missing"; done
x86_64-w64-mingw32-objdump -p "$dll" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' \
  | sed -n 's/^\s*\[ *[0-9]*\] \(.*\)$/\1/p' | sort >"$out/dll-exports.txt"
diff -u "$out/header.txt" "$out/dll-exports.txt" || fail "the DLL's exports differ from sdkpp.h's functions (- header, + DLL)"
echo "$(wc -l <"$out/dll-exports.txt") exports, exactly sdkpp.h's functions"

step "CMake: find_package(sdkpp) on the unpacked archive"
cmake -S tests/dist/cmake -B "$out/cmake" -DCMAKE_PREFIX_PATH="$linux" -DCMAKE_BUILD_TYPE=Release \
  >"$out/cmake-configure.log" 2>&1 || { cat "$out/cmake-configure.log"; fail "cmake configure failed"; }
grep -F "sdkpp $version from $linux/lib/cmake/sdkpp" "$out/cmake-configure.log" || fail "cmake did not find the archive's package"
cmake --build "$out/cmake" >"$out/cmake-build.log" 2>&1 || { cat "$out/cmake-build.log"; fail "cmake build failed"; }
"$out/cmake/game_c"
"$out/cmake/game_cpp"
for exe in game_c game_cpp; do
  # (grep reads all of its input: with -q it could stop early and fail the pipe under pipefail)
  readelf -d "$out/cmake/$exe" | grep "NEEDED.*\[libsdkpp.so.$major\]" >/dev/null || fail "$exe does not need libsdkpp.so.$major"
done

step "pkg-config on the unpacked archive"
# shellcheck disable=SC2046 # pkg-config's output is a list of flags.
cc -std=c11 -Wall -Wextra -Werror tests/dist/cmake/game.c -o "$out/game_pc" \
  $(PKG_CONFIG_PATH='' PKG_CONFIG_LIBDIR="$linux/lib/pkgconfig" pkg-config --cflags --libs sdkpp)
[ "$(PKG_CONFIG_PATH='' PKG_CONFIG_LIBDIR="$linux/lib/pkgconfig" pkg-config --modversion sdkpp)" = "$version" ] || fail "sdkpp.pc's version is not $version"
LD_LIBRARY_PATH=$linux/lib "$out/game_pc"

step "mingw against lib/sdkpp.lib, run under Wine"
mkdir -p "$out/win"
"$MINGW_CC" -std=c11 -Wall -Wextra -Werror -I"$win/include" tests/dist/cmake/game.c -o "$out/win/game.exe" "$win/lib/sdkpp.lib"
x86_64-w64-mingw32-objdump -p "$out/win/game.exe" | grep 'DLL Name: sdkpp.dll' >/dev/null || fail "game.exe does not import sdkpp.dll"
cp "$dll" "$out/win/"
"$WINE" "$out/win/game.exe"

step "NuGet package: layout and manifest"
nupkg=$dist/Sdkpp.$version.nupkg
unzip -Z1 "$nupkg" | LC_ALL=C sort >"$out/nupkg-entries.txt"
printf '%s\n' '[Content_Types].xml' README.md Sdkpp.nuspec _rels/.rels lib/netstandard2.0/Sdkpp.dll \
  lib/netstandard2.0/Sdkpp.xml runtimes/linux-x64/native/libsdkpp.so runtimes/win-x64/native/sdkpp.dll \
  | LC_ALL=C sort >"$out/nupkg-want.txt"
diff -u "$out/nupkg-want.txt" "$out/nupkg-entries.txt" || fail "the NuGet package's entries differ (- want, + package)"
unzip -p "$nupkg" Sdkpp.nuspec >"$out/Sdkpp.nuspec"
grep -q "<id>Sdkpp</id>" "$out/Sdkpp.nuspec" && grep -q "<version>$version</version>" "$out/Sdkpp.nuspec" \
  || fail "Sdkpp.nuspec does not name Sdkpp $version"
unzip -p "$nupkg" runtimes/linux-x64/native/libsdkpp.so | cmp - "$so" || fail "the package's libsdkpp.so is not the archive's"
unzip -p "$nupkg" runtimes/win-x64/native/sdkpp.dll | cmp - "$dll" || fail "the package's sdkpp.dll is not the archive's"
echo "$(wc -l <"$out/nupkg-entries.txt") entries; the same libraries as the archives (make test-csharp runs the C# tests against it)"

step "Unity package: compiles as Unity would, with and without engine references"
upm=$dist/com.sdkpp.sdk-$version.tgz
tar -C "$out" -xzf "$upm"
mkdir -p "$out/unity/engine" "$out/unity/plain"
mcsflags=(-langversion:7 -nologo -warn:4 -warnaserror+)
mcs "${mcsflags[@]}" -target:library -nowarn:1591 -out:"$out/unity/UnityEngine.dll" tests/dist/unity/UnityEngine.cs
# The Runtime assembly as its asmdef builds it (noEngineReferences: Unity defines the symbols but
# gives no engine assembly), as an assembly with engine references (where the engine's own
# AOT.MonoPInvokeCallbackAttribute exists too), and outside Unity.
mcs "${mcsflags[@]}" -target:library -define:UNITY_5_3_OR_NEWER -out:"$out/unity/Sdkpp.dll" "$out"/package/Runtime/*.cs
mcs "${mcsflags[@]}" -target:library -define:UNITY_5_3_OR_NEWER -r:"$out/unity/UnityEngine.dll" \
  -out:"$out/unity/engine/Sdkpp.dll" "$out"/package/Runtime/*.cs
mcs "${mcsflags[@]}" -target:library -out:"$out/unity/plain/Sdkpp.dll" "$out"/package/Runtime/*.cs
mcs "${mcsflags[@]}" -target:library -define:UNITY_5_3_OR_NEWER -r:"$out/unity/UnityEngine.dll" -r:"$out/unity/Sdkpp.dll" \
  -out:"$out/unity/Sdkpp.Samples.Basic.dll" "$out"/package/Samples~/Basic/*.cs
# The engine glue (Sdkpp.Unity: Shutdown on quit and before a reload, errors to the console), in
# the editor and in a player.
mcs "${mcsflags[@]}" -target:library -define:UNITY_5_3_OR_NEWER -define:UNITY_EDITOR -r:"$out/unity/UnityEngine.dll" \
  -r:"$out/unity/Sdkpp.dll" -out:"$out/unity/engine/Sdkpp.Unity.dll" "$out"/package/Runtime/Unity/*.cs
mcs "${mcsflags[@]}" -target:library -define:UNITY_5_3_OR_NEWER -r:"$out/unity/UnityEngine.dll" \
  -r:"$out/unity/Sdkpp.dll" -out:"$out/unity/plain/Sdkpp.Unity.dll" "$out"/package/Runtime/Unity/*.cs
cmp "$out/package/Runtime/Plugins/x86_64/libsdkpp.so" "$so" || fail "the Unity package's libsdkpp.so is not the archive's"
cmp "$out/package/Runtime/Plugins/x86_64/sdkpp.dll" "$dll" || fail "the Unity package's sdkpp.dll is not the archive's"
SDKPP_UPM=$upm SDKPP_VERSION=$version go test -count=1 -run TestUPMPackage ./tests/dist/

if [ -n "$installed" ]; then
  step "make install's tree"
  (cd "$linux" && find . | sort) >"$out/archive-files.txt"
  (cd "$installed" && find . | sort) >"$out/installed-files.txt"
  diff -u "$out/archive-files.txt" "$out/installed-files.txt" || fail "make install's tree differs from the archive's"
  [ -L "$installed/lib/libsdkpp.so" ] || fail "make install did not keep libsdkpp.so a link"
  cmp "$so" "$installed/lib/libsdkpp.so.$version" || fail "make install's library is not the archive's"
fi
echo "test-dist: passed"
