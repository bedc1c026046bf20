// Ops of the shape and indexing ops (issue #5), run by Backend::shape_ops().
// X(enum name, front-end name, family); see ferrite/op.hpp.
#pragma once

#define FERRITE_SHAPE_OP_LIST(X)                          \
  X(Transpose, "transpose", Shape)                        \
  X(Permute, "permute", Shape)                            \
  X(StridedCopy, "strided_copy", Shape)                   \
  X(StridedScatter, "strided_scatter", Shape)             \
  X(Cat, "cat", Shape)                                    \
  X(Split, "split", Shape)                                \
  X(Chunk, "chunk", Shape)                                \
  X(Repeat, "repeat", Shape)                              \
  X(Roll, "roll", Shape)                                  \
  X(SliceWrite, "slice_write", Shape)                     \
  X(SliceRead, "slice_read", Shape)                       \
  X(Embedding, "embedding", Index)                        \
  X(EmbeddingBackward, "embedding_backward", Index)       \
  X(IndexSelect, "index_select", Index)                   \
  X(Gather, "gather", Index)                              \
  X(ScatterAdd, "scatter_add", Index)                     \
  X(MaskedSelect, "masked_select", Index)                 \
  X(MaskedScatter, "masked_scatter", Index)
