// Row-major single-precision GEMM for the CPU kernels: C = alpha * A * op(B) + beta * C, with
// op(B) = B or B^T. Runs oneDNN's JIT GEMM, which picks the best ISA of the machine at run time
// (AVX-512 here) and uses the machine's threads. Thread-safe.
#pragma once

#include <cstdint>

namespace websd::cpu {

void gemm(bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc);

}  // namespace websd::cpu
