// Conformance entries of the shape ops: transpose, permute, strided_copy, strided_scatter,
// cat, split, chunk, repeat, roll, slice_write, slice_read. Every element size (Bool, F16,
// F32, I64, C64, C128), odd sizes, empty tensors, rank 0 and 1, negative and zero strides.
// References move bytes by plain row-major arithmetic; data moves exactly, so every
// comparison is bit-exact.
#include <numeric>

#include "conformance/shape_entries_common.hpp"

namespace ferrite::conformance {
namespace {

using namespace shape_test;

std::vector<std::int64_t> ints_from(const Case& c, std::size_t begin, std::size_t count) {
  return {c.ints.begin() + static_cast<std::ptrdiff_t>(begin), c.ints.begin() + static_cast<std::ptrdiff_t>(begin + count)};
}

// ---- transpose / permute ----

Raw ref_permute(const Raw& x, const std::vector<std::int64_t>& perm) {
  Shape out_shape(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k) out_shape[k] = x.shape[perm[k]];
  Raw out(out_shape, x.dtype);
  for (std::int64_t i = 0; i < shape_numel(out_shape); ++i) {
    const auto o = unravel(i, out_shape);
    std::vector<std::int64_t> in(o.size());
    for (std::size_t k = 0; k < perm.size(); ++k) in[perm[k]] = o[k];
    out.set(i, x.at(ravel(in, x.shape)));
  }
  return out;
}

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("transpose");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](Shape s, std::int64_t a, std::int64_t b) {
      cases.push_back({shape_str(s) + " " + std::to_string(a) + "," + std::to_string(b), {random(s, d, rng)}, {a, b}});
    };
    add({33, 17}, 0, 1);
    add({64, 128}, 1, 0);     // whole tiles: the 16-byte vector path
    add({300, 257}, 0, 1);    // partial tiles on both edges
    add({256, 384}, 0, 1);    // whole tiles for every element size (1-byte tiles are 128 x 128)
    add({3, 64, 96}, 1, 2);   // batched tiles
    add({2, 3, 4, 5}, 1, 3);
    add({2, 3, 4, 5}, -1, -2);
    add({129, 65}, 0, -1);
    add({7}, 0, 0);
    add({}, 0, -1);
    add({0, 5}, 0, 1);
    add({5, 1, 3}, 0, 2);
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{transpose(c.inputs[0], c.ints[0], c.ints[1])}; };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    const std::int64_t r = std::max<std::int64_t>(1, static_cast<std::int64_t>(x.shape.size()));
    if (x.shape.empty()) return std::vector<Tensor>{x.tensor()};
    std::vector<std::int64_t> perm(static_cast<std::size_t>(r));
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[(c.ints[0] + r) % r], perm[(c.ints[1] + r) % r]);
    return std::vector<Tensor>{ref_permute(x, perm).tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"dim out of range", [d](Device dev) { transpose(zeros({3, 4}, d, dev), 0, 2); }, ErrorKind::IndexOutOfRange,
         "transpose: dim 2 is out of range for input [3, 4] " + std::string(dtype_name(d))},
        {"undefined", [](Device) { transpose(Tensor(), 0, 1); }, ErrorKind::InvalidArgument, "transpose: an operand"}};
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("permute");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](Shape s, std::vector<std::int64_t> p) {
      cases.push_back({shape_str(s) + " perm " + shape_str(p), {random(s, d, rng)}, p});
    };
    add({2, 3, 4, 5}, {0, 2, 1, 3});
    add({32, 8, 4, 16}, {0, 2, 1, 3});  // keeps the inner dim: rows move as 16-byte units
    add({2, 3, 4, 5}, {3, 2, 1, 0});
    add({5, 1, 7}, {2, 0, 1});
    add({3, 33, 2}, {1, 2, 0});
    add({2, 1, 3, 1, 2, 2, 1, 3}, {7, 6, 5, 4, 3, 2, 1, 0});
    add({4, 6}, {-1, -2});
    add({}, {});
    add({0, 3}, {1, 0});
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{permute(c.inputs[0], c.ints)}; };
  e.reference_outputs = [](const Case& c) {
    std::vector<std::int64_t> p = c.ints;
    for (auto& v : p) v = v < 0 ? v + static_cast<std::int64_t>(p.size()) : v;
    return std::vector<Tensor>{ref_permute(Raw(c.inputs[0]), p).tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"repeated dim", [d](Device dev) { permute(zeros({2, 3, 4}, d, dev), {0, 1, 1}); }, ErrorKind::InvalidArgument,
         "permute: dims [0, 1, 1] is not a permutation of the 3 dims of [2, 3, 4]"},
        {"wrong length", [d](Device dev) { permute(zeros({2, 3}, d, dev), {0}); }, ErrorKind::InvalidArgument,
         "permute: dims [0] is not a permutation"}};
    // (permute is a view now: rank 9 and above work; tests/unit/views_test.cpp.)
  };
  return e;
}());

