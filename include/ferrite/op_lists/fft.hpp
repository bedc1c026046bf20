// Ops of the FFT family (issue #14), run by Backend::fft_ops().
// X(enum name, front-end name, family); see ferrite/op.hpp. Every transform runs on one
// backend method (FftOps::execute); the names exist so errors and supports() can say which
// front-end call was made. supports() takes the input's dtype.
#pragma once

#define FERRITE_FFT_OP_LIST(X) \
  X(Fft, "fft", Fft)           \
  X(Ifft, "ifft", Fft)         \
  X(Rfft, "rfft", Fft)         \
  X(Irfft, "irfft", Fft)       \
  X(Hfft, "hfft", Fft)         \
  X(Ihfft, "ihfft", Fft)       \
  X(Fft2, "fft2", Fft)         \
  X(Ifft2, "ifft2", Fft)       \
  X(Rfft2, "rfft2", Fft)       \
  X(Irfft2, "irfft2", Fft)     \
  X(Fftn, "fftn", Fft)         \
  X(Ifftn, "ifftn", Fft)       \
  X(Rfftn, "rfftn", Fft)       \
  X(Irfftn, "irfftn", Fft)
