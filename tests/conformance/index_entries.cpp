// Conformance entries of the indexing ops: index_select, embedding, embedding_backward,
// gather, scatter_add, masked_select, masked_scatter. Indices are I32 and I64 (alternating by
// case), with negative and duplicate values; out-of-range indices must raise
// IndexOutOfRange; masks include all-true, all-false and empty ones.
#include <cmath>

#include "conformance/reference.hpp"
#include "conformance/shape_entries_common.hpp"

namespace ferrite::conformance {
namespace {

using namespace shape_test;

DType index_dtype(std::size_t case_number) { return case_number % 2 == 0 ? DType::I64 : DType::I32; }

// A sum of values in [-4, 4]: the reference is exact (long double), the backends round along
// the way (in float for F32/F16/BF16): allow for that.
Tolerance sum_tolerance(DType d) {
  switch (d) {
    case DType::F64: return {1e-12, 1e-12};
    case DType::F32: return {1e-5, 1e-5};
    case DType::F16: return {2e-3, 1e-2};
    case DType::BF16: return {1.6e-2, 5e-2};
    default: return {};
  }
}

/// Values k/64 for k in [-256, 256] \ {0} (integers: random's): a sum of up to 2^16 of them
/// is exact in float, so the long runs below (thousands of sources on one target, where a
/// float sum of random values drifts past any fixed tolerance) have one right answer that
/// both backends reach whatever order they add in: CUDA against CPU is then bit for bit.
Tensor dyadic(Shape shape, DType d, Rng& rng) {
  if (!is_floating(d)) return random(std::move(shape), d, rng);
  std::vector<double> v(static_cast<std::size_t>(shape_numel(shape)));
  for (auto& x : v) {
    const auto k = static_cast<double>(rng() % 256 + 1);
    x = (rng() % 2 == 0 ? k : -k) / 64;
  }
  return from_vector(v, std::move(shape)).to(d);
}

/// A skewed index as byte text gives (a few tokens own most positions): every other position
/// is `hot` (negative: wrapped), the rest uniform over [-size, size) as random_index's.
Tensor skewed_index(Shape shape, std::int64_t size, std::int64_t hot, DType dtype, Rng& rng) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = i % 2 == 0 ? hot : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(2 * size)) - size;
  return from_vector(v, std::move(shape)).to(dtype);
}

/// An index of one repeated value.
Tensor repeated_index(Shape shape, std::int64_t value, DType dtype) {
  const std::vector<std::int64_t> v(static_cast<std::size_t>(shape_numel(shape)), value);
  return from_vector(v, std::move(shape)).to(dtype);
}

/// index_values, wrapped.
std::vector<std::int64_t> wrapped_index(const Tensor& index, std::int64_t size) {
  auto v = index_values(index);
  for (auto& x : v) x = wrap(x, size);
  return v;
}

std::vector<ErrorCase> index_errors(const std::string& op, DType d,
                                    std::function<Tensor(const Tensor& x, const Tensor& index)> call) {
  return {
      {"index too large",
       [=](Device dev) { call(zeros({4, 3}, d, dev), from_vector<std::int64_t>({0, 4, 1}, {3}, dev)); },
       ErrorKind::IndexOutOfRange, op + ": index 4 is out of range"},
      {"index too negative",
       [=](Device dev) { call(zeros({4, 3}, d, dev), from_vector<std::int32_t>({-5, 1, -1}, {3}, dev)); },
       ErrorKind::IndexOutOfRange, op + ": index -5 is out of range"},
      {"index too large, rows of 1 KiB or more",  // the CUDA row-copy path of index_select/embedding
       [=](Device dev) { call(zeros({4, 1024}, d, dev), from_vector<std::int64_t>({0, 7, 1}, {3}, dev)); },
       ErrorKind::IndexOutOfRange, op + ": index 7 is out of range"},
      {"float index", [=](Device dev) { call(zeros({4, 3}, d, dev), zeros({3}, DType::F32, dev)); },
       ErrorKind::DTypeMismatch, "must be I32 or I64, got [3"},
  };
}