// ---- strided_copy / strided_scatter ----
// Case ints: rank, sizes..., strides..., offset.

struct ViewArgs {
  Shape shape;
  std::vector<std::int64_t> strides;
  std::int64_t offset;
};
ViewArgs view_of(const Case& c) {
  const auto r = static_cast<std::size_t>(c.ints[0]);
  return {ints_from(c, 1, r), ints_from(c, 1 + r, r), c.ints[1 + 2 * r]};
}
std::vector<std::int64_t> view_ints(const Shape& s, const std::vector<std::int64_t>& st, std::int64_t off) {
  std::vector<std::int64_t> v{static_cast<std::int64_t>(s.size())};
  v.insert(v.end(), s.begin(), s.end());
  v.insert(v.end(), st.begin(), st.end());
  v.push_back(off);
  return v;
}
std::int64_t view_address(const ViewArgs& v, std::int64_t flat) {
  const auto idx = unravel(flat, v.shape);
  std::int64_t a = v.offset;
  for (std::size_t k = 0; k < idx.size(); ++k) a += idx[k] * v.strides[k];
  return a;
}

struct ViewSpec {
  std::string label;
  std::int64_t storage;
  Shape shape;
  std::vector<std::int64_t> strides;
  std::int64_t offset;
};
// Views that address each element at most once (usable by strided_scatter too).
std::vector<ViewSpec> one_to_one_views() {
  return {
      {"negative stride", 100, {10}, {-3}, 99},
      {"2-d, negative rows", 100, {5, 6}, {-12, 2}, 60},
      {"transposed", 60, {5, 12}, {1, 5}, 0},
      {"inner rows (16-byte units)", 4096, {32, 64}, {128, 1}, 64},
      {"odd everything", 1000, {3, 7, 5}, {-211, 29, 3}, 500},
      {"rank 0", 50, {}, {}, 42},
      {"empty", 10, {0, 3}, {1, 1}, 0},
      {"whole storage", 77, {7, 11}, {11, 1}, 0},
  };
}

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("strided_copy");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto views = one_to_one_views();
    views.push_back({"zero stride (broadcast)", 30, {4, 5}, {0, 1}, 10});
    views.push_back({"all zero strides", 5, {3, 3}, {0, 0}, 4});
    for (const ViewSpec& v : views)
      cases.push_back({v.label, {random({v.storage}, d, rng)}, view_ints(v.shape, v.strides, v.offset)});
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const ViewArgs v = view_of(c);
    return std::vector<Tensor>{strided_copy(c.inputs[0], v.shape, v.strides, v.offset)};
  };
  e.reference_outputs = [](const Case& c) {
    const ViewArgs v = view_of(c);
    const Raw x(c.inputs[0]);
    Raw out(v.shape, x.dtype);
    for (std::int64_t i = 0; i < shape_numel(v.shape); ++i) out.set(i, x.at(view_address(v, i)));
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"past the end", [d](Device dev) { strided_copy(zeros({10}, d, dev), {4}, {3}, 1); }, ErrorKind::IndexOutOfRange,
         "strided_copy: the view (shape [4], strides [3], offset 1) addresses elements 1..10, outside the 10 elements"},
        {"before the start", [d](Device dev) { strided_copy(zeros({10}, d, dev), {3}, {-2}, 3); },
         ErrorKind::IndexOutOfRange, "addresses elements -1..3"},
        {"strides of the wrong length", [d](Device dev) { strided_copy(zeros({10}, d, dev), {2, 2}, {1}, 0); },
         ErrorKind::InvalidArgument, "strided_copy: view shape [2, 2] has 2 dims but strides [1] has 1"}};
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("strided_scatter");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    for (const ViewSpec& v : one_to_one_views())
      cases.push_back({v.label, {random({v.storage}, d, rng), random(v.shape, d, rng)},
                       view_ints(v.shape, v.strides, v.offset)});
    return cases;
  };
  e.run_outputs = [](const Case& c) {
    const ViewArgs v = view_of(c);
    Tensor dst = c.inputs[0].clone();  // in place: never modify the case's own input
    strided_scatter(dst, c.inputs[1], v.shape, v.strides, v.offset);
    return std::vector<Tensor>{dst};
  };
  e.reference_outputs = [](const Case& c) {
    const ViewArgs v = view_of(c);
    Raw dst(c.inputs[0]);
    const Raw src(c.inputs[1]);
    for (std::int64_t i = 0; i < shape_numel(v.shape); ++i) dst.set(view_address(v, i), src.at(i));
    return std::vector<Tensor>{dst.tensor()};
  };
  e.errors = [](DType d) {
    const DType other = d == DType::F32 ? DType::F64 : DType::F32;
    return std::vector<ErrorCase>{
        {"out of range, destination untouched",
         [d](Device dev) {
           const Tensor dst = full({10}, 1, d, dev);
           expect_untouched(dst, [&] { strided_scatter(dst, full({4}, 0, d, dev), {4}, {3}, 1); });
         },
         ErrorKind::IndexOutOfRange, "strided_scatter: the view (shape [4], strides [3], offset 1) addresses elements 1..10"},
        {"overlapping view, destination untouched",
         [d](Device dev) {
           const Tensor dst = full({10}, 1, d, dev);
           expect_untouched(dst, [&] { strided_scatter(dst, full({2, 3}, 0, d, dev), {2, 3}, {1, 1}, 0); });
         },
         ErrorKind::InvalidArgument, "may address an element of [10]"},
        {"src of the wrong size", [d](Device dev) { strided_scatter(zeros({10}, d, dev), zeros({5}, d, dev), {2, 2}, {2, 1}, 0); },
         ErrorKind::ShapeMismatch, "strided_scatter: src [5]"},
        {"dtype mismatch", [d, other](Device dev) { strided_scatter(zeros({10}, d, dev), zeros({2}, other, dev), {2}, {1}, 0); },
         ErrorKind::DTypeMismatch, "strided_scatter: operand dtypes differ"}};
  };
  return e;
}());

