#!/usr/bin/env bash
# Installs what building and testing ferrite needs, when it is missing: a C++20 compiler,
# CMake >= 3.25, Ninja, ccache (optional, speeds rebuilds), GoogleTest, Eigen 3 and CLI11 (headers). The CUDA toolkit
# is optional: when nvcc is at /usr/local/cuda/bin or on PATH, the CUDA backend is built.
set -euo pipefail
need=()
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v ccache >/dev/null || need+=(ccache)
[ -f /usr/src/googletest/CMakeLists.txt ] || [ -d /usr/include/gtest ] || [ -f .deps/googletest/CMakeLists.txt ] ||
  need+=(googletest libgtest-dev)
[ -f /usr/include/eigen3/Eigen/Core ] || [ -f .deps/eigen3/Eigen/Core ] || need+=(libeigen3-dev)
[ -f /usr/include/CLI/CLI.hpp ] || [ -f .deps/CLI11/include/CLI/CLI.hpp ] || need+=(libcli11-dev)
# The Python package (scripts/python-test.sh): venv/ensurepip and the Python headers.
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  2>/dev/null || need+=(python3-dev)
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && sudo=sudo
if command -v apt-get >/dev/null; then
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
else
  echo "no apt-get here: install ${need[*]} by hand" >&2
  exit 1
fi
