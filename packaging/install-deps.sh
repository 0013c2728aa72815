#!/usr/bin/env bash
# Installs tdfx's build and test dependencies from Debian 12 packages.
# Idempotent: when every package is already installed it only runs dpkg-query and exits.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  # a compiler cache: a rebuild of a nearby commit (CI on the same machine) compiles only what changed
  ccache
  libtorch-dev
  # Debian's LibTorch calls the system BLAS; the reference libblas makes a ViT forward ~20x slower.
  libopenblas0-pthread
  nlohmann-json3-dev libcli11-dev zlib1g-dev
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libgraphviz-dev graphviz libmd-dev libxml2-utils
  # the model worker's sandbox
  libseccomp-dev
  qt6-base-dev qt6-svg-dev libgl-dev
  python3-torch python3-torchvision
  # the FX parity suite compares --style fx DOT with FxGraphDrawer, which needs pydot
  python3-pydot
  # the Python API's notebook test: a real Jupyter kernel runs tdfx.draw
  python3-nbclient python3-nbformat python3-ipykernel
  # the wheel installed offline in a virtual environment (python.venv_wheel)
  python3-venv
  # packaging tests: cpack's DEB generator (dpkg-shlibdeps, file), the validators of the desktop
  # files, lintian, py3compile / py3clean (python3-tdfx-export's maintainer scripts), and
  # dpkg-repack (package.deb saves tdfx packages installed by someone else, to put them back after)
  dpkg-dev file appstream desktop-file-utils lintian python3-minimal dpkg-repack
  # the GUI screenshot smoke test: a virtual X server, xwininfo, ImageMagick's import
  xvfb xauth x11-utils imagemagick
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# A dpkg run that was killed part-way (a machine stopped during an install) leaves dpkg "interrupted",
# and apt-get refuses everything until it is finished: finish it first. `dpkg --audit` prints
# nothing when dpkg's database is consistent, so on a healthy machine this does nothing.
if [ -n "$(dpkg --audit 2>/dev/null)" ] || [ -n "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" ]; then
  echo "install-deps: finishing an interrupted dpkg run (dpkg --configure -a)" >&2
  $SUDO dpkg --configure -a
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