// ---- cat / split / chunk ----

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("cat");
  e.cases = [](DType d, Rng& rng) {
    std::vector<Case> cases;
    auto add = [&](std::vector<Shape> shapes, std::int64_t dim) {
      Case c{"dim " + std::to_string(dim), {}, {dim}};
      for (const Shape& s : shapes) {
        c.label += " " + shape_str(s);
        c.inputs.push_back(random(s, d, rng));
      }
      cases.push_back(std::move(c));
    };
    add({{3, 4}, {5, 4}, {1, 4}}, 0);
    add({{3, 4}, {3, 7}}, 1);
    add({{3, 4}, {3, 7}}, -1);
    add({{2, 0, 3}, {2, 5, 3}, {2, 1, 3}}, 1);
    add({{7}, {0}, {9}}, 0);
    add({{64, 300}, {64, 212}}, 1);  // 16-byte rows
    add({{5, 3, 17}, {5, 3, 1}, {5, 3, 33}}, 2);
    add({{1}}, 0);
    add({{0, 4}, {0, 4}}, 0);
    return cases;
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{cat(c.inputs, c.ints[0])}; };
  e.reference_outputs = [](const Case& c) {
    const std::size_t r = c.inputs[0].shape().size();
    const std::size_t d = static_cast<std::size_t>((c.ints[0] + static_cast<std::int64_t>(r)) % static_cast<std::int64_t>(r));
    Shape out_shape = c.inputs[0].shape();
    out_shape[d] = 0;
    for (const Tensor& t : c.inputs) out_shape[d] += t.shape()[d];
    Raw out(out_shape, c.inputs[0].dtype());
    std::vector<Raw> ins;
    for (const Tensor& t : c.inputs) ins.emplace_back(t);
    for (std::int64_t i = 0; i < shape_numel(out_shape); ++i) {
      auto idx = unravel(i, out_shape);
      std::size_t which = 0;
      while (idx[d] >= ins[which].shape[d]) idx[d] -= ins[which++].shape[d];
      out.set(i, ins[which].at(ravel(idx, ins[which].shape)));
    }
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    const DType other = d == DType::F32 ? DType::F64 : DType::F32;
    return std::vector<ErrorCase>{
        {"other dims differ", [d](Device dev) { cat({zeros({2, 3}, d, dev), zeros({2, 4}, d, dev)}, 0); },
         ErrorKind::ShapeMismatch, "cat: tensor 1 is [2, 4]"},
        {"rank differs", [d](Device dev) { cat({zeros({2, 3}, d, dev), zeros({3}, d, dev)}, 0); },
         ErrorKind::ShapeMismatch, "cat: tensor 1 is [3]"},
        {"dtype mismatch", [d, other](Device dev) { cat({zeros({2}, d, dev), zeros({2}, other, dev)}, 0); },
         ErrorKind::DTypeMismatch, "cat: operand dtypes differ"},
        {"rank 0", [d](Device dev) { cat({zeros({}, d, dev)}, 0); }, ErrorKind::InvalidArgument,
         "cat: a rank-0 tensor"},
        {"no tensors", [](Device) { cat({}, 0); }, ErrorKind::InvalidArgument, "cat: no tensors"}};
  };
  return e;
}());

