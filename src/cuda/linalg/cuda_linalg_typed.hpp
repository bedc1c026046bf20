// The typed (S/D/C/Z) cuSOLVER routines: those that have no 64-bit generic form (orgqr/ungqr,
// gesvdj and gesvdjBatched) and the 32-bit LU (getrf/getrs with int pivots, what PyTorch
// calls), as overloads on the element type so the callers stay dtype-generic.
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

// LU with 32-bit pivots (the front end's pivot dtype): no 64-bit pivot arrays to convert.
#define FERRITE_GETRF(T, S)                                                                                    \
  inline cusolverStatus_t getrf_buffer(cusolverDnHandle_t h, int m, int n, T* a, int lda, int* lwork) {       \
    return cusolverDn##S##getrf_bufferSize(h, m, n, a, lda, lwork);                                          \
  }                                                                                                           \
  inline cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, T* a, int lda, T* work, int* pivots,        \
                                int* info) {                                                                  \
    return cusolverDn##S##getrf(h, m, n, a, lda, work, pivots, info);                                        \
  }                                                                                                           \
  inline cusolverStatus_t getrs(cusolverDnHandle_t h, int n, int nrhs, const T* lu, int lda, const int* pivots, \
                                T* b, int ldb, int* info) {                                                   \
    return cusolverDn##S##getrs(h, CUBLAS_OP_N, n, nrhs, lu, lda, pivots, b, ldb, info);                     \
  }
FERRITE_GETRF(float, S)
FERRITE_GETRF(double, D)
FERRITE_GETRF(cuComplex, C)
FERRITE_GETRF(cuDoubleComplex, Z)
#undef FERRITE_GETRF

}  // namespace ferrite::cuda::typed
