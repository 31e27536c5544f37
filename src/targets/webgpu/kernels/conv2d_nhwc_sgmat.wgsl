// conv2d_nhwc_sgmat: conv2d_nhwc's contract (conv2d_nhwc.wgsl: the same operation, weight layout
// [O, KH, KW, C], bindings, Params and dispatch) as an implicit GEMM on tensor cores through
// subgroup matrices: the input (f32 storage) staged in workgroup memory as f16 (the im2col gather
// and the zero padding happen in the staging), the weight (f16 storage: the tier keeps weights in
// f16) staged too or read straight from storage as fragments (B_DIRECT: BN must divide O and BK
// the depth KH * KW * C), f32 accumulation and epilogue. Features as matmul_sgmat. Input
// and weight are read four channels at a time: C must be a multiple of 4 (the compiler uses
// conv2d_nhwc for the others).
//
// Constants: as matmul_sgmat (SGM, SGN, FM, FN, BM, BN, BK, B_DIRECT, SG_SIZE, MMA_M, MMA_N, MMA_K, SPLIT_K,
//   HAS_BIAS [true], HAS_RESIDUAL, ACTIVATION), with the same rules.
// Workgroup size: (SG_SIZE, SGM * SGN). Bindings and launches: conv2d_nhwc's with these BM, BN.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Subgroup indices are broadcast from each subgroup's first invocation (see matmul_sgmat.wgsl).
diagnostic(off, chromium.subgroup_matrix_uniformity);

alias Operand = vec4<f32>;
alias WeightOperand = f16;  // the tier's weights are stored f16, never widened
const A_DIRECT = false;     // input is f32 in storage: staged as f16 (conv2d_nhwc_sgmat_a16 reads f16 fragments)
// requires: conv2d_io (common/conv2d_io.wgsl: struct Params, the bindings, the entry points)

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)
// requires: sgmat_gemm (common/sgmat_gemm.wgsl: fn gemm_tile)

// requires: activation (common/activation.wgsl: fn activate)

fn load_a(l: u32, r: u32, k: u32) -> Operand {
  let row = rows[l];
  let ih = row.ih0 + depth_kh;
  let iw = row.iw0 + depth_kw;
  if (row.valid && depth_ok && ih >= 0 && iw >= 0 && u32(ih) < params.H && u32(iw) < params.W) {
    return input[(row.base + (u32(ih) * params.W + u32(iw)) * params.C + depth_c) / 4u];
  }
  return Operand(0.0);
}

fn load_b(n: u32, k: u32) -> vec4<f16> {
  let i = n * params.K + k;
  if (n < params.O && k < params.K) { return vec4<f16>(weight[i], weight[i + 1u], weight[i + 2u], weight[i + 3u]); }
  return vec4<f16>(0.0);
}

fn b_fragment(n: u32, k: u32) -> RightFragment {
  return subgroupMatrixLoad<RightFragment, col_major>(&weight, n * params.K + k, params.K);
}

// Never called (A is staged), but sgmat_gemm's direct branch must type-check.
fn a_fragment(m: u32, k: u32) -> LeftFragment { return LeftFragment(); }
