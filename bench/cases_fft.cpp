// Benchmark cases of the FFT family (issue #14): the shapes, each reporting the
// bandwidth of one read of the input and one write of the output (an FFT of these sizes is
// memory bound on an H200: cuFFT's single-pass kernels touch each element about once).
#include "bench/bench_case.hpp"

namespace ferrite::bench {
namespace {

std::string dims_text(const Shape& s) { return shape_str(s); }

void fft_cases(const BenchContext& ctx, std::vector<BenchCase>& cases) {
  const bool full = ctx.full_size();
  const std::int64_t rows = full ? 16384 : 64, len = full ? 4096 : 256, square = full ? 4096 : 128;
  const std::int64_t cube = full ? 256 : 16, prime = full ? 4099 : 257;
  auto complex_of = [&](Shape s, unsigned seed) { return ctx.hold(ctx.random(s, DType::F32, seed)->to(DType::C64)); };

  auto c2c = complex_of({rows, len}, 31);
  const double c2c_bytes = 2.0 * static_cast<double>(rows * len) * 8;
  cases.push_back({"fft_c2c_c64", dims_text({rows, len}), c2c_bytes, [=] { (void)fft::fft(*c2c); }});

  auto real = ctx.random({rows, len}, DType::F32, 32);
  const double rfft_bytes = static_cast<double>(rows * len) * 4 + static_cast<double>(rows * (len / 2 + 1)) * 8;
  cases.push_back({"rfft_f32", dims_text({rows, len}), rfft_bytes, [=] { (void)fft::rfft(*real); }});

  auto grid = complex_of({square, square}, 33);
  const double grid_bytes = 2.0 * static_cast<double>(square * square) * 8;
  cases.push_back({"fft2_c64", dims_text({square, square}), grid_bytes, [=] { (void)fft::fft2(*grid); }});

  auto vol = complex_of({cube, cube, cube}, 34);
  const double vol_bytes = 2.0 * static_cast<double>(cube * cube * cube) * 8;
  cases.push_back({"fftn_c64", dims_text({cube, cube, cube}), vol_bytes, [=] { (void)fft::fftn(*vol); }});

  auto primes = complex_of({square, prime}, 35);
  const double prime_bytes = 2.0 * static_cast<double>(square * prime) * 8;
  cases.push_back({"fft_prime_c64", dims_text({square, prime}), prime_bytes, [=] { (void)fft::fft(*primes); }});

  cases.push_back({"fft_dim0_c64", dims_text({square, square}) + " dim 0", grid_bytes,
                   [=] { (void)fft::fft(*grid, std::nullopt, 0); }});
}

FERRITE_BENCH_CASES("fft", fft_cases);

}  // namespace
}  // namespace ferrite::bench
