// GPU check of the training kernels without the full library (session workaround: the
// 2-core builder could not finish the CUDA library in time). CUDA launchers vs the CPU
// backend's implementations on the same inputs, then timings.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/training_families.hpp"
#include "cuda/training/training_kernels.cuh"
#include "ferrite/half.hpp"

using namespace ferrite;

static int g_fail = 0, g_pass = 0;
static bool g_small = false;  // memcheck runs: no case above 2e5 elements
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); std::exit(2); } } while (0)

Buffer hbuf(DType d, std::int64_t n, std::int64_t off = 0) {
  const std::size_t bytes = (n + off) * dtype_size(d) + 64;
  void* p = std::malloc(bytes);
  std::memset(p, 0, bytes);
  return Buffer(std::make_shared<Storage>(p, bytes, Device::cpu(), [](void* q, std::size_t) { std::free(q); }), d, n, off);
}
Buffer dbuf(DType d, std::int64_t n, std::int64_t off = 0) {
  const std::size_t bytes = (n + off) * dtype_size(d) + 64;
  void* p = nullptr;
  CK(cudaMalloc(&p, bytes));
  CK(cudaMemset(p, 0xFF, bytes));
  return Buffer(std::make_shared<Storage>(p, bytes, Device::cuda(0), [](void* q, std::size_t) { cudaFree(q); }), d, n, off);
}
void up(const Buffer& h, const Buffer& d) { CK(cudaMemcpy(d.data(), h.data(), h.nbytes(), cudaMemcpyHostToDevice)); }
Buffer down(const Buffer& d) {
  Buffer h = hbuf(d.dtype(), d.numel());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), d.data(), d.nbytes(), cudaMemcpyDeviceToHost));
  return h;
}
Buffer to_dev(const Buffer& h, std::int64_t off = 0) { Buffer d = dbuf(h.dtype(), h.numel(), off); up(h, d); return d; }
Buffer copy_host(const Buffer& h) { Buffer c = hbuf(h.dtype(), h.numel()); std::memcpy(c.data(), h.data(), h.nbytes()); return c; }

double get(const Buffer& b, std::int64_t i) {
  switch (b.dtype()) {
    case DType::F32: return b.data_as<float>()[i];
    case DType::F64: return b.data_as<double>()[i];
    case DType::F16: return static_cast<float>(b.data_as<Half>()[i]);
    case DType::BF16: return static_cast<float>(b.data_as<BFloat16>()[i]);
    case DType::I32: return b.data_as<std::int32_t>()[i];
    case DType::I64: return static_cast<double>(b.data_as<std::int64_t>()[i]);
    case DType::Bool: return b.data_as<bool>()[i];
    default: return 0;
  }
}
Buffer random_host(DType d, std::int64_t n, std::mt19937_64& rng, double lo, double hi) {
  Buffer h = hbuf(d, n);
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = u(rng);
    switch (d) {
      case DType::F32: h.data_as<float>()[i] = static_cast<float>(v); break;
      case DType::F64: h.data_as<double>()[i] = v; break;
      case DType::F16: h.data_as<Half>()[i] = Half(static_cast<float>(v)); break;
      case DType::BF16: h.data_as<BFloat16>()[i] = BFloat16(static_cast<float>(v)); break;
      default: break;
    }
  }
  return h;
}

