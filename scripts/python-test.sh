#!/usr/bin/env bash
# Builds the Python package (`pip install .`) in a virtual environment and runs its tests:
#   scripts/python-test.sh [BUILD_DIR]
# With BUILD_DIR (scripts/test.sh passes its own), scikit-build-core builds in that CMake
# directory with its options plus the extension, so an already built library is reused
# instead of compiled again. The environment is BUILD_DIR/venv (reused);
# it gets nanobind, scikit-build-core, pytest and NumPy from the package index when the system
# does not have them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
mkdir -p "$BUILD"
VENV="$(cd "$BUILD" && pwd)/venv"
if [ ! -x "$VENV/bin/python" ]; then
  # System packages stay visible, so that a machine without network that has them installed
  # needs no download.
  python3 -m venv --system-site-packages "$VENV"
fi
PY="$VENV/bin/python"
missing=()
for mod in nanobind:nanobind scikit_build_core:scikit-build-core pytest:pytest numpy:numpy; do
  "$PY" -c "import ${mod%%:*}" 2>/dev/null || missing+=("${mod#*:}")
done
[ ${#missing[@]} -eq 0 ] || "$PY" -m pip install -q --disable-pip-version-check "${missing[@]}"
# --no-build-isolation: build with the environment's nanobind (a fixed path, so the CMake cache
# of $BUILD stays valid from one run to the next).
# Keep the environment: scikit-build-core clears the CMake cache of a build directory that
# another installation of it configured (then FERRITE_CUDA etc. fall back to their defaults).
# The build directory's own choices of tests, tools and examples are kept (pyproject.toml
# switches them off for a plain `pip install .`), so that nothing is reconfigured away.
defines=()
for opt in FERRITE_BUILD_TESTS FERRITE_BUILD_TOOLS FERRITE_BUILD_EXAMPLES; do
  value=$(sed -n "s/^$opt:BOOL=//p" "$BUILD/CMakeCache.txt" 2>/dev/null || true)
  [ -n "$value" ] && defines+=("-Ccmake.define.$opt=$value")
done
"$PY" -m pip install -q --disable-pip-version-check --no-build-isolation \
  -Cbuild-dir="$BUILD" ${defines[@]+"${defines[@]}"} .
# The repository root has no ferrite/ folder, so `import ferrite` is the installed package.
"$PY" -m pytest -q python/tests
