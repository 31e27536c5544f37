// matmul_sgmat_a16: matmul_sgmat with x stored in f16 (written so by the launch before it), both
// operands' fragments read straight from storage: nothing staged in workgroup memory, no barrier
// per step. Same contract as matmul (bindings, Params, dispatch), x and w f16.
//
// Constants: as matmul_sgmat, B_DIRECT true. Besides matmul_sgmat's rules: M, K, lda and the
// batch stride of x multiples of 16 (a fragment's rows are all inside M or all past it, which then
// reads row 0 and stores nothing), BK dividing K.
// Workgroup size: (SG_SIZE, SGM * SGN). Bindings and launches: as matmul with these BM, BN.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Subgroup indices are broadcast from each subgroup's first invocation (see matmul_sgmat.wgsl).
diagnostic(off, chromium.subgroup_matrix_uniformity);

alias Operand = f16;        // x: read only as whole fragments
alias WeightOperand = f16;
const A_DIRECT = true;
// requires: matmul_io (common/matmul_io.wgsl: struct Params, the bindings, the entry points)

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)
// requires: sgmat_gemm (common/sgmat_gemm.wgsl: fn gemm_tile)

// requires: activation (common/activation.wgsl: fn activate)

// Never called (A is not staged), but sgmat_gemm's staging must type-check.
fn load_a(l: u32, r: u32, k: u32) -> Operand { return Operand(0.0); }

fn load_b(n: u32, k: u32) -> vec4<f16> {
  let i = w_base + n * params.ldw + k;
  if (n < params.N && k < params.K) { return vec4<f16>(w[i], w[i + 1u], w[i + 2u], w[i + 3u]); }
  return vec4<f16>(0.0);
}

fn b_fragment(n: u32, k: u32) -> RightFragment {
  return subgroupMatrixLoad<RightFragment, col_major>(&w, w_base + n * params.ldw + k, params.ldw);
}

fn a_fragment(m: u32, k: u32) -> LeftFragment {
  let row = select(0u, m, m < params.M);
  return subgroupMatrixLoad<LeftFragment, row_major>(&x, x_base + row * params.lda + k, params.lda);
}