void check_exact(const std::string& what, const Buffer& cpu, const Buffer& gpu_dev) {
  Buffer g = down(gpu_dev);
  if (std::memcmp(cpu.data(), g.data(), cpu.nbytes()) == 0) { ++g_pass; return; }
  std::int64_t i = 0;
  while (i < cpu.numel() && get(cpu, i) == get(g, i)) ++i;
  std::printf("FAIL exact %s: element %lld cpu %.17g gpu %.17g\n", what.c_str(), (long long)i, get(cpu, i), get(g, i));
  ++g_fail;
}
// dbuf's bytes outside the buffer's elements (memset to 0xFF) must be untouched.
void check_guard(const std::string& what, const Buffer& gpu_dev, std::int64_t off) {
  const std::size_t size = dtype_size(gpu_dev.dtype()), bytes = (gpu_dev.numel() + off) * size + 64;
  std::vector<unsigned char> all(bytes);
  CK(cudaMemcpy(all.data(), static_cast<const unsigned char*>(gpu_dev.data()) - off * size, bytes, cudaMemcpyDeviceToHost));
  for (std::size_t b = 0; b < bytes; ++b) {
    const bool inside = b >= off * size && b < (off + gpu_dev.numel()) * size;
    if (!inside && all[b] != 0xFF) {
      std::printf("FAIL guard %s: byte %zu written\n", what.c_str(), b);
      ++g_fail;
      return;
    }
  }
  ++g_pass;
}
void check_close(const std::string& what, const Buffer& cpu, const Buffer& gpu_dev, double rtol, double atol) {
  Buffer g = down(gpu_dev);
  double worst = 0;
  for (std::int64_t i = 0; i < cpu.numel(); ++i) {
    const double a = get(cpu, i), b = get(g, i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) { std::printf("FAIL nan %s at %lld: %g %g\n", what.c_str(), (long long)i, a, b); ++g_fail; return; }
      continue;
    }
    const double err = std::fabs(a - b) - atol - rtol * std::fabs(a);
    if (err > 0) { std::printf("FAIL close %s at %lld: cpu %.9g gpu %.9g\n", what.c_str(), (long long)i, a, b); ++g_fail; return; }
    worst = std::max(worst, std::fabs(a - b) / (std::fabs(a) + 1e-30));
  }
  ++g_pass;
}

const DType kF[] = {DType::F32, DType::F64, DType::F16, DType::BF16};

void test_random(std::mt19937_64& rng) {
  auto ops = cpu::make_cpu_random_ops();
  // (3 << 22) + 5: several waves of the fast kernel's grid; offset 4 keeps F32 on the 16-byte
  // grid (the fast kernel at a nonzero start), 1 leaves it (the generic kernel).
  for (std::int64_t n : {1LL, 3LL, 7LL, 1001LL, 100003LL, 1LL << 22, (3LL << 22) + 5})
    for (std::int64_t off : {0LL, 1LL, 4LL}) {
      if (g_small && n > 200000) continue;
      for (DType d : kF)
        for (int form = 0; form < 5; ++form) {
          // Uniform and Normal with (a, b) = (-1.5, 2.5), then with (0, 1) (rand's and randn's
          // unit forms, their own fast kernels), then Bernoulli.
          const RandomKind k = form == 4 ? RandomKind::Bernoulli : form % 2 ? RandomKind::Normal : RandomKind::Uniform;
          const bool unit = form == 2 || form == 3;
          RandomDesc desc{k, 0xDEADBEEFCAFEull + n, 0xFFFFFFFFull + off, k == RandomKind::Bernoulli ? 0.3 : -1.5, 2.5};
          if (unit) desc.a = 0, desc.b = 1;
          Buffer h = hbuf(d, n);
          ops->fill(desc, h, Buffer());
          Buffer g = dbuf(d, n, off);
          cuda::training::random_fill(desc, g, Buffer(), 0);
          check_exact(std::string("fill ") + std::string(dtype_name(d)) + " kind " + std::to_string(int(desc.kind)) +
                          (unit ? " unit" : "") + " n " + std::to_string(n) + " off " + std::to_string(off), h, g);
          check_guard("fill", g, off);
          if (k == RandomKind::Bernoulli) {
            Buffer probs = random_host(d, n, rng, 0, 1);
            Buffer h2 = hbuf(d, n);
            ops->fill(desc, h2, probs);
            Buffer g2 = dbuf(d, n, off);
            cuda::training::random_fill(desc, g2, to_dev(probs, off), 0);
            check_exact(std::string("bernoulli probs ") + std::string(dtype_name(d)), h2, g2);
          }
        }
      for (DType d : {DType::I32, DType::I64}) {
        RandomDesc desc{RandomKind::Integer, 77, 5 + off, 0, 1, -1000, 123457};
        Buffer h = hbuf(d, n);
        ops->fill(desc, h, Buffer());
        Buffer g = dbuf(d, n, off);
        cuda::training::random_fill(desc, g, Buffer(), 0);
        check_exact(std::string("randint ") + std::string(dtype_name(d)), h, g);
      }
    }
}

