#!/usr/bin/env bash
# Builds the Debian package with CPack, checks its metadata and contents, unpacks it into a scratch
# root and runs the installed programs from there on the bundled example.
# Usage: deb_test.sh BUILD_DIR WORK_DIR EXPECTED_TRACE_FILE
set -euo pipefail
build=$1 work=$2 expected=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
deb=$work/out/tdfx_${version}_amd64.deb
[ -f "$deb" ] || fail "no $deb (cpack wrote: $(ls "$work/out"))"

# Depends: what dpkg-shlibdeps found for the binaries, plus python3 for tdfx-export.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for want in libtorch libqt6widgets6 libqt6gui6 libqt6core6 libgvc6 libcgraph6 python3; do
  [[ ",$depends" == *", $want"* || ",$depends" == *",$want"* ]] || fail "Depends lacks $want"
done

# Every library a packaged binary links directly comes from a package named in Depends (or ships inside).
root=$work/root
dpkg -x "$deb" "$root"
dep_names=$(printf '%s' "$depends" | tr ',' '\n' | sed 's/^ *//; s/[ (].*//' | sort -u)
libdir_rel=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
libdir=$root/usr/${libdir_rel:-lib}
ls "$libdir"/libtdfx-core.so.*.* >/dev/null || fail "no libtdfx-core.so in $libdir"
for bin in "$root/usr/bin/tdfx" "$root/usr/bin/tdfx-cli" "$libdir"/libtdfx-core.so.*.*; do
  dynamic=$(readelf -d "$bin") || fail "readelf $bin"
  for needed in $(sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' <<<"$dynamic"); do
    [ -e "$libdir/$needed" ] && continue
    case "$needed" in ld-linux*) continue ;; esac  # the dynamic loader, part of libc6
    path=$(LD_LIBRARY_PATH=$libdir ldd "$bin" | awk -v n="$needed" '$1 == n { print $3 }')
    [ -n "$path" ] || fail "$bin needs $needed, which is not found"
    owner=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1) || true
    [ -n "$owner" ] || owner=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1) || true
    case "$owner" in libc6|libgcc-s1|libstdc++6) continue ;; esac  # essential / in every toolchain
    grep -qx "$owner" <<<"$dep_names" || fail "$(basename "$bin") needs $needed from $owner, not in Depends"
  done
done

# The files a desktop, a shell and a C++ user expect.
for f in usr/bin/tdfx usr/bin/tdfx-cli usr/bin/tdfx-export usr/share/tdfx/python/tdfx_export.py \
         usr/share/tdfx/examples/seed_sequential.pt usr/share/applications/io.github.tdfx.Tdfx.desktop \
         usr/share/icons/hicolor/scalable/apps/io.github.tdfx.Tdfx.svg usr/share/mime/packages/io.github.tdfx.Tdfx.xml \
         usr/share/metainfo/io.github.tdfx.Tdfx.metainfo.xml usr/share/man/man1/tdfx.1.gz \
         usr/share/man/man1/tdfx-cli.1.gz usr/share/man/man1/tdfx-export.1.gz \
         usr/include/tdfx/runtime/graph_module.h "usr/${libdir_rel:-lib}/cmake/tdfx/tdfxConfig.cmake"; do
  [ -e "$root/$f" ] || fail "package lacks /$f"
done
appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.tdfx.Tdfx.metainfo.xml"
desktop-file-validate "$root/usr/share/applications/io.github.tdfx.Tdfx.desktop"
zcat "$root/usr/share/man/man1/tdfx-cli.1.gz" | grep -qF 'expand\-all' || fail "man page lacks --expand-all"

# The installed programs, run from the unpacked root.
"$root/usr/bin/tdfx-cli" --version | tee "$work/version.txt"
grep -q "^LibTorch " "$work/version.txt" && grep -q "^Qt 6" "$work/version.txt" && grep -q "^Graphviz " "$work/version.txt" \
  || fail "tdfx-cli --version lacks a library version"
"$root/usr/bin/tdfx" --version | grep -q "^tdfx $version" || fail "tdfx --version"
"$root/usr/bin/tdfx-cli" trace "$root/usr/share/tdfx/examples/seed_sequential.pt" >"$work/trace.txt"
diff -u "$expected" "$work/trace.txt"
"$root/usr/bin/tdfx-export" --help | grep -q "usage: tdfx-export" || fail "tdfx-export --help"

# apt can resolve the Depends on this system (simulation; does not install).
if apt-get install -s "$deb" >"$work/apt.log" 2>&1; then
  grep -q "^Inst tdfx " "$work/apt.log" || { cat "$work/apt.log"; fail "apt-get -s did not plan to install tdfx"; }
else
  cat "$work/apt.log"; fail "apt-get -s install $deb"
fi
echo "deb package: OK ($deb, $(du -h "$deb" | cut -f1))"
