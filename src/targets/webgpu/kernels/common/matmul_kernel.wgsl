// matmul's kernel (the contract in matmul.wgsl), shared by matmul and matmul_f16. The
// including template names the weight's element type, `alias WeightOperand`: f32, or f16 where
// the tier stores weights in f16 (read into f32 registers: the arithmetic stays f32).
alias Operand = f32;
// requires: matmul_io (common/matmul_io.wgsl: struct Params, the bindings, the entry points)

// requires: tiled_gemm (common/tiled_gemm.wgsl: fn gemm_tile)

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)

// requires: activation (common/activation.wgsl: fn activate)


fn load_a(l: u32, r: u32, k: u32) -> f32 {
  let m = tile_m0 + r;
  if (m < params.M && k < params.K) { return x[x_base + m * params.lda + k]; }
  return 0.0;
}

fn load_b(n: u32, k: u32) -> WeightOperand {
  if (n < params.N && k < params.K) { return w[w_base + n * params.ldw + k]; }
  return WeightOperand(0.0);
}