void test_dropout(std::mt19937_64& rng) {
  auto ops = cpu::make_cpu_random_ops();
  for (std::int64_t n : {1LL, 5LL, 100003LL, 1LL << 22})
    for (std::int64_t off : {0LL, 1LL})
      for (DType d : kF)
        for (double p : {0.0, 0.1, 0.5, 1.0}) {
          if (g_small && n > 200000) continue;
          DropoutDesc desc{1234, 99 + off, static_cast<std::uint32_t>(std::ceil(p * 16777216.0)), p >= 1 ? 0 : 1 / (1 - p)};
          Buffer x = random_host(d, n, rng, -3, 3);
          if (n > 3) x.data_as<std::uint8_t>()[0] = 0xFF, x.data_as<std::uint8_t>()[1] = 0xFF;  // a NaN-ish pattern
          Buffer ho = hbuf(d, n), hm = hbuf(DType::Bool, n);
          ops->dropout(desc, x, ho, hm);
          Buffer go = dbuf(d, n, off), gm = dbuf(DType::Bool, n, off);
          cuda::training::dropout(desc, to_dev(x, off), go, gm, 0);
          check_exact(std::string("dropout out ") + std::string(dtype_name(d)), ho, go);
          check_exact(std::string("dropout mask ") + std::string(dtype_name(d)), hm, gm);
          Buffer gr = random_host(d, n, rng, -1, 1);
          Buffer hb = hbuf(d, n);
          ops->dropout_backward(gr, hm, desc.scale, hb);
          Buffer gb = dbuf(d, n, off);
          cuda::training::dropout_backward(to_dev(gr, off), to_dev(hm, off), desc.scale, gb, 0);
          check_exact(std::string("dropout backward ") + std::string(dtype_name(d)), hb, gb);
        }
}

