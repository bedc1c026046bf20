// ferrite.sparse: the SparseMatrix class (CSR, CSC, COO) and its ops (ferrite/sparse.hpp), plus
// torch's spellings: sparse_csr_tensor / sparse_csc_tensor / sparse_coo_tensor at the top
// level, Tensor.to_sparse_csr(), A @ x, torch.sparse.mm.
#include "common.hpp"

namespace ferrite::py {

namespace {

using sparse::Layout;
using sparse::SparseMatrix;

Layout layout_from(const std::string& name) {
  if (name == "csr" || name == "sparse_csr") return Layout::CSR;
  if (name == "csc" || name == "sparse_csc") return Layout::CSC;
  if (name == "coo" || name == "sparse_coo") return Layout::COO;
  FERRITE_THROW(InvalidArgument, "sparse: layout must be 'csr', 'csc' or 'coo', got '", name, "'");
}

std::string layout_str(Layout layout) {
  switch (layout) {
    case Layout::CSR: return "sparse_csr";
    case Layout::CSC: return "sparse_csc";
    case Layout::COO: return "sparse_coo";
  }
  return "?";
}

std::pair<std::int64_t, std::int64_t> size_pair(nb::handle size, const char* op) {
  const auto s = int_list(size, "size");
  FERRITE_CHECK(s.size() == 2, ShapeMismatch, op, ": size must be (rows, cols), got ", s.size(), " numbers");
  return {s[0], s[1]};
}

// The dtype= and device= keywords of torch's sparse constructors: values converted, indices moved.
Tensor values_as(const Tensor& v, std::optional<DType> dtype, std::optional<Device> device) {
  Tensor r = device ? v.to(*device) : v;
  return dtype ? r.to(*dtype) : r;
}
Tensor on(const Tensor& idx, std::optional<Device> device) { return device ? idx.to(*device) : idx; }

// sparse @ dense: spmv for a vector, spmm for a matrix.
Tensor sparse_times(const SparseMatrix& a, const Tensor& x) {
  return x.dim() == 1 ? sparse::spmv(a, x) : sparse::spmm(a, x);
}

}  // namespace

void bind_sparse(nb::module_& m, nb::class_<Tensor>& t) {
  nb::module_ s = submodule(m, "sparse", "Sparse matrices (CSR, CSC, COO) over ferrite::sparse.");
  nb::class_<SparseMatrix>(s, "SparseMatrix",
                           "A 2-D sparse matrix: index tensors plus a values tensor, all on one device.")
      .def_prop_ro("layout", [](const SparseMatrix& a) { return layout_str(a.layout()); },
                   "'sparse_csr', 'sparse_csc' or 'sparse_coo'.")
      .def_prop_ro("shape", [](const SparseMatrix& a) { return nb::make_tuple(a.rows(), a.cols()); })
      .def("size", [](const SparseMatrix& a) { return nb::make_tuple(a.rows(), a.cols()); })
      .def_prop_ro("nnz", &SparseMatrix::nnz)
      .def("_nnz", &SparseMatrix::nnz)
      .def_prop_ro("dtype", &SparseMatrix::dtype)
      .def_prop_ro("index_dtype", &SparseMatrix::index_dtype)
      .def_prop_ro("device", &SparseMatrix::device)
      .def_prop_ro("is_sparse", [](const SparseMatrix&) { return true; })
      .def("values", &SparseMatrix::values)
      .def("crow_indices", &SparseMatrix::crow_indices, "CSR: the row pointers [rows + 1].")
      .def("col_indices", &SparseMatrix::col_indices, "CSR and COO: each element's column [nnz].")
      .def("ccol_indices", &SparseMatrix::ccol_indices, "CSC: the column pointers [cols + 1].")
      .def("row_indices", &SparseMatrix::row_indices, "CSC and COO: each element's row [nnz].")
      .def("indices", [](const SparseMatrix& a) {
        FERRITE_CHECK(a.layout() == Layout::COO, InvalidArgument, "indices: ", a.description(), " is not COO");
        return stack({a.row_indices(), a.col_indices()}, 0);
      }, "COO: [2, nnz] (rows, cols), as torch's.")
      .def("is_coalesced", &SparseMatrix::is_coalesced)
      .def("coalesce", &sparse::coalesce)
      .def("to_dense", &sparse::to_dense)
      .def("to_sparse_csr", &sparse::to_csr)
      .def("to_sparse_csc", &sparse::to_csc)
      .def("to_sparse_coo", &sparse::to_coo)
      .def("to_sparse", &sparse::to_coo)
      .def("t", &sparse::transpose, "The transpose, free (CSR <-> CSC).")
      .def("__matmul__", &sparse_times, nb::arg("other"))
      .def("__rmatmul__", [](const SparseMatrix& b, const Tensor& a) { return sparse::spmm(a, b); }, nb::arg("other"))
      .def("__repr__", [](const SparseMatrix& a) { return "SparseMatrix(" + a.description() + ")"; });

  s.def("csr", [](const Tensor& crow, const Tensor& col, const Tensor& values, nb::handle size) {
        auto [r, c] = size_pair(size, "sparse.csr");
        return sparse::csr(crow, col, values, r, c);
      }, nb::arg("crow_indices"), nb::arg("col_indices"), nb::arg("values"), nb::arg("size"),
      "Validated on the device (one flag read back); a violation names the first bad position.");
  s.def("csc", [](const Tensor& ccol, const Tensor& row, const Tensor& values, nb::handle size) {
        auto [r, c] = size_pair(size, "sparse.csc");
        return sparse::csc(ccol, row, values, r, c);
      }, nb::arg("ccol_indices"), nb::arg("row_indices"), nb::arg("values"), nb::arg("size"));
  s.def("coo", [](const Tensor& row, const Tensor& col, const Tensor& values, nb::handle size) {
        auto [r, c] = size_pair(size, "sparse.coo");
        return sparse::coo(row, col, values, r, c);
      }, nb::arg("row_indices"), nb::arg("col_indices"), nb::arg("values"), nb::arg("size"),
      "Entries in any order; duplicates add up.");
  s.def("from_dense", [](const Tensor& x, const std::string& layout, DType index_dtype) {
        return sparse::from_dense(x, layout_from(layout), index_dtype);
      }, nb::arg("input"), nb::arg("layout") = "csr", nb::arg("index_dtype") = DType::I64,
      "The nonzero elements (x != 0) of a 2-D tensor.");
  s.def("to_dense", &sparse::to_dense, nb::arg("input"));
  s.def("to_csr", &sparse::to_csr, nb::arg("input"));
  s.def("to_csc", &sparse::to_csc, nb::arg("input"));
  s.def("to_coo", &sparse::to_coo, nb::arg("input"));
  s.def("coalesce", &sparse::coalesce, nb::arg("input"));
  s.def("transpose", &sparse::transpose, nb::arg("input"));
  s.def("spmv", &sparse::spmv, nb::arg("input"), nb::arg("vec"), "A x for a dense vector x.");
  s.def("spmm", [](const SparseMatrix& a, const Tensor& b) { return sparse::spmm(a, b); }, nb::arg("mat1"),
        nb::arg("mat2"), "A B for a dense B.");
  s.def("spmm", [](const Tensor& a, const SparseMatrix& b) { return sparse::spmm(a, b); }, nb::arg("mat1"),
        nb::arg("mat2"), "A B for a dense A (a transposed view).");
  s.def("mm", [](const SparseMatrix& a, const Tensor& b) { return sparse::spmm(a, b); }, nb::arg("mat1"),
        nb::arg("mat2"), "torch.sparse.mm: sparse @ dense.");
  s.def("mm", [](const Tensor& a, const SparseMatrix& b) { return sparse::spmm(a, b); }, nb::arg("mat1"),
        nb::arg("mat2"));

  // 2:4 semi-structured sparsity (cuSPARSELt on the GPU).
  using sparse::Sparse24Matrix;
  nb::class_<Sparse24Matrix>(s, "Sparse24Matrix",
                             "A 2:4 (F16/BF16) or 1:2 (F32) structured matrix: its pruned dense form and, on CUDA, "
                             "cuSPARSELt's compressed form.")
      .def_prop_ro("shape", [](const Sparse24Matrix& a) { return nb::make_tuple(a.rows(), a.cols()); })
      .def_prop_ro("dtype", &Sparse24Matrix::dtype)
      .def_prop_ro("device", &Sparse24Matrix::device)
      .def_prop_ro("pruned", &Sparse24Matrix::pruned, "The pruned dense matrix.")
      .def_prop_ro("compressed", [](const Sparse24Matrix& a) -> std::optional<Tensor> {
        return a.compressed().defined() ? std::optional<Tensor>(a.compressed()) : std::nullopt;
      }, "cuSPARSELt's compressed bytes as I32 words (None on the CPU).")
      .def("to_dense", &sparse::decompress_24)
      .def("__matmul__", &sparse::matmul_24, nb::arg("other"))
      .def("__repr__", [](const Sparse24Matrix& a) { return "Sparse24Matrix(" + a.description() + ")"; });
  s.def("structured_available", [](Device device) {
        std::string why;
        const bool ok = sparse::structured_available(device, &why);
        return nb::make_tuple(ok, why);
      }, nb::arg("device"), "(True, '') when the 2:4 products run on `device`, else (False, why).");
  s.def("prune_24", &sparse::prune_24, nb::arg("input"),
        "All but the 2 largest magnitudes of every 4 row elements (1 of 2 for F32) set to 0; ties to the lower "
        "position, NaN kept first.");
  s.def("compress_24", &sparse::compress_24, nb::arg("input"), "A pruned matrix as a Sparse24Matrix.");
  s.def("to_sparse_semi_structured", &sparse::compress_24, nb::arg("input"),
        "torch.sparse.to_sparse_semi_structured: the input must already be pruned (see prune_24).");
  s.def("decompress_24", &sparse::decompress_24, nb::arg("input"));
  s.def("matmul_24", &sparse::matmul_24, nb::arg("input"), nb::arg("other"), "A B for a structured A.");
  s.def("linear_24", &sparse::linear_24, nb::arg("input"), nb::arg("weight"),
        "input @ weight.T for a structured weight (F.linear).");

  const auto dt = nb::arg("dtype") = nb::none();
  const auto dv = nb::arg("device") = nb::none();
  m.def("sparse_csr_tensor", [](const Tensor& crow, const Tensor& col, const Tensor& values, nb::handle size,
                                std::optional<DType> dtype, std::optional<Device> device) {
        auto [r, c] = size_pair(size, "sparse_csr_tensor");
        return sparse::csr(on(crow, device), on(col, device), values_as(values, dtype, device), r, c);
      }, nb::arg("crow_indices"), nb::arg("col_indices"), nb::arg("values"), nb::arg("size"), nb::kw_only(), dt, dv);
  m.def("sparse_csc_tensor", [](const Tensor& ccol, const Tensor& row, const Tensor& values, nb::handle size,
                                std::optional<DType> dtype, std::optional<Device> device) {
        auto [r, c] = size_pair(size, "sparse_csc_tensor");
        return sparse::csc(on(ccol, device), on(row, device), values_as(values, dtype, device), r, c);
      }, nb::arg("ccol_indices"), nb::arg("row_indices"), nb::arg("values"), nb::arg("size"), nb::kw_only(), dt, dv);
  m.def("sparse_coo_tensor", [](const Tensor& indices, const Tensor& values, nb::handle size,
                                std::optional<DType> dtype, std::optional<Device> device) {
        auto [r, c] = size_pair(size, "sparse_coo_tensor");
        FERRITE_CHECK(indices.dim() == 2 && indices.shape()[0] == 2, ShapeMismatch,
                      "sparse_coo_tensor: indices must be [2, nnz], got ", indices.description());
        const Tensor idx = on(indices, device);
        return sparse::coo(idx.select(0, 0), idx.select(0, 1), values_as(values, dtype, device), r, c);
      }, nb::arg("indices"), nb::arg("values"), nb::arg("size"), nb::kw_only(), dt, dv,
      "indices [2, nnz] (rows, cols); duplicates add up.");
  t.def("to_sparse_csr", [](const Tensor& x) { return sparse::from_dense(x, Layout::CSR); });
  t.def("to_sparse_csc", [](const Tensor& x) { return sparse::from_dense(x, Layout::CSC); });
  t.def("to_sparse", [](const Tensor& x) { return sparse::from_dense(x, Layout::COO); }, "COO, as torch's.");
  t.def("to_sparse_coo", [](const Tensor& x) { return sparse::from_dense(x, Layout::COO); });
}

}  // namespace ferrite::py
