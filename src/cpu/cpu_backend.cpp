#include "cpu/cpu_backend.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/host_scratch.hpp"
#include "core/memory_checks.hpp"
#include "core/op_support.hpp"
#include "cpu/cpu_families.hpp"
#include "ferrite/error.hpp"

namespace ferrite::cpu {

namespace {
constexpr std::size_t kAlignment = 64;  // a cache line; also enough for any SIMD load
}

CpuBackend::CpuBackend()
    : reductions_(make_cpu_reduction_ops()), shape_ops_(make_cpu_shape_ops()), matmul_ops_(make_cpu_matmul_ops()),
      sparse_ops_(make_cpu_sparse_ops()),
      conv_ops_(make_cpu_conv_ops()),
      attention_ops_(make_cpu_attention_ops()) {}

std::shared_ptr<Storage> CpuBackend::allocate(std::size_t bytes, Device device) {
  // More than the host has can never be backed; with overcommit malloc would still succeed and
  // the memory checks' poisoning (or the op's first pass) would run into the OOM killer.
  FERRITE_CHECK(bytes <= detail::host_physical_memory_bytes(), OutOfMemory, "cpu: failed to allocate ", bytes,
                " bytes of host memory: more than the host's ", detail::host_physical_memory_bytes(),
                " bytes of physical memory");
  const bool checked = testing::memory_checks_enabled();
  const std::size_t guard = checked ? testing::kGuardBytes : 0;
  const std::size_t total = (bytes + guard + kAlignment - 1) / kAlignment * kAlignment;
  void* data = total ? std::aligned_alloc(kAlignment, total) : nullptr;
  FERRITE_CHECK(total == 0 || data != nullptr, OutOfMemory, "cpu: failed to allocate ", bytes,
                " bytes of host memory (in use: ", in_use_.load(), " bytes)");
  if (checked && data) {
    std::memset(data, testing::kPoisonByte, bytes);
    std::memset(static_cast<char*>(data) + bytes, testing::kGuardByte, guard);
  }
  const std::int64_t now = in_use_.fetch_add(static_cast<std::int64_t>(bytes)) + static_cast<std::int64_t>(bytes);
  for (std::int64_t peak = peak_.load(); now > peak && !peak_.compare_exchange_weak(peak, now);) {
  }
  allocations_.fetch_add(1);
  live_.fetch_add(1);
  return std::make_shared<Storage>(data, bytes, device, [this, checked](void* p, std::size_t n) {
    if (checked && p && !detail::guard_intact(static_cast<const std::uint8_t*>(p) + n)) detail::record_guard_violation();
    std::free(p);
    in_use_.fetch_sub(static_cast<std::int64_t>(n));
    live_.fetch_sub(1);
  });
}

MemoryStats CpuBackend::memory_stats(Device) const {
  MemoryStats stats;
  stats.in_use_bytes = in_use_.load();
  stats.peak_bytes = peak_.load();
  stats.reserved_bytes = stats.in_use_bytes;  // no cache: freed memory goes straight back
  stats.allocations = allocations_.load();
  stats.live_allocations = live_.load();
  return stats;
}

void CpuBackend::copy_from_host(const void* src, const Buffer& dst, std::size_t bytes) {
  std::memcpy(dst.data(), src, bytes);
}

void CpuBackend::copy_to_host(const Buffer& src, void* dst, std::size_t bytes) { std::memcpy(dst, src.data(), bytes); }

void CpuBackend::copy(const Buffer& src, const Buffer& dst) { std::memcpy(dst.data(), src.data(), src.nbytes()); }

bool CpuBackend::supports(Op op, DType dtype) const {
  if (op_group(op) == OpGroup::Linalg) return linalg_ops_->supports(op, dtype);
  if (op_group(op) == OpGroup::Fft) return fft_ops_->supports(op, dtype);
  return detail::backend_supports(op, dtype, *reductions_, *shape_ops_, *matmul_ops_);
}

}  // namespace ferrite::cpu