void test_optim(std::mt19937_64& rng) {
  auto ops = cpu::make_cpu_training_ops();
  for (DType d : {DType::F32, DType::BF16, DType::F16})
    for (int variant = 0; variant < 8; ++variant) {
      OptimizerDesc desc;
      desc.kind = variant < 5 ? (variant % 2 ? OptimizerKind::AdamW : OptimizerKind::Adam) : OptimizerKind::Sgd;
      desc.amsgrad = variant == 2;
      desc.maximize = variant == 3;
      desc.lr = 0.01; desc.beta1 = 0.9; desc.beta2 = 0.99; desc.eps = 1e-6; desc.weight_decay = 0.05;
      desc.step_size = 0.01 / (1 - 0.9 * 0.9); desc.inv_bc2_sqrt = 1 / std::sqrt(1 - 0.99 * 0.99);
      desc.momentum = 0.9; desc.dampening = variant == 6 ? 0 : 0.1; desc.nesterov = variant == 6; desc.first_step = variant == 7;
      const bool master = variant == 4 && d != DType::F32;
      const int count = variant == 1 ? 300 : 5;  // 300: two launches
      std::vector<OptimizerTensor> ht, gt;
      std::vector<Buffer> hp, gp;
      for (int t = 0; t < count; ++t) {
        const std::int64_t n = variant == 1 ? 1 + t * 13 : std::vector<std::int64_t>{1, 0, 37, 1003, 300001}[t];
        OptimizerTensor h, g;
        h.param = random_host(d, n, rng, -2, 2); g.param = to_dev(h.param, t % 2);
        h.grad = random_host(d, n, rng, -1, 1); g.grad = to_dev(h.grad, 0);
        h.state0 = random_host(DType::F32, n, rng, -0.1, 0.1); g.state0 = to_dev(h.state0, 1);
        if (desc.kind != OptimizerKind::Sgd) {
          h.state1 = random_host(DType::F32, n, rng, 0, 0.1); g.state1 = to_dev(h.state1);
          if (desc.amsgrad) { h.state2 = random_host(DType::F32, n, rng, 0, 0.1); g.state2 = to_dev(h.state2); }
        }
        if (master) { h.master = random_host(DType::F32, n, rng, -2, 2); g.master = to_dev(h.master); }
        ht.push_back(h); gt.push_back(g);
      }
      for (int fi = 0; fi < 3; ++fi) {
        // fi 0: no flag; 1: F32 flag 0; 2: Bool flag true (skip)
        std::vector<OptimizerTensor> hc = ht, gc = gt;
        for (std::size_t t = 0; t < hc.size(); ++t) {
          hc[t].param = copy_host(ht[t].param); hc[t].state0 = copy_host(ht[t].state0);
          if (ht[t].state1.numel() || desc.kind != OptimizerKind::Sgd) hc[t].state1 = copy_host(ht[t].state1);
          if (desc.amsgrad) hc[t].state2 = copy_host(ht[t].state2);
          if (master) hc[t].master = copy_host(ht[t].master);
          gc[t].param = to_dev(ht[t].param, t % 2); gc[t].state0 = to_dev(ht[t].state0, 1);
          if (desc.kind != OptimizerKind::Sgd) gc[t].state1 = to_dev(ht[t].state1);
          if (desc.amsgrad) gc[t].state2 = to_dev(ht[t].state2);
          if (master) gc[t].master = to_dev(ht[t].master);
        }
        Buffer hf, gf;
        if (fi == 1) { hf = hbuf(DType::F32, 1); gf = to_dev(hf); }
        if (fi == 2) { hf = hbuf(DType::Bool, 1); hf.data_as<bool>()[0] = true; gf = to_dev(hf); }
        ops->optimizer_step(desc, hc, hf);
        cuda::training::optimizer_step(desc, gc, gf, 0);
        for (std::size_t t = 0; t < hc.size(); ++t) {
          const std::string w = std::string("optim ") + std::string(dtype_name(d)) + " v" + std::to_string(variant) + " f" + std::to_string(fi) + " t" + std::to_string(t);
          check_exact(w + " param", hc[t].param, gc[t].param);
          check_exact(w + " s0", hc[t].state0, gc[t].state0);
          if (desc.kind != OptimizerKind::Sgd) check_exact(w + " s1", hc[t].state1, gc[t].state1);
          if (desc.amsgrad) check_exact(w + " s2", hc[t].state2, gc[t].state2);
          if (master) check_exact(w + " master", hc[t].master, gc[t].master);
        }
      }
    }
}

