# Sourced by run-tests.sh and run-example.sh: compile through ccache when it is installed, so that a
# build of a nearby commit (a second clone on the same machine, as CI makes one per submission)
# compiles only what changed. Sets TDFX_CCACHE_ARGS for cmake's configure line ("" without ccache).
#
# - The cache is the user's own (~/.cache/ccache), bounded in size.
# - base_dir is the checkout, and the compile folder is not hashed: a clone in another folder hits
#   (paths under it reach the compiler relative; debug info names them relative too).
# - The precompiled headers: ccache caches a compile that includes one when the header comes by
#   -include (as CMake's target_precompile_headers does) and pch_defines,time_macros are sloppy.
#   include_file_mtime/ctime: a fresh clone's files are all new; their content is what is hashed.
TDFX_CCACHE_ARGS=""
if command -v ccache >/dev/null 2>&1 && [ "${TDFX_NO_CCACHE:-0}" != 1 ]; then
  export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}"
  export CCACHE_BASEDIR="$PWD"
  export CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
  export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
  TDFX_CCACHE_ARGS="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
fi
