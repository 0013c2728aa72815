#!/usr/bin/env bash
# The Debian packages, checked as a Debian maintainer and a user would:
#  1. cpack -G DEB builds one package per component; lintian gives no E: or W: tag;
#  2. Depends, contents, the desktop files and the man pages are right;
#  3. dpkg -i installs them into this machine, and what they installed runs: tdfx-cli on the
#     bundled example, a CMake consumer of libtdfx-dev, python3 -m tdfx_export, tdfx-export, and the
#     GUI under Xvfb with a screenshot that is not blank; the ldconfig trigger made the library known;
#  4. dpkg --purge removes them, and nothing that dpkg -L listed is left behind.
# Steps 3 and 4 need root (CI runs as root) or password-less sudo; without them the test reports
# itself skipped (exit 77) after steps 1 and 2 (packaging/run-tests.sh then fails: every test must run).
# STAGE (default all) splits the work for CTest: `build` runs steps 1 and 2 only, beside other tests
# (package.deb_build), and leaves WORK/built.ok; `install` runs steps 3 and 4 alone (package.deb, run
# serially: it installs into /usr) on those packages, or every step when the build stage left none
# or tdfx packages were installed here before (they are saved and purged before cpack, step 0).
# tdfx packages already installed here, not by this test (a developer's dpkg -i, another build's),
# are saved first with dpkg-repack into BUILD_DIR/tests/package-deb.saved, purged, and installed
# again from there at the end, pass or fail; a run killed before that restores them next time.
# Usage: deb_test.sh BUILD_DIR WORK_DIR EXPECTED_TRACE_FILE [all|build|install]
set -euo pipefail
# grep that reads all its input: `cmd | grep -q` stops reading at the first match, and under
# pipefail the writer's SIGPIPE then fails the pipeline (seen with ldd).
has() { grep "$@" >/dev/null; }
build=$1 work=$2 expected=$3 stage=${4:-all}
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/../.." && pwd)
packages=(libtdfx-core0 libtdfx-dev tdfx tdfx-cli python3-tdfx-export)
marker=$build/tests/package-deb.installed  # outside WORK, which is wiped below
saved=$build/tests/package-deb.saved        # the packages that were here before, repacked (outside WORK too)
fail() { echo "FAIL: $*"; exit 1; }
tdfx_installed() {
  for p in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | has "install ok installed"; then return 0; fi
  done
  return 1
}
case $stage in
  all | build | install) ;;
  *) fail "unknown stage '$stage' (expected all, build or install)" ;;
esac
# The install stage reuses the build stage's packages when it made them, and nothing of another
# build is installed here; otherwise it does every step.
reuse=no
if [ "$stage" = install ] && [ -f "$work/built.ok" ] && [ ! -e "$marker" ] && [ ! -d "$saved" ] && ! tdfx_installed; then
  reuse=yes
fi
if [ "$stage" = build ] && { tdfx_installed || [ -e "$marker" ] || [ -d "$saved" ]; }; then
  rm -rf "$work" && mkdir -p "$work"
  echo "tdfx packages are installed here (or a killed run's are): the install stage (package.deb) saves them, then builds"
  exit 0
fi
if [ "$reuse" = yes ]; then  # the packages stay; what an earlier install stage left goes
  find "$work" -mindepth 1 -maxdepth 1 ! -name out ! -name built.ok ! -name 'lintian.txt' -exec rm -rf {} +
else
  rm -rf "$work" && mkdir -p "$work"
fi

