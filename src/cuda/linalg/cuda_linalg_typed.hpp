// The typed (S/D/C/Z) cuSOLVER routines that have no 64-bit generic form: orgqr/ungqr,
// gesvdj and gesvdjBatched, as overloads on the element type so the callers stay
// dtype-generic.
#pragma once

#include <cuComplex.h>
#include <cusolverDn.h>

namespace ferrite::cuda::typed {

#define FERRITE_ORGQR(T, S)                                                                                   \
  inline cusolverStatus_t orgqr_buffer(cusolverDnHandle_t h, int m, int n, int k, const T* a, int lda,        \
                                       const T* tau, int* lwork) {                                            \
    return cusolverDn##S##_bufferSize(h, m, n, k, a, lda, tau, lwork);                                       \
  }                                                                                                           \
  inline cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, T* a, int lda, const T* tau, T* work, \
                                int lwork, int* info) {                                                       \
    return cusolverDn##S(h, m, n, k, a, lda, tau, work, lwork, info);                                        \
  }
FERRITE_ORGQR(float, Sorgqr)
FERRITE_ORGQR(double, Dorgqr)
FERRITE_ORGQR(cuComplex, Cungqr)
FERRITE_ORGQR(cuDoubleComplex, Zungqr)
#undef FERRITE_ORGQR

#define FERRITE_GESVDJ(T, R, S)                                                                                    \
  inline cusolverStatus_t gesvdj_buffer(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, const T* a,   \
                                        int lda, const R* s, const T* u, int ldu, const T* v, int ldv, int* lwork, \
                                        gesvdjInfo_t p, int batch) {                                               \
    return cusolverDn##S##_bufferSize(h, jobz, m, n, a, lda, s, u, ldu, v, ldv, lwork, p, batch);                \
  }                                                                                                                \
  inline cusolverStatus_t gesvdj(cusolverDnHandle_t h, cusolverEigMode_t jobz, int m, int n, T* a, int lda, R* s,  \
                                 T* u, int ldu, T* v, int ldv, T* work, int lwork, int* info, gesvdjInfo_t p,      \
                                 int batch) {                                                                      \
    return cusolverDn##S(h, jobz, m, n, a, lda, s, u, ldu, v, ldv, work, lwork, info, p, batch);                  \
  }
FERRITE_GESVDJ(float, float, SgesvdjBatched)
FERRITE_GESVDJ(double, double, DgesvdjBatched)
FERRITE_GESVDJ(cuComplex, float, CgesvdjBatched)
FERRITE_GESVDJ(cuDoubleComplex, double, ZgesvdjBatched)
#undef FERRITE_GESVDJ

// gesvdj (one matrix, any m×n; `econ` = 1 gives U m×min(m, n), V n×min(m, n)).
#define FERRITE_GESVDJ_ONE(T, R, S)                                                                               \
  inline cusolverStatus_t gesvdj_one_buffer(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n,  \
                                            const T* a, int lda, const R* s, const T* u, int ldu, const T* v,     \
                                            int ldv, int* lwork, gesvdjInfo_t p) {                                \
    return cusolverDn##S##_bufferSize(h, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, lwork, p);                 \
  }                                                                                                               \
  inline cusolverStatus_t gesvdj_one(cusolverDnHandle_t h, cusolverEigMode_t jobz, int econ, int m, int n, T* a,   \
                                     int lda, R* s, T* u, int ldu, T* v, int ldv, T* work, int lwork, int* info,   \
                                     gesvdjInfo_t p) {                                                            \
    return cusolverDn##S(h, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, work, lwork, info, p);                  \
  }
FERRITE_GESVDJ_ONE(float, float, Sgesvdj)
FERRITE_GESVDJ_ONE(double, double, Dgesvdj)
FERRITE_GESVDJ_ONE(cuComplex, float, Cgesvdj)
FERRITE_GESVDJ_ONE(cuDoubleComplex, double, Zgesvdj)
#undef FERRITE_GESVDJ_ONE

}  // namespace ferrite::cuda::typed