void test_ce(std::mt19937_64& rng) {
  auto ops = cpu::make_cpu_training_ops();
  struct S { std::int64_t r, c; };
  for (DType d : kF)
    for (S s : {S{7, 13}, S{3, 1}, S{64, 1000}, S{3, 50303}, S{128, 50304}})
      for (double eps : {0.0, 0.1}) {
        if (g_small && s.r * s.c > 200000) continue;
        CrossEntropyDesc desc{s.r, s.c, -100, eps};
        Buffer x = random_host(d, s.r * s.c, rng, -6, 6);
        if (s.r > 2 && s.c > 3) {  // a NaN in row 1
          if (d == DType::F32) x.data_as<float>()[s.c + 2] = NAN;
          if (d == DType::F64) x.data_as<double>()[s.c + 2] = NAN;
        }
        Buffer t = hbuf(DType::I64, s.r);
        for (std::int64_t r = 0; r < s.r; ++r) t.data_as<std::int64_t>()[r] = r % 3 == 2 ? -100 : static_cast<std::int64_t>(rng() % s.c);
        Buffer hl = hbuf(DType::F32, s.r), hs = hbuf(DType::F32, s.r), hc = hbuf(DType::F32, s.r);
        ops->cross_entropy_forward(desc, x, t, hl, hs, hc);
        Buffer gx = to_dev(x), gtg = to_dev(t);
        Buffer gl = dbuf(DType::F32, s.r), gs = dbuf(DType::F32, s.r), gcn = dbuf(DType::F32, s.r);
        cuda::training::cross_entropy_forward(desc, gx, gtg, gl, gs, gcn, 0);
        const std::string w = std::string("ce ") + std::string(dtype_name(d)) + " " + std::to_string(s.r) + "x" + std::to_string(s.c);
        check_close(w + " loss", hl, gl, 2e-5, 2e-5);
        check_close(w + " lse", hs, gs, 2e-5, 2e-5);
        check_exact(w + " counted", hc, gcn);
        Buffer g = hbuf(DType::F32, 1); g.data_as<float>()[0] = 0.75f;
        Buffer div = hbuf(DType::F32, 1); div.data_as<float>()[0] = 5.f;
        Buffer hg = hbuf(d, s.r * s.c);
        ops->cross_entropy_backward(desc, g, div, x, t, hs, hg);
        Buffer gg = dbuf(d, s.r * s.c);
        cuda::training::cross_entropy_backward(desc, to_dev(g), to_dev(div), gx, gtg, to_dev(hs), gg, 0);
        const double tol = d == DType::BF16 ? 1.6e-2 : d == DType::F16 ? 2e-3 : 2e-5;
        check_close(w + " grad", hg, gg, tol, 1e-6);
      }
}