// ---- index_select / embedding ----

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("index_select");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](Shape s, std::int64_t dim, Shape index_shape) {
      const std::int64_t size = s.empty() ? 1 : s[static_cast<std::size_t>((dim + std::int64_t(s.size())) % std::int64_t(s.size()))];
      cases.push_back({shape_str(s) + " dim " + std::to_string(dim) + " index " + shape_str(index_shape),
                       {random(s, d, rng), random_index(index_shape, size, index_dtype(cases.size()), rng)},
                       {dim}});
    };
    add({5, 7}, 0, {9});
    add({5, 7}, 1, {4});
    add({5, 7}, -1, {});
    add({3, 4, 6}, 1, {11});
    add({1000}, 0, {257});
    add({64, 32}, 0, {33});  // rows of 16-byte units
    add({40, 1024}, 0, {77});     // rows of at least 1 KiB: the CUDA row-copy kernel
    add({3, 20, 1024}, 1, {9});  // the same with an outer dim
    add({3, 2, 5}, 2, {0});
    add({}, 0, {1});  // rank 0 takes exactly one index and gives rank 0 (torch.index_select)
    add({}, -1, {});
    add({37}, 0, {300001});  // more indices than one block checks: the range goes through atomics
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{index_select(c.inputs[0], c.ints[0], c.inputs[1])}; };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    const Shape xs = x.shape.empty() ? Shape{1} : x.shape;
    const auto d = static_cast<std::size_t>((c.ints[0] + std::int64_t(xs.size())) % std::int64_t(xs.size()));
    const auto idx = wrapped_index(c.inputs[1], xs[d]);
    Shape out_shape = xs;
    out_shape[d] = static_cast<std::int64_t>(idx.size());
    Raw out(out_shape, x.dtype);
    for (std::int64_t i = 0; i < shape_numel(out_shape); ++i) {
      auto k = unravel(i, out_shape);
      k[d] = idx[static_cast<std::size_t>(k[d])];
      out.set(i, x.at(ravel(k, xs)));
    }
    if (x.shape.empty()) out.shape = {};
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    auto errors = index_errors("index_select", d, [](const Tensor& x, const Tensor& i) { return index_select(x, 0, i); });
    errors.push_back({"2-d index", [d](Device dev) { index_select(zeros({4}, d, dev), 0, zeros({2, 2}, DType::I64, dev)); },
                      ErrorKind::InvalidArgument, "index_select: index must be 1-D"});
    errors.push_back({"dim out of range", [d](Device dev) { index_select(zeros({4}, d, dev), 1, zeros({2}, DType::I64, dev)); },
                      ErrorKind::IndexOutOfRange, "index_select: dim 1 is out of range"});
    errors.push_back({"rank-0 input, 3 indices",
                      [d](Device dev) { index_select(zeros({}, d, dev), 0, zeros({3}, DType::I64, dev)); },
                      ErrorKind::IndexOutOfRange, "index_select: an index into rank-0 input"});
    return errors;
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("embedding");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](Shape weight, Shape index_shape) {
      cases.push_back({"weight " + shape_str(weight) + " indices " + shape_str(index_shape),
                       {random(weight, d, rng), random_index(index_shape, weight[0], index_dtype(cases.size()), rng)}});
    };
    add({50, 12}, {3, 4});
    add({128, 64}, {33});
    add({300, 1024}, {50, 2});  // rows of at least 1 KiB: the CUDA row-copy kernel
    add({10}, {5});
    add({7, 3}, {0});
    add({4, 2, 3}, {2, 1, 2});
    add({1, 5}, {});
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{nn::embedding(c.inputs[0], c.inputs[1])}; };
  e.reference_outputs = [](const Case& c) {
    const Raw w(c.inputs[0]);
    const std::int64_t rows = w.shape[0], width = shape_numel(w.shape) / std::max<std::int64_t>(rows, 1);
    const auto idx = wrapped_index(c.inputs[1], rows);
    Shape out_shape = c.inputs[1].shape();
    out_shape.insert(out_shape.end(), w.shape.begin() + 1, w.shape.end());
    Raw out(out_shape, w.dtype);
    for (std::size_t r = 0; r < idx.size(); ++r)
      for (std::int64_t k = 0; k < width; ++k) out.set(std::int64_t(r) * width + k, w.at(idx[r] * width + k));
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    return index_errors("embedding", d, [](const Tensor& w, const Tensor& i) { return nn::embedding(w, i); });
  };
  return e;
}());

