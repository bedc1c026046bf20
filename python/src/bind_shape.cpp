// Shape and indexing ops under PyTorch's names (cat, stack, split, chunk, repeat, roll,
// index_select, gather, scatter_add, masked_select, masked_scatter), the view ops as
// functions (torch.reshape, torch.narrow, ...), ferrite's strided and KV-cache ops, and
// ferrite.nn.embedding. ferrite/shape.hpp.
#include "common.hpp"

namespace ferrite::py {

void bind_shape(nb::module_& m, nb::class_<Tensor>& t) {
  // View ops as functions (the methods are in bind_tensor.cpp).
  m.def("reshape", [](const Tensor& x, nb::handle shape) { return x.reshape(int_list(shape, "reshape")); },
        nb::arg("input"), nb::arg("shape"));
  m.def("flatten", &Tensor::flatten, nb::arg("input"), nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  m.def("unflatten", &Tensor::unflatten, nb::arg("input"), nb::arg("dim"), nb::arg("sizes"));
  m.def("squeeze", [](const Tensor& x, std::optional<std::int64_t> d) { return d ? x.squeeze(*d) : x.squeeze(); },
        nb::arg("input"), nb::arg("dim") = nb::none());
  m.def("unsqueeze", &Tensor::unsqueeze, nb::arg("input"), nb::arg("dim"));
  m.def("narrow", &Tensor::narrow, nb::arg("input"), nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  m.def("select", &Tensor::select, nb::arg("input"), nb::arg("dim"), nb::arg("index"));
  m.def("t", &Tensor::t, nb::arg("input"));
  m.def("diagonal", &Tensor::diagonal, nb::arg("input"), nb::arg("offset") = 0, nb::arg("dim1") = 0,
        nb::arg("dim2") = 1);
  m.def("as_strided", [](const Tensor& x, Shape size, Strides stride, std::optional<std::int64_t> offset) {
        return offset ? x.as_strided(size, stride, *offset) : x.as_strided(size, stride);
      }, nb::arg("input"), nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none());
  m.def("transpose", &transpose, nb::arg("input"), nb::arg("dim0"), nb::arg("dim1"), "A view with two dims swapped.");
  m.def("swapaxes", &transpose, nb::arg("input"), nb::arg("axis0"), nb::arg("axis1"));
  m.def("permute", [](const Tensor& x, nb::handle dims) { return permute(x, int_list(dims, "permute")); },
        nb::arg("input"), nb::arg("dims"), "A view with the dims reordered.");
  m.def("contiguous", &Tensor::contiguous, nb::arg("input"));
  m.def("clone", &Tensor::clone, nb::arg("input"));

  m.def("cat", &cat, nb::arg("tensors"), nb::arg("dim") = 0);
  m.attr("concat") = m.attr("cat");
  m.attr("concatenate") = m.attr("cat");
  m.def("stack", &stack, nb::arg("tensors"), nb::arg("dim") = 0);
  auto split_f = [](const Tensor& x, nb::handle how, std::int64_t dim) {
    if (PyLong_Check(how.ptr())) {  // pieces of that size, the last one smaller (torch.split)
      const std::int64_t size = nb::cast<std::int64_t>(how);
      FERRITE_CHECK(size > 0 || x.size(dim) == 0, InvalidArgument, "split: split_size must be positive, got ", size);
      std::vector<std::int64_t> sizes;
      for (std::int64_t left = x.size(dim); left > 0; left -= size) sizes.push_back(std::min(size, left));
      if (sizes.empty()) sizes.push_back(0);
      return split(x, sizes, dim);
    }
    return split(x, int_list(how, "split"), dim);
  };
  m.def("split", split_f, nb::arg("tensor"), nb::arg("split_size_or_sections"), nb::arg("dim") = 0,
        "Views of x: pieces of split_size (an int) or of the listed sizes along dim.");
  t.def("split", split_f, nb::arg("split_size"), nb::arg("dim") = 0);
  m.def("chunk", &chunk, nb::arg("input"), nb::arg("chunks"), nb::arg("dim") = 0);
  t.def("chunk", &chunk, nb::arg("chunks"), nb::arg("dim") = 0);
  t.def("repeat", [](const Tensor& x, nb::args reps) { return repeat(x, shape_args(reps, "repeat")); });
  m.def("repeat", [](const Tensor& x, nb::handle reps) { return repeat(x, int_list(reps, "repeat")); },
        nb::arg("input"), nb::arg("repeats"));
  auto roll_f = [](const Tensor& x, nb::handle shifts, nb::handle dims) {
    const auto s = int_list(shifts, "roll");
    if (dims.is_none()) {  // torch: the flattened tensor, rolled, in its shape again
      FERRITE_CHECK(s.size() == 1, InvalidArgument, "roll: without dims, shifts must be one int");
      return roll(x.reshape({-1}), s[0], 0).reshape(x.shape());
    }
    const auto d = int_list(dims, "roll");
    FERRITE_CHECK(s.size() == d.size(), InvalidArgument, "roll: shifts and dims must have the same length (", s.size(),
                  " and ", d.size(), ")");
    Tensor out = x;
    for (std::size_t i = 0; i < s.size(); ++i) out = roll(out, s[i], d[i]);
    return out;
  };
  m.def("roll", roll_f, nb::arg("input"), nb::arg("shifts"), nb::arg("dims") = nb::none());
  t.def("roll", roll_f, nb::arg("shifts"), nb::arg("dims") = nb::none());

  m.def("index_select", &index_select, nb::arg("input"), nb::arg("dim"), nb::arg("index"));
  t.def("index_select", &index_select, nb::arg("dim"), nb::arg("index"));
  m.def("gather", &gather, nb::arg("input"), nb::arg("dim"), nb::arg("index"));
  t.def("gather", &gather, nb::arg("dim"), nb::arg("index"));
  m.def("scatter_add", &scatter_add, nb::arg("input"), nb::arg("dim"), nb::arg("index"), nb::arg("src"),
        "Out of place; duplicates added in index order (deterministic).");
  t.def("scatter_add", &scatter_add, nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  m.def("masked_select", &masked_select, nb::arg("input"), nb::arg("mask"));
  t.def("masked_select", &masked_select, nb::arg("mask"));
  m.def("masked_scatter", &masked_scatter, nb::arg("input"), nb::arg("mask"), nb::arg("source"));
  t.def("masked_scatter", &masked_scatter, nb::arg("mask"), nb::arg("source"));

  m.def("strided_copy", &strided_copy, nb::arg("input"), nb::arg("shape"), nb::arg("strides"), nb::arg("offset"));
  m.def("strided_scatter", &strided_scatter, nb::arg("dst"), nb::arg("src"), nb::arg("shape"), nb::arg("strides"),
        nb::arg("offset"), "In place into dst.");
  m.def("slice_write", &slice_write, nb::arg("cache"), nb::arg("src"), nb::arg("pos"),
        "KV cache: src [batch, ...] written at position pos of cache [batch, max_len, ...], in place.");
  m.def("slice_read", &slice_read, nb::arg("cache"), nb::arg("len"));

  nb::module_ nn = nb::hasattr(m, "nn") ? nb::borrow<nb::module_>(m.attr("nn")) : m.def_submodule("nn", "Neural-network ops.");
  nn.def("embedding", &nn::embedding, nb::arg("weight"), nb::arg("indices"),
         "Rows of weight picked by indices of any shape (ferrite's argument order; "
         "nn.functional.embedding takes torch's).");
  nn.def("embedding_backward", &nn::embedding_backward, nb::arg("grad"), nb::arg("indices"),
         nb::arg("num_embeddings"));
}

}  // namespace ferrite::py
