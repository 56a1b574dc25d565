#!/usr/bin/env bash
# Lays out what a game team downloads, from the libraries make has built in build/ (make dist).
#
#   build/scripts/dist.sh linux VERSION STAGE     STAGE/ and STAGE.tar.gz from build/libsdkpp.so
#   build/scripts/dist.sh windows VERSION STAGE   STAGE/ and STAGE.zip from build/sdkpp.dll and
#                                                 its import libraries
#   build/scripts/dist.sh nuget VERSION STAGE     STAGE/ and Sdkpp.VERSION.nupkg beside it: the C#
#                                                 binding and both libraries
#   build/scripts/dist.sh install STAGE DEST      copies a staged Linux tree into DEST (a prefix)
#
# Each tree is a prefix: include/ (sdkpp.h, sdkpp.hpp), lib/ (the library, lib/cmake/sdkpp/ and
# lib/pkgconfig/sdkpp.pc, both relocatable), bin/ (Windows: sdkpp.dll), share/doc/sdkpp/ (the
# README and docs/). On Linux the library is libsdkpp.so.MAJOR.MINOR.PATCH, whose SONAME
# libsdkpp.so.MAJOR make gave it, with the links libsdkpp.so.MAJOR and libsdkpp.so.
set -euo pipefail
cd "$(dirname "$0")/../.."

usage() { echo "usage: $0 linux|windows|nuget VERSION STAGE | install STAGE DEST" >&2; exit 2; }
[ $# -eq 3 ] || usage

# fill TEMPLATE OUT: build/package/TEMPLATE with @VERSION@, @VERSION_MAJOR@, @VERSION_MINOR@.
fill() {
  sed -e "s/@VERSION@/$version/g" -e "s/@VERSION_MAJOR@/$major/g" -e "s/@VERSION_MINOR@/$minor/g" \
    "build/package/$1" >"$2"
}

# common STAGE: the parts both archives share.
common() {
  local stage=$1
  mkdir -p "$stage/include" "$stage/lib/cmake/sdkpp" "$stage/lib/pkgconfig" "$stage/share/doc/sdkpp"
  cp include/sdkpp.h include/sdkpp.hpp "$stage/include/"
  fill sdkppConfig.cmake.in "$stage/lib/cmake/sdkpp/sdkppConfig.cmake"
  fill sdkppConfigVersion.cmake.in "$stage/lib/cmake/sdkpp/sdkppConfigVersion.cmake"
  fill sdkpp.pc.in "$stage/lib/pkgconfig/sdkpp.pc"
  cp README.md "$stage/share/doc/sdkpp/"
  if [ -d docs ]; then cp -R docs "$stage/share/doc/sdkpp/"; fi
}

# Archives list their entries sorted, owned by root, dated by the last commit: the same build
# gives the same bytes.
mtime=@$(git log -1 --format=%ct 2>/dev/null || echo 0)

case $1 in
linux | windows)
  version=$2 stage=$3
  IFS=. read -r major minor patch <<<"$version"
  [ -n "$major" ] && [ -n "$minor" ] && [ -n "$patch" ] || { echo "dist.sh: bad version '$version'" >&2; exit 2; }
  rm -rf "$stage"
  common "$stage"
  name=$(basename "$stage")
  if [ "$1" = linux ]; then
    real=libsdkpp.so.$version
    cp build/libsdkpp.so "$stage/lib/$real"
    ln -s "$real" "$stage/lib/libsdkpp.so.$major"
    ln -s "libsdkpp.so.$major" "$stage/lib/libsdkpp.so"
    tar -C "$(dirname "$stage")" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
      -czf "$stage.tar.gz" "$name"
    echo "dist: $stage.tar.gz"
  else
    mkdir -p "$stage/bin"
    cp build/sdkpp.dll "$stage/bin/"
    cp build/sdkpp.lib build/libsdkpp.dll.a "$stage/lib/"
    find "$stage" -exec touch -h -d "$mtime" {} +
    rm -f "$stage.zip"
    (cd "$(dirname "$stage")" && find "$name" | LC_ALL=C sort | zip -q -X "$name.zip" -@)
    echo "dist: $stage.zip"
  fi
  ;;
nuget)
  # A NuGet package is a zip of a .nuspec, the OPC parts NuGet writes ([Content_Types].xml and
  # _rels/.rels) and the payload: lib/netstandard2.0/Sdkpp.dll (the binding, compiled by Mono's
  # mcs, with its XML docs) and runtimes/RID/native/ (the libraries of this build). .NET copies
  # the library of the game's RID beside it; the binding's NativeLibrary resolver finds it in
  # runtimes/ when a host does not.
  version=$2 stage=$3
  rm -rf "$stage"
  mkdir -p "$stage/lib/netstandard2.0" "$stage/runtimes/linux-x64/native" "$stage/runtimes/win-x64/native" "$stage/_rels"
  mcs -langversion:7 -nologo -warn:4 -warnaserror+ -optimize+ -target:library \
    -doc:"$stage/lib/netstandard2.0/Sdkpp.xml" -out:"$stage/lib/netstandard2.0/Sdkpp.dll" bindings/csharp/*.cs
  cp build/libsdkpp.so "$stage/runtimes/linux-x64/native/libsdkpp.so"
  cp build/sdkpp.dll "$stage/runtimes/win-x64/native/sdkpp.dll"
  sed -e "s/@VERSION@/$version/g" build/package/Sdkpp.nuspec.in >"$stage/Sdkpp.nuspec"
  cp README.md "$stage/README.md"
  cat >"$stage/[Content_Types].xml" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml" />
  <Default Extension="nuspec" ContentType="application/octet" />
  <Default Extension="dll" ContentType="application/octet" />
  <Default Extension="so" ContentType="application/octet" />
  <Default Extension="xml" ContentType="application/octet" />
  <Default Extension="md" ContentType="application/octet" />
</Types>
XML
  cat >"$stage/_rels/.rels" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  <Relationship Type="http://schemas.microsoft.com/packaging/2010/07/manifest" Target="/Sdkpp.nuspec" Id="R1" />
</Relationships>
XML
  find "$stage" -exec touch -h -d "$mtime" {} +
  pkg=$(cd "$(dirname "$stage")" && pwd)/Sdkpp.$version.nupkg
  rm -f "$pkg"
  (cd "$stage" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | zip -q -X "$pkg" -@)
  echo "dist: $pkg"
  ;;
install)
  stage=$2 dest=$3
  [ -f "$stage/include/sdkpp.h" ] || { echo "dist.sh: $stage is not a staged tree; run make dist" >&2; exit 2; }
  mkdir -p "$dest"
  # -P keeps the library's links as links.
  cp -RP "$stage/." "$dest/"
  echo "installed sdkpp into $dest"
  ;;
*) usage ;;
esac