std::vector<Tensor> ref_split(const Raw& x, std::size_t d, const std::vector<std::int64_t>& sizes) {
  std::vector<Tensor> pieces;
  std::int64_t at = 0;
  for (std::int64_t size : sizes) {
    Shape s = x.shape;
    s[d] = size;
    Raw piece(s, x.dtype);
    for (std::int64_t i = 0; i < shape_numel(s); ++i) {
      auto idx = unravel(i, s);
      idx[d] += at;
      piece.set(i, x.at(ravel(idx, x.shape)));
    }
    pieces.push_back(piece.tensor());
    at += size;
  }
  return pieces;
}

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("split");
  e.cases = [](DType d, Rng& rng) {
    // ints: dim, sizes...
    return std::vector<Case>{
        {"[10, 7] dim 0 {3, 0, 7}", {random({10, 7}, d, rng)}, {0, 3, 0, 7}},
        {"[4, 9] dim 1 {2, 7}", {random({4, 9}, d, rng)}, {1, 2, 7}},
        {"[3, 5, 64] dim -1 {32, 16, 16}", {random({3, 5, 64}, d, rng)}, {-1, 32, 16, 16}},
        {"[13] dim 0 {13}", {random({13}, d, rng)}, {0, 13}},
        {"[0, 3] dim 1 {1, 2}", {random({0, 3}, d, rng)}, {1, 1, 2}},
    };
  };
  e.run_outputs = [](const Case& c) { return split(c.inputs[0], ints_from(c, 1, c.ints.size() - 1), c.ints[0]); };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    const auto r = static_cast<std::int64_t>(x.shape.size());
    return ref_split(x, static_cast<std::size_t>((c.ints[0] + r) % r), ints_from(c, 1, c.ints.size() - 1));
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"sizes do not add up", [d](Device dev) { split(zeros({5, 2}, d, dev), {2, 2}, 0); }, ErrorKind::ShapeMismatch,
         "split: sizes [2, 2] add up to 4 but dim 0 of [5, 2]"},
        {"dim out of range", [d](Device dev) { split(zeros({5, 2}, d, dev), {5}, 2); }, ErrorKind::IndexOutOfRange,
         "split: dim 2 is out of range"}};
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("chunk");
  e.cases = [](DType d, Rng& rng) {
    // ints: dim, n
    return std::vector<Case>{
        {"[10] into 3", {random({10}, d, rng)}, {0, 3}},
        {"[4, 9] dim 1 into 4", {random({4, 9}, d, rng)}, {1, 4}},
        {"[6, 2] into 6", {random({6, 2}, d, rng)}, {0, 6}},
        {"[2, 3] into 5", {random({2, 3}, d, rng)}, {1, 5}},
        {"[0] into 2", {random({0}, d, rng)}, {0, 2}},
    };
  };
  e.run_outputs = [](const Case& c) { return chunk(c.inputs[0], c.ints[1], c.ints[0]); };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    const auto d = static_cast<std::size_t>(c.ints[0]);
    const std::int64_t size = x.shape[d], per = (size + c.ints[1] - 1) / c.ints[1];
    std::vector<std::int64_t> sizes;
    for (std::int64_t at = 0; at < size; at += per) sizes.push_back(std::min(per, size - at));
    if (size == 0) sizes.assign(static_cast<std::size_t>(c.ints[1]), 0);  // torch.chunk: n empty pieces
    return ref_split(x, d, sizes);
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"n = 0", [d](Device dev) { chunk(zeros({5}, d, dev), 0, 0); },
                                   ErrorKind::InvalidArgument, "chunk: the number of chunks must be positive"}};
  };
  return e;
}());

