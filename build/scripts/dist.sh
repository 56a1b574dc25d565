#!/usr/bin/env bash
# Lays out what a game team downloads, from the libraries make has built in build/ (make dist).
#
#   build/scripts/dist.sh linux VERSION STAGE     STAGE/ and STAGE.tar.gz from build/libsdkpp.so
#   build/scripts/dist.sh windows VERSION STAGE   STAGE/ and STAGE.zip from build/sdkpp.dll and
#                                                 its import libraries
#   build/scripts/dist.sh nuget VERSION STAGE     STAGE/ and Sdkpp.VERSION.nupkg beside it: the C#
#                                                 binding and both libraries
#   build/scripts/dist.sh upm VERSION STAGE       STAGE/package/ and com.sdkpp.sdk-VERSION.tgz beside
#                                                 it: the Unity package
#   build/scripts/dist.sh install STAGE DEST      copies a staged Linux tree into DEST (a prefix)
#
# Each tree is a prefix: include/ (sdkpp.h, sdkpp.hpp), lib/ (the library, lib/cmake/sdkpp/ and
# lib/pkgconfig/sdkpp.pc, both relocatable), bin/ (Windows: sdkpp.dll), share/doc/sdkpp/ (the
# README and docs/). On Linux the library is libsdkpp.so.MAJOR.MINOR.PATCH, whose SONAME
# libsdkpp.so.MAJOR make gave it, with the links libsdkpp.so.MAJOR and libsdkpp.so.
set -euo pipefail
cd "$(dirname "$0")/../.."

usage() { echo "usage: $0 linux|windows|nuget|upm VERSION STAGE | install STAGE DEST" >&2; exit 2; }
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

# guid PATH: the Unity GUID of a file of the Unity package, from its path: unique within the package
# and the same in every version, so that a project's references survive an upgrade.
guid() { printf 'com.sdkpp.sdk/%s' "$1" | md5sum | cut -c1-32; }

# meta ROOT PATH: writes ROOT/PATH.meta, the importer settings Unity expects for that file or folder.
meta() {
  local root=$1 rel=$2 out="$1/$2.meta"
  printf 'fileFormatVersion: 2\nguid: %s\n' "$(guid "$rel")" >"$out"
  if [ -d "$root/$rel" ]; then
    printf 'folderAsset: yes\nDefaultImporter:\n' >>"$out"
  else
    case $rel in
    *.cs) printf 'MonoImporter:\n  serializedVersion: 2\n  defaultReferences: []\n  executionOrder: 0\n  icon: {instanceID: 0}\n' >>"$out" ;;
    *.asmdef) printf 'AssemblyDefinitionImporter:\n' >>"$out" ;;
    package.json) printf 'PackageManifestImporter:\n' >>"$out" ;;
    *.so) plugin_meta Linux Linux64 >>"$out"; return ;;
    *.dll) plugin_meta Windows Win64 >>"$out"; return ;;
    *) printf 'TextScriptImporter:\n' >>"$out" ;;
    esac
  fi
  printf '  externalObjects: {}\n  userData: \n  assetBundleName: \n  assetBundleVariant: \n' >>"$out"
}

# plugin_meta OS STANDALONE: a native plugin enabled for the editor on OS and for the standalone
# player STANDALONE (Linux64 or Win64), x86_64, and for nothing else: each OS loads only its own
# library, by the name the binding imports (sdkpp: libsdkpp.so, sdkpp.dll).
plugin_meta() {
  local os=$1 player=$2 target
  printf 'PluginImporter:\n  externalObjects: {}\n  serializedVersion: 2\n  iconMap: {}\n  executionOrder: {}\n'
  printf '  defineConstraints: []\n  isPreloaded: 0\n  isOverridable: 0\n  isExplicitlyReferenced: 0\n  validateReferences: 1\n'
  printf '  platformData:\n'
  printf '  - first:\n      : Any\n    second:\n      enabled: 0\n      settings:\n'
  printf '        Exclude Editor: 0\n'
  for target in Linux64 OSXUniversal Win Win64; do
    printf '        Exclude %s: %d\n' "$target" "$([ "$target" = "$player" ] && echo 0 || echo 1)"
  done
  printf '  - first:\n      Any: \n    second:\n      enabled: 0\n      settings: {}\n'
  printf '  - first:\n      Editor: Editor\n    second:\n      enabled: 1\n      settings:\n'
  printf '        CPU: x86_64\n        DefaultValueInitialized: true\n        OS: %s\n' "$os"
  for target in Linux64 OSXUniversal Win Win64; do
    if [ "$target" = "$player" ]; then
      printf '  - first:\n      Standalone: %s\n    second:\n      enabled: 1\n      settings:\n        CPU: x86_64\n' "$target"
    else
      printf '  - first:\n      Standalone: %s\n    second:\n      enabled: 0\n      settings:\n        CPU: None\n' "$target"
    fi
  done
  printf '  userData: \n  assetBundleName: \n  assetBundleVariant: \n'
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
upm)
  # A UPM tarball is an npm-style tarball whose root folder is package/. Every file and folder
  # Unity imports has a .meta; Samples~ (hidden from Unity until the sample is imported) is the
  # sample's source, with metas of its own so that an imported sample keeps stable GUIDs.
  version=$2 stage=$3
  rm -rf "$stage"
  pkg=$stage/package
  mkdir -p "$pkg/Runtime/Plugins/x86_64" "$pkg/Samples~"
  sed -e "s/@VERSION@/$version/g" build/package/upm/package.json.in >"$pkg/package.json"
  cp README.md "$pkg/README.md"
  cp bindings/csharp/*.cs build/package/upm/Sdkpp.asmdef "$pkg/Runtime/"
  mkdir -p "$pkg/Runtime/Unity"
  cp build/package/upm/Unity/* "$pkg/Runtime/Unity/"
  cp build/libsdkpp.so build/sdkpp.dll "$pkg/Runtime/Plugins/x86_64/"
  cp -R "build/package/upm/Samples~/." "$pkg/Samples~/"
  (cd "$pkg" && find . -mindepth 1 ! -name 'Samples~' | sed 's|^\./||' | LC_ALL=C sort) | while read -r rel; do
    meta "$pkg" "$rel"
  done
  find "$stage" -exec touch -h -d "$mtime" {} +
  tgz=$(cd "$(dirname "$stage")" && pwd)/com.sdkpp.sdk-$version.tgz
  tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" -czf "$tgz" package
  echo "dist: $tgz"
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