// ---- gather ----

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("gather");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](Shape s, std::int64_t dim, Shape index_shape) {
      const std::int64_t size = s.empty() ? 1 : s[static_cast<std::size_t>((dim + std::int64_t(s.size())) % std::int64_t(s.size()))];
      cases.push_back({shape_str(s) + " dim " + std::to_string(dim) + " index " + shape_str(index_shape),
                       {random(s, d, rng), random_index(index_shape, size, index_dtype(cases.size()), rng)},
                       {dim}});
    };
    add({4, 6}, 1, {4, 3});
    add({4, 6}, 0, {2, 6});
    add({3, 4, 5}, 1, {2, 7, 3});  // longer than the input along dim, smaller elsewhere
    add({3, 4, 5}, -1, {3, 4, 9});
    add({1000}, 0, {2001});
    add({}, 0, {});
    add({4, 6}, 1, {0, 3});
    // Along the last dim with the input's leading dims: the CUDA row kernel (rows staged in
    // shared memory, whole 16-byte pieces or not), and rows too long for it.
    add({33, 1024}, -1, {33, 700});
    add({2, 3, 257}, 2, {2, 3, 300});
    add({5, 20000}, 1, {5, 10});
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{gather(c.inputs[0], c.ints[0], c.inputs[1])}; };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    const Shape xs = x.shape.empty() ? Shape{1} : x.shape;
    const auto d = static_cast<std::size_t>((c.ints[0] + std::int64_t(xs.size())) % std::int64_t(xs.size()));
    const auto idx = wrapped_index(c.inputs[1], xs[d]);
    const Shape is = c.inputs[1].shape().empty() ? Shape{1} : c.inputs[1].shape();
    Raw out(c.inputs[1].shape(), x.dtype);
    for (std::int64_t i = 0; i < shape_numel(is); ++i) {
      auto k = unravel(i, is);
      k[d] = idx[static_cast<std::size_t>(i)];
      out.set(i, x.at(ravel(k, xs)));
    }
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    auto errors = index_errors("gather", d, [](const Tensor& x, const Tensor& i) {
      return gather(x, 0, i.reshape({i.numel(), 1}));
    });
    errors.push_back({"index too large along the last dim",
                      [d](Device dev) {
                        gather(zeros({4, 3}, d, dev), 1, from_vector<std::int64_t>({0, 1, 2, 0, 3, 1, 1, 1}, {4, 2}, dev));
                      },
                      ErrorKind::IndexOutOfRange, "gather: index 3 is out of range"});
    errors.push_back({"index larger than input off dim",
                      [d](Device dev) { gather(zeros({4, 3}, d, dev), 0, zeros({2, 4}, DType::I64, dev)); },
                      ErrorKind::ShapeMismatch, "gather: index [2, 4] I64"});
    errors.push_back({"rank differs", [d](Device dev) { gather(zeros({4, 3}, d, dev), 0, zeros({4}, DType::I64, dev)); },
                      ErrorKind::ShapeMismatch, "gather: index [4] I64"});
    return errors;
  };
  return e;
}());

// ---- masked_select / masked_scatter ----

