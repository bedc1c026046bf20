// `ferrite info`: what this copy of ferrite can use on this machine.
#include <cstdio>
#include <iostream>

#include "ferrite/ferrite.hpp"

namespace ferrite::tools {

int run_info() {
  std::cout << "ferrite " << FERRITE_VERSION_STRING << " (CUDA backend " << (FERRITE_WITH_CUDA ? "built" : "not built")
            << ")\n";
  std::cout << "backends:";
  for (const std::string& name : registered_backends()) std::cout << " " << name;
  std::cout << "\n";
  const cuda::LibraryVersions v = cuda::library_versions();
  std::cout << "CUDA runtime " << v.runtime << ", driver " << v.driver << ", cuBLAS " << v.cublas << ", cuDNN "
            << v.cudnn << ", NCCL " << v.nccl << "\n";
  const auto gpus = cuda::devices();
  std::cout << gpus.size() << " CUDA device(s)\n";
  for (const cuda::DeviceInfo& d : gpus) {
    std::printf("  cuda:%d  %s  compute capability %d.%d  %d SMs  %.1f GiB total, %.1f GiB free  L2 %.0f MB\n", d.index,
                d.name.c_str(), d.compute_capability_major, d.compute_capability_minor, d.multiprocessors,
                d.total_memory / 1073741824.0, d.free_memory / 1073741824.0, d.l2_cache_bytes / 1e6);
  }
  return 0;
}

}  // namespace ferrite::tools
