#include "targets/cpu/runtime/gemm.h"

#include <dnnl.h>

#include "core/error.h"

namespace websd::cpu {

void gemm(bool transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  const dnnl_status_t status = dnnl_sgemm('N', transpose_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != dnnl_success) {
    throw Error("cpu", "oneDNN sgemm failed (status " + std::to_string(static_cast<int>(status)) +
                           ") for M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k));
  }
}

}  // namespace websd::cpu