// ---- repeat / roll ----

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("repeat");
  e.cases = [](DType d, Rng& rng) {
    auto add = [&](Shape s, std::vector<std::int64_t> reps) {
      return Case{shape_str(s) + " reps " + shape_str(reps), {random(s, d, rng)}, reps};
    };
    return std::vector<Case>{add({2, 3}, {2, 3}), add({3}, {2, 1, 2}), add({}, {3}), add({0, 2}, {2, 2}),
                             add({5}, {0}),       add({4, 16}, {3, 2}), add({7, 1, 5}, {1, 4, 1}), add({2, 2}, {1, 1})};
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{repeat(c.inputs[0], c.ints)}; };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    Shape in_shape(c.ints.size() - x.shape.size(), 1);
    in_shape.insert(in_shape.end(), x.shape.begin(), x.shape.end());
    Shape out_shape(in_shape.size());
    for (std::size_t k = 0; k < in_shape.size(); ++k) out_shape[k] = in_shape[k] * c.ints[k];
    Raw out(out_shape, x.dtype);
    for (std::int64_t i = 0; i < shape_numel(out_shape); ++i) {
      auto idx = unravel(i, out_shape);
      for (std::size_t k = 0; k < idx.size(); ++k) idx[k] %= in_shape[k];
      out.set(i, x.at(ravel(idx, in_shape)));
    }
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"too few reps", [d](Device dev) { repeat(zeros({2, 3}, d, dev), {2}); }, ErrorKind::InvalidArgument,
         "repeat: reps [2] has fewer entries than the 2 dims of [2, 3]"},
        {"negative rep", [d](Device dev) { repeat(zeros({2}, d, dev), {-1}); }, ErrorKind::InvalidArgument,
         "repeat: reps [-1] has a negative entry"}};
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("roll");
  e.cases = [](DType d, Rng& rng) {
    auto add = [&](Shape s, std::int64_t shift, std::int64_t dim) {
      return Case{shape_str(s) + " shift " + std::to_string(shift) + " dim " + std::to_string(dim), {random(s, d, rng)},
                  {shift, dim}};
    };
    return std::vector<Case>{add({10}, 3, 0),     add({10}, -13, 0),   add({4, 5}, 2, 1),      add({4, 5}, -1, 0),
                             add({}, 5, 0),       add({0, 3}, 1, 1),   add({33, 17}, 100, -1), add({6, 64}, 7, 0),
                             add({3, 4, 5}, 0, 1), add({3, 4, 5}, 4, 1)};
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{roll(c.inputs[0], c.ints[0], c.ints[1])}; };
  e.reference_outputs = [](const Case& c) {
    const Raw x(c.inputs[0]);
    if (x.shape.empty()) return std::vector<Tensor>{x.tensor()};
    const auto r = static_cast<std::int64_t>(x.shape.size());
    const auto d = static_cast<std::size_t>((c.ints[1] + r) % r);
    Raw out(x.shape, x.dtype);
    const std::int64_t n = x.shape[d];
    for (std::int64_t i = 0; i < shape_numel(x.shape); ++i) {
      auto idx = unravel(i, x.shape);
      // out[j] = x[j - shift], cyclically.
      idx[d] = (((idx[d] - c.ints[0]) % n) + n) % n;
      out.set(i, x.at(ravel(idx, x.shape)));
    }
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"dim out of range", [d](Device dev) { roll(zeros({4}, d, dev), 1, 1); },
                                   ErrorKind::IndexOutOfRange, "roll: dim 1 is out of range for input [4]"}};
  };
  return e;
}());

