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
# cuDNN's header-only C++ frontend (for the graph API), when CUDA is present: the headers of the
# PyPI package nvidia-cudnn-frontend unpacked into the ignored .deps/cudnn-frontend/include.
if { [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; } && [ ! -f .deps/cudnn-frontend/include/cudnn_frontend.h ] &&
  command -v python3 >/dev/null; then
  tmp=$(mktemp -d)
  if python3 -m pip download -q --no-deps -d "$tmp" nvidia-cudnn-frontend >/dev/null 2>&1; then
    mkdir -p .deps/cudnn-frontend
    python3 - "$tmp" <<'PY' || echo "cudnn-frontend: could not unpack the package" >&2
import os, sys, tarfile, zipfile
d = sys.argv[1]
f = os.path.join(d, os.listdir(d)[0])
dest = ".deps/cudnn-frontend"
if f.endswith(".whl") or f.endswith(".zip"):
    with zipfile.ZipFile(f) as z:
        z.extractall(dest, [n for n in z.namelist() if n.startswith("include/")])
else:  # an sdist: its include/ sits under the top folder
    with tarfile.open(f) as t:
        for m in t.getmembers():
            parts = m.name.split("/", 1)
            if len(parts) == 2 and parts[1].startswith("include/") and m.isfile():
                m.name = parts[1]
                t.extract(m, dest)
PY
  else
    echo "cudnn-frontend: pip download failed; cuDNN-backed paths will be Unsupported" >&2
  fi
  rm -rf "$tmp"
fi
# cuSPARSELt's header (2:4 structured sparsity), when CUDA is present: only the include/ folder of
# the PyPI wheel nvidia-cusparselt-cu13, unpacked into the ignored .deps/cusparselt/include. The
# library itself is not linked: ferrite loads libcusparseLt.so.0 at run time (install it with
# `pip install nvidia-cusparselt-cu13`, or point FERRITE_CUSPARSELT_LIB at it).
if { [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; } && [ ! -f .deps/cusparselt/include/cusparseLt.h ] &&
  command -v python3 >/dev/null; then
  tmp=$(mktemp -d)
  if python3 -m pip download -q --no-deps -d "$tmp" nvidia-cusparselt-cu13 >/dev/null 2>&1; then
    python3 - "$tmp" <<'PY' || echo "cusparselt: could not unpack the package" >&2
import os, sys, zipfile
d = sys.argv[1]
wheel = os.path.join(d, [f for f in os.listdir(d) if f.endswith(".whl")][0])
dest = ".deps/cusparselt/include"
os.makedirs(dest, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    # the headers sit in nvidia/<cu13 or cusparselt>/include/; only they are taken
    for name in z.namelist():
        parts = name.split("/")
        if len(parts) >= 2 and parts[-2] == "include" and parts[-1].endswith(".h"):
            with z.open(name) as src, open(os.path.join(dest, parts[-1]), "wb") as out:
                out.write(src.read())
if not os.path.exists(os.path.join(dest, "cusparseLt.h")):
    sys.exit("cusparseLt.h is not in " + wheel)
PY
  else
    echo "cusparselt: pip download failed; the 2:4 structured products will be Unsupported" >&2
  fi
  rm -rf "$tmp"
fi
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