template <class F>
double time_ms(F f, int reps = 20) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  f(); f();
  std::vector<float> ms;
  for (int i = 0; i < reps; ++i) {
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float m; cudaEventElapsedTime(&m, a, b); ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void bench() {
  const std::int64_t n = 1LL << 28;
  Buffer x = dbuf(DType::F32, n), o = dbuf(DType::F32, n), m = dbuf(DType::Bool, n);
  CK(cudaMemset(x.data(), 0x3F, n * 4));
  DropoutDesc dd{1, 2, static_cast<std::uint32_t>(std::ceil(0.1 * 16777216.0)), 1 / 0.9};
  double t = time_ms([&] { cuda::training::dropout(dd, x, o, m, 0); });
  std::printf("BENCH dropout_f32 %.4f ms %.0f GB/s\n", t, 9.0 * n / t / 1e6);
  RandomDesc u{RandomKind::Uniform, 1, 2, 0, 1};
  t = time_ms([&] { cuda::training::random_fill(u, o, Buffer(), 0); });
  std::printf("BENCH rand_f32 %.4f ms %.0f GB/s\n", t, 4.0 * n / t / 1e6);
  RandomDesc nd{RandomKind::Normal, 1, 2, 0, 1};
  t = time_ms([&] { cuda::training::random_fill(nd, o, Buffer(), 0); });
  std::printf("BENCH randn_f32 %.4f ms %.0f GB/s\n", t, 4.0 * n / t / 1e6);
  Buffer ob = dbuf(DType::BF16, n);
  t = time_ms([&] { cuda::training::random_fill(nd, ob, Buffer(), 0); });
  std::printf("BENCH randn_bf16 %.4f ms %.0f GB/s\n", t, 2.0 * n / t / 1e6);
  x = Buffer(); o = Buffer(); m = Buffer(); ob = Buffer();
  // AdamW 64M params in 100 tensors.
  const std::int64_t total = 1LL << 26;
  std::vector<OptimizerTensor> ts;
  std::int64_t left = total;
  for (int i = 0; i < 100; ++i) {
    const std::int64_t k = i == 99 ? left : total / 100 + (i % 2 == 0 ? total / 16384 : -total / 16384);
    left -= k;
    OptimizerTensor ot;
    ot.param = dbuf(DType::F32, k); ot.grad = dbuf(DType::F32, k); ot.state0 = dbuf(DType::F32, k); ot.state1 = dbuf(DType::F32, k);
    CK(cudaMemset(ot.param.data(), 0x3F, k * 4)); CK(cudaMemset(ot.grad.data(), 0x3C, k * 4));
    CK(cudaMemset(ot.state0.data(), 0, k * 4)); CK(cudaMemset(ot.state1.data(), 0, k * 4));
    ts.push_back(ot);
  }
  OptimizerDesc od; od.kind = OptimizerKind::AdamW; od.lr = 1e-3; od.beta1 = 0.9; od.beta2 = 0.999; od.eps = 1e-8;
  od.weight_decay = 1e-2; od.step_size = 1e-3 / 0.1; od.inv_bc2_sqrt = 1 / std::sqrt(0.001);
  t = time_ms([&] { cuda::training::optimizer_step(od, ts, Buffer(), 0); });
  std::printf("BENCH adamw_f32 %.4f ms %.0f GB/s\n", t, 28.0 * total / t / 1e6);
  ts.clear();
  // Cross-entropy BF16 [16384, 50304] forward + backward kernels.
  const std::int64_t R = 16384, C = 50304;
  Buffer lx = dbuf(DType::BF16, R * C), lt = dbuf(DType::I64, R), ll = dbuf(DType::F32, R), ls = dbuf(DType::F32, R),
         lc = dbuf(DType::F32, R), lg = dbuf(DType::BF16, R * C), g1 = dbuf(DType::F32, 1), dv = dbuf(DType::F32, 1);
  CK(cudaMemset(lx.data(), 0x3F, R * C * 2)); CK(cudaMemset(lt.data(), 0, R * 8));
  float one = 1.f, rows = static_cast<float>(R);
  CK(cudaMemcpy(g1.data(), &one, 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dv.data(), &rows, 4, cudaMemcpyHostToDevice));
  CrossEntropyDesc cd{R, C, -100, 0};
  const double tf = time_ms([&] { cuda::training::cross_entropy_forward(cd, lx, lt, ll, ls, lc, 0); });
  const double tb = time_ms([&] { cuda::training::cross_entropy_backward(cd, g1, dv, lx, lt, ls, lg, 0); });
  t = time_ms([&] { cuda::training::cross_entropy_forward(cd, lx, lt, ll, ls, lc, 0); cuda::training::cross_entropy_backward(cd, g1, dv, lx, lt, ls, lg, 0); });
  std::printf("BENCH cross_entropy_bf16 fwd %.4f ms (%.0f GB/s) bwd %.4f ms (%.0f GB/s) fwd+bwd %.4f ms %.0f GB/s\n", tf,
              2.0 * R * C / tf / 1e6, tb, 4.0 * R * C / tb / 1e6, t, 6.0 * R * C / t / 1e6);
}

int main(int argc, char** argv) {
  std::mt19937_64 rng(0);
  const bool quick = argc > 1 && std::string(argv[1]) == "quick";
  g_small = quick;
  test_random(rng); std::printf("random done: %d pass %d fail\n", g_pass, g_fail);
  test_dropout(rng); std::printf("dropout done: %d pass %d fail\n", g_pass, g_fail);
  test_optim(rng); std::printf("optim done: %d pass %d fail\n", g_pass, g_fail);
  test_ce(rng); std::printf("ce done: %d pass %d fail\n", g_pass, g_fail);
  CK(cudaDeviceSynchronize());
  if (!quick) bench();
  std::printf("RESULT %d pass %d fail\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