Tensor mask_of(Shape s, int kind, Rng& rng) {  // 0 random, 1 all true, 2 all false
  if (kind == 0) return random(s, DType::Bool, rng);
  return full(std::move(s), kind == 1 ? 1 : 0, DType::Bool);
}

std::vector<Case> mask_cases(DType d, Rng& rng, bool with_source) {
  std::vector<Case> cases;
  auto add = [&](Shape s, int kind, const char* what) {
    Case c{shape_str(s) + " " + what, {random(s, d, rng), mask_of(s, kind, rng)}};
    if (with_source) c.inputs.push_back(random({shape_numel(s) + 3}, d, rng));
    cases.push_back(std::move(c));
  };
  add({7}, 0, "random");
  add({33, 17}, 0, "random");
  add({5000}, 0, "random, several tiles");
  add({100003}, 0, "random, large");
  add({1000003}, 0, "random, more than 1024 tiles (two scan levels)");
  add({8192}, 0, "random, whole tiles only");
  add({4097}, 1, "all true");
  add({4097}, 2, "all false");
  add({}, 1, "rank 0 true");
  add({}, 2, "rank 0 false");
  add({0, 4}, 0, "empty");
  add({1}, 1, "one element");
  return cases;
}

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("masked_select");
  e.cases = [](DType d, Rng& rng) { return mask_cases(d, rng, false); };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{masked_select(c.inputs[0], c.inputs[1])}; };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    const auto m = c.inputs[1].to_vector<bool>();
    std::int64_t count = 0;
    for (bool b : m) count += b;
    Raw out({count}, x.dtype);
    std::int64_t k = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
      if (m[i]) out.set(k++, x.at(std::int64_t(i)));
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"mask not Bool", [d](Device dev) { masked_select(zeros({4}, d, dev), zeros({4}, DType::I32, dev)); },
         ErrorKind::DTypeMismatch, "masked_select: mask must be Bool, got [4] I32"},
        {"mask shape", [d](Device dev) { masked_select(zeros({4}, d, dev), zeros({5}, DType::Bool, dev)); },
         ErrorKind::ShapeMismatch, "masked_select: mask is [5] Bool"}};
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("masked_scatter");
  e.cases = [](DType d, Rng& rng) {
    auto cases = mask_cases(d, rng, true);
    // A source of exactly the number of true elements.
    Tensor mask = random({999}, DType::Bool, rng);
    std::int64_t count = 0;
    for (bool b : mask.to_vector<bool>()) count += b;
    cases.push_back({"[999] source exactly the count", {random({999}, d, rng), mask, random({count}, d, rng)}});
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    return std::vector<Tensor>{masked_scatter(c.inputs[0], c.inputs[1], c.inputs[2])};
  };
  e.reference_outputs = [](const Case& c) {
    Raw out(c.inputs[0]);
    const Raw source(c.inputs[2]);
    const auto m = c.inputs[1].to_vector<bool>();
    std::int64_t k = 0;
    for (std::size_t i = 0; i < m.size(); ++i)
      if (m[i]) out.set(std::int64_t(i), source.at(k++));
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"source too short", [d](Device dev) {
           masked_scatter(zeros({6}, d, dev), full({6}, 1, DType::Bool, dev), zeros({5}, d, dev));
         },
         ErrorKind::ShapeMismatch, "has 6 true elements but source [5]"},
        {"mask not Bool", [d](Device dev) { masked_scatter(zeros({4}, d, dev), zeros({4}, d == DType::F32 ? DType::F64 : DType::F32, dev), zeros({4}, d, dev)); },
         ErrorKind::DTypeMismatch, "masked_scatter: mask must be Bool"}};
  };
  return e;
}());

// ---- the adding ops: scatter_add, embedding_backward ----

FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "scatter_add";
  e.dtypes = kAddDTypes;
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](Shape xs, std::int64_t dim, Shape is, Shape ss) {
      const auto r = std::int64_t(xs.size());
      const std::int64_t size = xs.empty() ? 1 : xs[static_cast<std::size_t>((dim + r) % r)];
      cases.push_back({shape_str(xs) + " dim " + std::to_string(dim) + " index " + shape_str(is) + " src " + shape_str(ss),
                       {random(xs, d, rng), random_index(is, size, index_dtype(cases.size()), rng), random(ss, d, rng)},
                       {dim}});
    };
    add({10}, 0, {30}, {30});            // the seed's scatter_add_1d: many duplicates
    add({5, 4}, 0, {7, 4}, {7, 4});
    add({5, 4}, 1, {5, 9}, {6, 10});     // src larger than the index
    add({3, 4, 5}, -1, {2, 3, 8}, {2, 3, 8});
    add({2000}, 0, {5000}, {5000});
    add({}, 0, {}, {});
    add({4, 3}, 0, {0, 3}, {0, 3});
    add({0, 3}, 1, {0, 3}, {0, 3});
    // Long runs on one target (CUDA adds them as partials of fixed chunks, then the partials
    // in chunk order): half the positions on one element, and all of them on one, along
    // dims of two sizes. Dyadic values: exact sums (see dyadic).
    cases.push_back({"[300] dim 0 index [40000] half on element 7", {dyadic({300}, d, rng),
                     skewed_index({40000}, 300, 7, index_dtype(cases.size()), rng), dyadic({40000}, d, rng)}, {0}});
    cases.push_back({"[3, 5] dim 1 index [3, 20000] all on element -1",
                     {dyadic({3, 5}, d, rng), repeated_index({3, 20000}, -1, index_dtype(cases.size())),
                      dyadic({3, 20000}, d, rng)},
                     {1}});
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    return std::vector<Tensor>{scatter_add(c.inputs[0], c.ints[0], c.inputs[1], c.inputs[2])};
  };
  e.reference_outputs = [](const Case& c) {
    const Shape xs = c.inputs[0].shape().empty() ? Shape{1} : c.inputs[0].shape();
    const Shape is = c.inputs[1].shape().empty() ? Shape{1} : c.inputs[1].shape();
    const Shape ss = c.inputs[2].shape().empty() ? Shape{1} : c.inputs[2].shape();
    const auto d = static_cast<std::size_t>((c.ints[0] + std::int64_t(xs.size())) % std::int64_t(xs.size()));
    auto out = reference::values(c.inputs[0]);
    const auto src = reference::values(c.inputs[2]);
    const auto idx = wrapped_index(c.inputs[1], xs[d]);
    for (std::int64_t i = 0; i < shape_numel(is); ++i) {
      auto k = unravel(i, is);
      const std::int64_t from = ravel(k, ss);
      k[d] = idx[static_cast<std::size_t>(i)];
      out[static_cast<std::size_t>(ravel(k, xs))] += src[static_cast<std::size_t>(from)];
    }
    return std::vector<Tensor>{reference::from_values(out, c.inputs[0].shape(), c.inputs[0].dtype())};
  };
  e.reference_tolerance = sum_tolerance;
  // The CPU adds each target's sources one by one; CUDA adds runs longer than its chunk as
  // chunk partials (in a fixed order: bit-repeatable, checked above): float sums of such
  // runs may differ in the last bits. Integers wrap, so they agree exactly in any order.
  e.backend_tolerance = sum_tolerance;
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"index too large",
         [d](Device dev) {
           scatter_add(zeros({4}, d, dev), 0, from_vector<std::int64_t>({1, 4}, {2}, dev), zeros({2}, d, dev));
         },
         ErrorKind::IndexOutOfRange, "scatter_add: index 4 is out of range for dim 0 of size 4"},
        {"index too negative",
         [d](Device dev) {
           scatter_add(zeros({4}, d, dev), 0, from_vector<std::int32_t>({-5}, {1}, dev), zeros({1}, d, dev));
         },
         ErrorKind::IndexOutOfRange, "scatter_add: index -5 is out of range"},
        {"src too small", [d](Device dev) { scatter_add(zeros({4}, d, dev), 0, zeros({3}, DType::I64, dev), zeros({2}, d, dev)); },
         ErrorKind::ShapeMismatch, "scatter_add: index [3] I64"},
        {"Bool", [](Device dev) {
           scatter_add(zeros({4}, DType::Bool, dev), 0, zeros({1}, DType::I64, dev), zeros({1}, DType::Bool, dev));
         },
         ErrorKind::Unsupported, "scatter_add: dtype Bool is not supported"}};
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e;
  e.op = "embedding_backward";
  e.dtypes = kAddDTypes;
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](Shape index_shape, std::vector<std::int64_t> rest, std::int64_t rows) {
      Shape gs = index_shape;
      gs.insert(gs.end(), rest.begin(), rest.end());
      cases.push_back({"indices " + shape_str(index_shape) + " d " + shape_str(rest) + " rows " + std::to_string(rows),
                       {random(gs, d, rng), random_index(index_shape, rows, index_dtype(cases.size()), rng)},
                       {rows}});
    };
    add({40}, {7}, 5);        // many duplicates per row
    add({2, 3}, {16}, 50);
    add({300}, {64}, 17);
    add({9}, {}, 4);
    add({0}, {3}, 6);
    add({5}, {0}, 3);
    // The GPT case (byte tokens: 256 rows, 8 x 2048 tokens, width 768) with skewed text: half
    // the tokens one row (space), so one target has 8192 sources; and one row for every
    // token. Dyadic values: exact sums (see dyadic).
    cases.push_back({"indices [8, 2048] half on row 32 d [768] rows 256",
                     {dyadic({8, 2048, 768}, d, rng), skewed_index({8, 2048}, 256, 32, index_dtype(cases.size()), rng)},
                     {256}});
    cases.push_back({"indices [16384] all row -2 d [33] rows 3",
                     {dyadic({16384, 33}, d, rng), repeated_index({16384}, -2, index_dtype(cases.size()))}, {3}});
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    return std::vector<Tensor>{nn::embedding_backward(c.inputs[0], c.inputs[1], c.ints[0])};
  };
  e.reference_outputs = [](const Case& c) {
    const std::int64_t rows = c.ints[0];
    const auto idx = wrapped_index(c.inputs[1], rows);
    const auto g = reference::values(c.inputs[0]);
    Shape out_shape{rows};
    out_shape.insert(out_shape.end(), c.inputs[0].shape().begin() + std::ptrdiff_t(c.inputs[1].dim()), c.inputs[0].shape().end());
    const std::int64_t width = shape_numel(out_shape) / std::max<std::int64_t>(rows, 1);
    std::vector<long double> out(static_cast<std::size_t>(shape_numel(out_shape)), 0.0L);
    for (std::size_t r = 0; r < idx.size(); ++r)
      for (std::int64_t k = 0; k < width; ++k) out[std::size_t(idx[r] * width + k)] += g[r * std::size_t(width) + std::size_t(k)];
    return std::vector<Tensor>{reference::from_values(out, out_shape, c.inputs[0].dtype())};
  };
  e.reference_tolerance = sum_tolerance;
  e.backend_tolerance = sum_tolerance;  // as scatter_add's: CUDA adds long runs as chunk partials
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"index too large",
         [d](Device dev) { nn::embedding_backward(zeros({2, 3}, d, dev), from_vector<std::int64_t>({0, 5}, {2}, dev), 5); },
         ErrorKind::IndexOutOfRange, "embedding_backward: index 5 is out of range for num_embeddings of size 5"},
        {"grad shape", [d](Device dev) { nn::embedding_backward(zeros({3, 3}, d, dev), zeros({2}, DType::I64, dev), 5); },
         ErrorKind::ShapeMismatch, "embedding_backward: grad [3, 3]"}};
  };
  return e;
}());

}  // namespace
}  // namespace ferrite::conformance
