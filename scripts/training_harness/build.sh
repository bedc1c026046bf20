#!/bin/sh
# Links the training kernels' GPU check without the rest of the CUDA library (the objects
# come from a configured CUDA build dir, default build-cuda): used for the H200 numbers in
# docs/families/training.md when the full library could not be rebuilt in time.
set -e
W=$(cd "$(dirname "$0")/../.." && pwd); BUILD=${1:-$W/build-cuda}; B=$BUILD/CMakeFiles/ferrite.dir/src
ninja -C "$BUILD" CMakeFiles/ferrite.dir/src/cuda/training/random_fill.cu.o CMakeFiles/ferrite.dir/src/cuda/training/dropout.cu.o \
  CMakeFiles/ferrite.dir/src/cuda/training/optimizer.cu.o CMakeFiles/ferrite.dir/src/cuda/training/cross_entropy.cu.o \
  CMakeFiles/ferrite.dir/src/core/buffer.cpp.o CMakeFiles/ferrite.dir/src/core/error.cpp.o \
  CMakeFiles/ferrite.dir/src/cpu/training/cpu_random_ops.cpp.o CMakeFiles/ferrite.dir/src/cpu/training/cpu_training_ops.cpp.o \
  CMakeFiles/ferrite.dir/src/cuda/runtime/cuda_check.cpp.o
g++ -std=c++20 -O2 -fopenmp -I"$W/include" -I"$W/src" -I"$BUILD/generated" -I/usr/local/cuda/include \
  "$W/scripts/training_harness/training_harness.cpp" $B/cuda/training/*.cu.o $B/core/buffer.cpp.o $B/core/error.cpp.o \
  $B/cpu/training/cpu_random_ops.cpp.o $B/cpu/training/cpu_training_ops.cpp.o $B/cuda/runtime/cuda_check.cpp.o \
  -L/usr/local/cuda/lib64 -lcudart_static -ldl -lrt -lpthread -o "$BUILD/training_harness"
echo "$BUILD/training_harness  (run: training_harness [quick]; PyTorch twin: python3 scripts/training_harness/torch_training.py)"