# 0. tdfx packages installed here already go first, before cpack: dpkg-shlibdeps would take the
# installed libtdfx-core0's shlibs (another version's "libtdfx-core0 (= V)") into the Depends of the
# packages built. Someone else's are saved first and put back at the end, pass or fail; a previous
# run's (the marker: killed before its purge) are purged.
can_install=yes SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if sudo -n true 2>/dev/null; then SUDO=(sudo -n); else can_install=no; fi
fi
[ "$stage" != build ] || can_install=build-only  # steps 1 and 2: nothing installed, nothing purged
purge() { "${SUDO[@]}" dpkg --purge "${packages[@]}" >"$work/purge.log" 2>&1; }
# Puts back the packages that were here before the test (none: nothing to do), as they were.
restore() {
  [ -d "$saved" ] || return 0
  if ! "${SUDO[@]}" dpkg -i "$saved"/*.deb >"$work/restore.log" 2>&1; then
    cat "$work/restore.log"
    echo "FAIL: could not reinstall the tdfx packages that were installed before the test; they are in $saved"
    return 1
  fi
  local now
  now=$(dpkg-query -W -f='${Package} ${Version} ${Status}\n' "${packages[@]}" 2>/dev/null | grep ' install ok installed$' \
        | sed 's/ install ok installed$//' | sort)
  if [ "$now" != "$(sort "$saved/versions.txt")" ]; then
    echo "FAIL: after reinstalling, the tdfx packages are: ${now:-none}; before the test: $(cat "$saved/versions.txt")"
    return 1
  fi
  echo "reinstalled the packages that were here before the test: $(tr '\n' ' ' <"$saved/versions.txt")"
  "${SUDO[@]}" rm -rf "$saved"
}
if [ "$can_install" = yes ]; then
  installed=()
  for p in "${packages[@]}"; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | has "install ok installed"; then installed+=("$p"); fi
  done
  if [ ${#installed[@]} -gt 0 ] && [ ! -e "$marker" ] && [ ! -d "$saved" ]; then
    # Someone else's: saved as .debs (their files and maintainer scripts as installed), to be put back.
    echo "NOTE: ${installed[*]} already installed here, not by this test: saving them with dpkg-repack to reinstall after"
    command -v dpkg-repack >/dev/null || fail "dpkg-repack is needed to save ${installed[*]} (packaging/install-deps.sh installs it)"
    "${SUDO[@]}" rm -rf "$saved.part" && mkdir -p "$saved.part"
    (cd "$saved.part" && "${SUDO[@]}" dpkg-repack --tag=none "${installed[@]}") >"$work/repack.log" 2>&1 \
      || { cat "$work/repack.log"; fail "dpkg-repack ${installed[*]}"; }
    dpkg-query -W -f='${Package} ${Version}\n' "${installed[@]}" >"$saved.part/versions.txt"
    mv "$saved.part" "$saved"
  fi
  trap 'restore || true' EXIT
  [ ${#installed[@]} -eq 0 ] || purge || { cat "$work/purge.log"; fail "purging the installed tdfx packages"; }
  rm -f "$marker"
fi

# 1. Build and lint (done by the build stage already when reused).
if [ "$reuse" = no ]; then
  (cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack"; }
fi
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
arch=$(dpkg --print-architecture)
libdir=usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)
declare -A deb
for p in "${packages[@]}"; do
  a=$arch
  [ "$p" = python3-tdfx-export ] && a=all
  deb[$p]=$work/out/${p}_${version}_${a}.deb
  [ -f "${deb[$p]}" ] || fail "no ${deb[$p]} (cpack wrote: $(ls "$work/out"))"
done
echo "packages: $(cd "$work/out" && ls ./*.deb | tr '\n' ' ')"
if [ "$reuse" = yes ]; then
  echo "built and checked by package.deb_build (steps 1 and 2)"
else
rc=0
lintian --fail-on error,warning --info "${deb[@]}" >"$work/lintian.txt" 2>&1 || rc=$?
grep -v '^running with root privileges' "$work/lintian.txt" || true
if grep -q '^[EW]: ' "$work/lintian.txt"; then fail "lintian reports errors or warnings (above)"; fi
[ "$rc" -eq 0 ] || fail "lintian failed (exit $rc)"
echo "lintian: no E: or W: tags"

# 2. Metadata and contents.
field() { dpkg-deb -f "${deb[$1]}" "$2"; }
has_dep() {  # has_dep PACKAGE DEPENDENCY...
  local p=$1 depends
  shift
  depends=$(field "$p" Depends)
  for want in "$@"; do
    [[ ", $depends," == *", $want"[\ ,]* ]] || fail "$p: Depends lacks $want ($depends)"
  done
}
has_dep libtdfx-core0 libtorch1.13 libgvc6 libcgraph6 libmd0 libseccomp2
has_dep libtdfx-dev "libtdfx-core0 (= $version)" libtorch-dev
has_dep tdfx "libtdfx-core0 (= $version)" libqt6widgets6 libqt6gui6 libqt6core6
has_dep tdfx-cli "libtdfx-core0 (= $version)" libtorch1.13
has_dep python3-tdfx-export python3:any python3-torch "tdfx-cli (= $version)"
for p in tdfx tdfx-cli python3-tdfx-export libtdfx-dev; do
  depends=$(field "$p" Depends)
  [[ "$depends" != *libssl* ]] || fail "$p depends on OpenSSL"
done
[[ "$(field libtdfx-core0 Depends)" != *libqt6* ]] || fail "libtdfx-core0 depends on Qt"
[ "$(field libtdfx-core0 Multi-Arch)" = same ] || fail "libtdfx-core0 is not Multi-Arch: same"
[ -z "$(field tdfx Homepage)" ] || fail "a Homepage that does not exist"
[ "$(field tdfx Maintainer)" = "tdfx maintainers <maintainers@tdfx.invalid>" ] || fail "Maintainer: $(field tdfx Maintainer)"
control=$work/control-core
dpkg-deb --control "${deb[libtdfx-core0]}" "$control"
grep -qx "activate-noawait ldconfig" "$control/triggers" || fail "libtdfx-core0 has no ldconfig trigger"
grep -qx "libtdfx-core 0 libtdfx-core0 (= $version)" "$control/shlibs" || fail "libtdfx-core0's shlibs: $(cat "$control/shlibs")"
for script in preinst postinst prerm postrm; do
  [ ! -e "$control/$script" ] || fail "libtdfx-core0 has a $script"
done

contents() { dpkg-deb -c "${deb[$1]}" | awk '{ print substr($6, 2) }'; }
expect_files() {  # expect_files PACKAGE FILE...: the package holds each FILE (and no other's)
  local p=$1 list
  shift
  list=$(contents "$p")
  for f in "$@"; do grep -qx "$f" <<<"$list" || fail "$p lacks $f"; done
}
expect_files libtdfx-core0 "/$libdir/libtdfx-core.so.$version" "/$libdir/libtdfx-core.so.0" \
  /usr/share/doc/libtdfx-core0/copyright /usr/share/doc/libtdfx-core0/changelog.gz
expect_files libtdfx-dev "/$libdir/libtdfx-core.so" /usr/include/tdfx/runtime/graph_module.h \
  "/$libdir/cmake/tdfx/tdfxConfig.cmake" "/$libdir/cmake/tdfx/tdfxTargets.cmake"
expect_files tdfx /usr/bin/tdfx /usr/share/applications/io.github.tdfx.Tdfx.desktop \
  /usr/share/icons/hicolor/scalable/apps/io.github.tdfx.Tdfx.svg /usr/share/mime/packages/io.github.tdfx.Tdfx.xml \
  /usr/share/metainfo/io.github.tdfx.Tdfx.metainfo.xml /usr/share/man/man1/tdfx.1.gz \
  /usr/share/tdfx/examples/seed_sequential.pt
expect_files tdfx-cli /usr/bin/tdfx-cli /usr/share/man/man1/tdfx-cli.1.gz
expect_files python3-tdfx-export /usr/bin/tdfx-export /usr/lib/python3/dist-packages/tdfx_export.py \
  /usr/lib/python3/dist-packages/tdfx.py /usr/lib/python3/dist-packages/tdfx_saved.py \
  /usr/lib/python3/dist-packages/tdfx_server.py "/usr/share/tdfx/python/tdfx-$version-py3-none-any.whl" \
  /usr/share/man/man1/tdfx-export.1.gz
! contents libtdfx-core0 | has '\.so$' || fail "libtdfx-core0 holds the unversioned .so link"
! contents libtdfx-core0 | has '^/usr/\(bin\|include\|share/tdfx\)' || fail "libtdfx-core0 holds more than the library"

root=$work/root
for p in "${packages[@]}"; do dpkg -x "${deb[$p]}" "$root"; done
appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.tdfx.Tdfx.metainfo.xml"
desktop-file-validate "$root/usr/share/applications/io.github.tdfx.Tdfx.desktop"
zcat "$root/usr/share/man/man1/tdfx-cli.1.gz" | has -F 'expand\-all' || fail "man page lacks --expand-all"
for bin in "$root/usr/bin/tdfx" "$root/usr/bin/tdfx-cli" "$root/$libdir/libtdfx-core.so.$version"; do
  if readelf -d "$bin" | has 'RPATH\|RUNPATH'; then fail "$bin has a custom library search path"; fi
done

fi  # steps 1 and 2
if [ "$stage" = build ]; then
  touch "$work/built.ok"
  echo "deb packages built and checked (steps 1 and 2); package.deb installs them"
  exit 0
fi

# 3. Install into this machine.
[ "$can_install" = yes ] || { echo "SKIP: installing needs root or password-less sudo; packages built and linted only"; exit 77; }
touch "$marker"
trap 'purge || true; rm -f "$marker"; restore || true' EXIT
"${SUDO[@]}" dpkg -i "${deb[@]}" >"$work/install.log" 2>&1 || { cat "$work/install.log"; fail "dpkg -i"; }
for p in "${packages[@]}"; do dpkg -L "$p"; done | sort -u >"$work/listed.txt"

ldconfig -p | has "libtdfx-core.so.0 .*=> .*/libtdfx-core.so.0$" || fail "the ldconfig trigger did not run"
/usr/bin/tdfx-cli --version | tee "$work/version.txt"
grep -q "^tdfx-cli $version" "$work/version.txt" || fail "tdfx-cli --version"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ldd /usr/bin/tdfx-cli | has -E "libtdfx-core.so.0 => (/usr)?/lib/$multiarch/libtdfx-core.so.0 " \
  || fail "tdfx-cli loads another libtdfx-core: $(ldd /usr/bin/tdfx-cli | grep tdfx)"
example=/usr/share/tdfx/examples/seed_sequential.pt
/usr/bin/tdfx-cli trace "$example" >"$work/trace.txt"
diff -u "$expected" "$work/trace.txt"
echo "installed tdfx-cli trace: OK"

# A C++ project against the installed libtdfx-dev (found in the multiarch folder, no prefix given).
cmake -S "$here/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$work/consumer-configure.log" 2>&1 \
  || { cat "$work/consumer-configure.log"; fail "configuring the consumer against libtdfx-dev"; }
grep -q "^tdfx_DIR:PATH=/$libdir/cmake/tdfx$" "$work/consumer/CMakeCache.txt" || fail "the consumer found another tdfx"
cmake --build "$work/consumer" >"$work/consumer-build.log" 2>&1 || { cat "$work/consumer-build.log"; fail "building the consumer"; }
"$work/consumer/consumer" "$example" >"$work/consumer.txt"
grep -q "PASSED: traced outputs match eager outputs" "$work/consumer.txt" || { cat "$work/consumer.txt"; fail "consumer run"; }
graph() { sed -n '/^graph():/,/^$/p' "$1" | sed '$d'; }
[ "$(graph "$work/consumer.txt")" = "$(graph "$expected")" ] || fail "the consumer's graph differs from $expected"
echo "consumer of libtdfx-dev: OK"

# Debian's python3 (PATH may name another interpreter, without torch).
(cd / && /usr/bin/python3 -m tdfx_export --help) | has "usage: tdfx-export" || fail "python3 -m tdfx_export --help"
/usr/bin/tdfx-export --help | has "usage: tdfx-export" || fail "tdfx-export --help"
echo "python3 -m tdfx_export: OK"

bash "$source_dir/tests/app/gui_smoke_test.sh" /usr/bin/tdfx "$work/gui" "$example"

# 4. Remove, and check that nothing is left.
trap 'restore || true' EXIT
purge || { cat "$work/purge.log"; fail "dpkg --purge"; }
rm -f "$marker"
for p in "${packages[@]}"; do
  ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | has "installed" || fail "$p is still installed"
done
# Every path dpkg -L listed is gone, unless another package lists it too (/usr/share/man/man1, ...).
left=()
while read -r path; do
  [ "$path" != /. ] || continue  # dpkg -L's first line, the root
  if { [ -e "$path" ] || [ -L "$path" ]; } && ! dpkg -S "$path" >/dev/null 2>&1; then left+=("$path"); fi
done <"$work/listed.txt"
# Python's byte code, written where the module was run: the prerm cleans it (py3clean), as dh_python3's would.
while read -r pyc; do left+=("$pyc"); done < <(find /usr/lib/python3/dist-packages/__pycache__ -name 'tdfx*' 2>/dev/null)
[ ${#left[@]} -eq 0 ] || fail "left behind after purge: ${left[*]}"
ldconfig -p | has "libtdfx-core" && fail "the loader cache still names libtdfx-core after purge"
trap - EXIT
restore || exit 1
echo "deb packages: OK ($(du -ch "${deb[@]}" | tail -1 | cut -f1) in all)"
