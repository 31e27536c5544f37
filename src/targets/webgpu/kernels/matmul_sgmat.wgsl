// matmul_sgmat: matmul's contract (matmul.wgsl: the same operation, bindings, Params and dispatch)
// on tensor cores through subgroup matrices: x (f32 storage) staged in workgroup memory as f16, w
// (f16 storage: the tier keeps weights in f16) staged too or read straight from storage as
// fragments (B_DIRECT), f32 accumulation, the epilogue (bias, activation, residual) in f32. w is
// always a weight (the compiler uses matmul for a @ b^T of two activations). For adapters with
// `shader-f16`, `subgroups` and `chromium-experimental-subgroup-matrix` offering f16 -> f32
// MMA_M x MMA_N x MMA_K. x and w are read four k at a time: K, lda, ldw and the batch strides of x
// and w must be multiples of 4 (the compiler uses matmul for the others).
//
// Constants (prepended after this file's directives), defaults in brackets:
//   SGM: u32 [2]  SGN: u32 [2]  subgroups along M and N; FM: u32 [2]  FN: u32 [2] fragments per
//   subgroup along M and N (1 x 1, 2 x 2, 4 x 2 or 4 x 4); BM: u32 [64] = SGM * FM * MMA_M, BN: u32 [64] =
//   SGN * FN * MMA_N; BK: u32 [32] the K step
//   B_DIRECT: bool [false] w's fragments straight from storage: BN must divide N, BK divide K, ldw
//   a multiple of 8
//   SG_SIZE: u32 [32] the adapter's subgroup size; MMA_M, MMA_N, MMA_K: u32 [16] its configuration
//   SPLIT_K: u32 [1] as matmul's
//   HAS_BIAS: bool [false]  HAS_RESIDUAL: bool [false]  ACTIVATION: u32 [0] (0 none, 1 SiLU, 2 GELU)
//   BK a multiple of MMA_K and 4; the thread count SG_SIZE * SGM * SGN a multiple of BK / 4 and
//   dividing BM * BK / 4 and (staged B) BN * BK / 4; workgroup memory 2 * (BM + BN) * (BK + 8) +
//   4 * SGM * SGN * MMA_M * MMA_N bytes (BN counted as MMA_N when B_DIRECT).
// Workgroup size: (SG_SIZE, SGM * SGN). Bindings and launches: as matmul with these BM, BN.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Each row of the workgroup is one subgroup (SG_SIZE wide) whose index is broadcast from its first
// invocation: uniform within the subgroup, which is what subgroup-matrix operations need, though not
// across the workgroup, which is all the analysis can prove.
diagnostic(off, chromium.subgroup_matrix_uniformity);

alias Operand = vec4<f32>;
alias WeightOperand = f16;  // the tier's weights are stored f16, never widened
const A_DIRECT = false;     // x is f32 in storage: staged as f16 (matmul_sgmat_a16 reads f16 fragments)
// requires: matmul_io (common/matmul_io.wgsl: struct Params, the bindings, the entry points)

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)
// requires: sgmat_gemm (common/sgmat_gemm.wgsl: fn gemm_tile)


// requires: activation (common/activation.wgsl: fn activate)

fn load_a(l: u32, r: u32, k: u32) -> Operand {
  let m = tile_m0 + r;
  if (m < params.M && k < params.K) { return x[(x_base + m * params.lda + k) / 4u]; }
  return Operand(0.0);
}

fn load_b(n: u32, k: u32) -> vec4<f16> {
  let i = w_base + n * params.ldw + k;
  if (n < params.N && k < params.K) { return vec4<f16>(w[i], w[i + 1u], w[i + 2u], w[i + 3u]); }
  return vec4<f16>(0.0);
}

fn b_fragment(n: u32, k: u32) -> RightFragment {
  return subgroupMatrixLoad<RightFragment, col_major>(&w, w_base + n * params.ldw + k, params.ldw);
}

// Never called (A is staged), but sgmat_gemm's direct branch must type-check.
fn a_fragment(m: u32, k: u32) -> LeftFragment { return LeftFragment(); }