// ---- KV-cache slices ----

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("slice_write");
  e.cases = [](DType d, Rng& rng) {
    auto add = [&](Shape cache, std::int64_t pos) {
      Shape row = cache;
      row.erase(row.begin() + 1);
      return Case{shape_str(cache) + " pos " + std::to_string(pos), {random(cache, d, rng), random(row, d, rng)}, {pos}};
    };
    return std::vector<Case>{add({2, 5, 3}, 4), add({3, 1, 4, 2}, 0), add({1, 7}, 6), add({0, 4, 2}, 1),
                             add({4, 16, 64}, 7)};
  };
  e.run_outputs = [](const Case& c) {
    Tensor cache = c.inputs[0].clone();
    slice_write(cache, c.inputs[1], c.ints[0]);
    return std::vector<Tensor>{cache};
  };
  e.reference_outputs = [](const Case& c) {
    Raw cache(c.inputs[0]);
    const Raw src(c.inputs[1]);
    for (std::int64_t i = 0; i < shape_numel(src.shape); ++i) {
      auto idx = unravel(i, src.shape);
      idx.insert(idx.begin() + 1, c.ints[0]);
      cache.set(ravel(idx, cache.shape), src.at(i));
    }
    return std::vector<Tensor>{cache.tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{
        {"position past the end, cache untouched",
         [d](Device dev) {
           const Tensor cache = full({2, 4, 3}, 1, d, dev);
           expect_untouched(cache, [&] { slice_write(cache, zeros({2, 3}, d, dev), 4); });
         },
         ErrorKind::IndexOutOfRange, "slice_write: position 4 is outside [0, 4) of cache [2, 4, 3]"},
        {"negative position", [d](Device dev) { slice_write(zeros({2, 4, 3}, d, dev), zeros({2, 3}, d, dev), -1); },
         ErrorKind::IndexOutOfRange, "slice_write: position -1"},
        {"src shape", [d](Device dev) { slice_write(zeros({2, 4, 3}, d, dev), zeros({2, 4}, d, dev), 0); },
         ErrorKind::ShapeMismatch, "slice_write: src is [2, 4]"}};
  };
  return e;
}());

FERRITE_CONFORMANCE([] {
  Entry e = movement_entry("slice_read");
  e.cases = [](DType d, Rng& rng) {
    auto add = [&](Shape cache, std::int64_t len) {
      return Case{shape_str(cache) + " len " + std::to_string(len), {random(cache, d, rng)}, {len}};
    };
    return std::vector<Case>{add({2, 5, 3}, 3), add({2, 5, 3}, 5), add({2, 5, 3}, 0), add({3, 9}, 4),
                             add({4, 16, 64}, 9), add({0, 3, 2}, 2)};
  };
  e.run_outputs = [](const Case& c) { return std::vector<Tensor>{slice_read(c.inputs[0], c.ints[0])}; };
  e.reference_outputs = [](const Case& c) {
    const Raw cache(c.inputs[0]);
    Shape s = cache.shape;
    s[1] = c.ints[0];
    Raw out(s, cache.dtype);
    for (std::int64_t i = 0; i < shape_numel(s); ++i) out.set(i, cache.at(ravel(unravel(i, s), cache.shape)));
    return std::vector<Tensor>{out.tensor()};
  };
  e.errors = [](DType d) {
    return std::vector<ErrorCase>{{"too long", [d](Device dev) { slice_read(zeros({2, 4, 3}, d, dev), 5); },
                                   ErrorKind::IndexOutOfRange, "slice_read: length 5 is outside [0, 4]"},
                                  {"rank 1", [d](Device dev) { slice_read(zeros({4}, d, dev), 1); },
                                   ErrorKind::InvalidArgument, "slice_read: cache [4]"}};
  };
  return e;
}());

}  // namespace
}  // namespace ferrite::conformance
