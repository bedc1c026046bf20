// Golden values of the random streams: digests of whole draws and a few single values,
// recorded from the CPU backend before the kernels were restructured for speed (issue 17).
// The stream is a contract (saved states replay it, CPU and GPU agree bit for bit), so any
// change of a value, however small, must fail here. The conformance suite then holds CUDA
// to the same bits.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ferrite/ferrite.hpp"
#include "ferrite/nn_training.hpp"
#include "ferrite/random.hpp"

namespace ferrite {
namespace {

// FNV-1a over the bytes: any changed bit changes the digest (with overwhelming odds).
std::uint64_t digest(const Tensor& t) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint8_t b : t.to_bytes()) {
    h ^= b;
    h *= 0x100000001b3ull;
  }
  return h;
}

// Element i's raw bits, zero-extended.
std::uint64_t bits_at(const Tensor& t, std::int64_t i) {
  const std::vector<std::uint8_t> bytes = t.to_bytes();
  const std::size_t size = bytes.size() / static_cast<std::size_t>(t.numel());
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + static_cast<std::size_t>(i) * size, size);
  return v;
}

struct Golden {
  std::string name;
  std::uint64_t digest;
  std::uint64_t first, last;  // bits of elements 0 and n - 1
};

// Odd sizes leave partial groups and partial tiles; the offset crosses 2^32 after the first
// call and the seed has both halves set.
constexpr std::int64_t kN = 1'000'003;
constexpr std::uint64_t kSeed = 0xF00DF00DDEADBEEFull;

std::string label(const char* prefix, DType dt) { return std::string(prefix).append(dtype_name(dt)); }

std::vector<std::pair<std::string, Tensor>> draws() {
  random::Generator g(kSeed);
  g.set_state({kSeed, 0xFFFFFFFFull});
  std::vector<std::pair<std::string, Tensor>> out;
  for (DType dt : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    out.emplace_back(label("rand_", dt), random::rand({kN}, dt, Device::cpu(), &g));
    out.emplace_back(label("randn_", dt), random::randn({kN}, dt, Device::cpu(), &g));
    out.emplace_back(label("randn7_", dt), random::randn({7}, dt, Device::cpu(), &g));
    Tensor u = zeros({kN}, dt);
    random::uniform_(u, -3, 5, &g);
    out.emplace_back(label("uniform_", dt), u);
    Tensor z = zeros({kN}, dt);
    random::normal_(z, 2, 0.5, &g);
    out.emplace_back(label("normal_", dt), z);
    out.emplace_back(label("bernoulli_", dt), random::bernoulli({kN}, 0.3, dt, Device::cpu(), &g));
  }
  out.emplace_back("randint_i32", random::randint(-5, 1000, {kN}, DType::I32, Device::cpu(), &g));
  out.emplace_back("randint_i32_wide", random::randint(-2000000000, 2000000000, {kN}, DType::I32, Device::cpu(), &g));
  out.emplace_back("randint_i64", random::randint(-(std::int64_t(1) << 60), std::int64_t(1) << 61, {kN}, DType::I64,
                                                  Device::cpu(), &g));
  const Tensor probs = random::rand({kN}, DType::F32, Device::cpu(), &g);
  out.emplace_back("bernoulli_probs", random::bernoulli(probs, &g));
  const Tensor x = random::randn({kN}, DType::F32, Device::cpu(), &g);
  const nn::DropoutResult d = nn::dropout(x, 0.1, &g);
  out.emplace_back("dropout_out", d.output);
  out.emplace_back("dropout_mask", d.mask);
  return out;
}

const std::vector<Golden> kGolden = {
    {"rand_F32", 0x0b9b9e353e7d460cull, 0x3cdd4ae0ull, 0x3e9689e8ull},
    {"randn_F32", 0x47bdf1f88570a099ull, 0x3cb2fde4ull, 0xbea18353ull},
    {"randn7_F32", 0xae3fe5823873e663ull, 0xbe6bf078ull, 0x3f556ba2ull},
    {"uniform_F32", 0x61c31bd15a798846ull, 0x40509374ull, 0x3f23f8d8ull},
    {"normal_F32", 0x0ba6e683a4811465ull, 0x40158c01ull, 0x3feab333ull},
    {"bernoulli_F32", 0x75505c92f62875d8ull, 0x0ull, 0x0ull},
    {"rand_F64", 0x4bc54d9f5be66ea3ull, 0x3fe38d76731d47caull, 0x3fe8cd8fae796a49ull},
    {"randn_F64", 0xfa9ed97ee488858bull, 0xbffe3fdae32fece3ull, 0x3fc88850e12c60a2ull},
    {"randn7_F64", 0x441e11fedbc1dac7ull, 0xc00234c16a0a68d6ull, 0x3ff4a2f79631b602ull},
    {"uniform_F64", 0xd8fd029fd9f1e97dull, 0x4011b3357cb5da65ull, 0x40075275857989a4ull},
    {"normal_F64", 0x185127085fccced9ull, 0x3ffcfeccae60d90eull, 0x4001531500664aa1ull},
    {"bernoulli_F64", 0xaa8bb371a715c918ull, 0x3ff0000000000000ull, 0x3ff0000000000000ull},
    {"rand_F16", 0xefa94b25f05c4fb0ull, 0x324bull, 0x36d7ull},
    {"randn_F16", 0x00075ea42f13f5deull, 0xb9d7ull, 0xbdb6ull},
    {"randn7_F16", 0x7a19d17b6e57b22dull, 0xc104ull, 0x3b59ull},
    {"uniform_F16", 0xf02d694b635f12afull, 0xba85ull, 0x2f98ull},
    {"normal_F16", 0x1f870a4ff692af60ull, 0x41fdull, 0x3f6full},
    {"bernoulli_F16", 0xfe4589fd2aaaf919ull, 0x0ull, 0x0ull},
    {"rand_BF16", 0x1115abeef2c79980ull, 0x3f15ull, 0x3edeull},
    {"randn_BF16", 0x44e39c38a807c7bbull, 0x3f3full, 0x3f44ull},
    {"randn7_BF16", 0xcc0b1b5ab9c1083full, 0xbe76ull, 0xbf35ull},
    {"uniform_BF16", 0x01b4b6138a56d0eeull, 0x3ff4ull, 0x3f1bull},
    {"normal_BF16", 0x8bd6de83d2ad4f94ull, 0x4002ull, 0x4028ull},
    {"bernoulli_BF16", 0x1666ca3a0a716240ull, 0x0ull, 0x3f80ull},
    {"randint_i32", 0xe27fa6e412b14196ull, 0x11full, 0x61ull},
    {"randint_i32_wide", 0xe2642fe61eaf49d7ull, 0xdcdb704bull, 0x8ceda9b4ull},
    {"randint_i64", 0x31ef524eb82d9b5full, 0x1e2e8954372bf763ull, 0x958bd208f5c8943ull},
    {"bernoulli_probs", 0x5cf3a2a2efca7d68ull, 0x3f800000ull, 0x3f800000ull},
    {"dropout_out", 0x5586b2794bc5f956ull, 0x3fa2e5a7ull, 0x0ull},
    {"dropout_mask", 0x37442b19b7393a2cull, 0x1ull, 0x0ull},
};

TEST(RandomGolden, StreamsAreUnchanged) {
  const auto got = draws();
  if (std::getenv("FERRITE_PRINT_GOLDEN")) {  // how the table was made
    for (const auto& [name, t] : got)
      std::printf("    {\"%s\", 0x%016llxull, 0x%llxull, 0x%llxull},\n", name.c_str(),
                  static_cast<unsigned long long>(digest(t)), static_cast<unsigned long long>(bits_at(t, 0)),
                  static_cast<unsigned long long>(bits_at(t, t.numel() - 1)));
  }
  ASSERT_EQ(got.size(), kGolden.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto& [name, t] = got[i];
    SCOPED_TRACE(name);
    EXPECT_EQ(name, kGolden[i].name);
    EXPECT_EQ(bits_at(t, 0), kGolden[i].first);
    EXPECT_EQ(bits_at(t, t.numel() - 1), kGolden[i].last);
    EXPECT_EQ(digest(t), kGolden[i].digest);
  }
}

}  // namespace
}  // namespace ferrite
