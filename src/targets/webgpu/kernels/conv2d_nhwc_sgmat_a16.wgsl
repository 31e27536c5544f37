// conv2d_nhwc_sgmat_a16: conv2d_nhwc_sgmat with the input stored in f16 and already zero-padded
// ([N, H + 2 pad, W + 2 pad, C], written so by the launch before it), both operands' fragments
// read straight from storage: a fragment's 16 rows are 16 neighbouring output pixels of one output
// row, so for one window offset (kh, kw) and 16 channels they sit stride * C apart in the padded
// input. Nothing staged in workgroup memory, no barrier per step. Contract otherwise conv2d_nhwc's
// (weight [O, KH, KW, C] f16, Params with H, W and pad those of the unpadded input, dispatch).
//
// Constants: as conv2d_nhwc_sgmat, B_DIRECT true. Besides its rules: OW and C multiples of 16,
// BK dividing K.
// Workgroup size: (SG_SIZE, SGM * SGN). Bindings and launches: conv2d_nhwc's with these BM, BN.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Subgroup indices are broadcast from each subgroup's first invocation (see matmul_sgmat.wgsl).
diagnostic(off, chromium.subgroup_matrix_uniformity);

alias Operand = f16;        // the padded input: read only as whole fragments
alias WeightOperand = f16;
const A_DIRECT = true;
// requires: conv2d_io (common/conv2d_io.wgsl: struct Params, the bindings, the entry points)

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)
// requires: sgmat_gemm (common/sgmat_gemm.wgsl: fn gemm_tile)

// requires: activation (common/activation.wgsl: fn activate)

// Never called (A is not staged), but sgmat_gemm's staging must type-check.
fn load_a(l: u32, r: u32, k: u32) -> Operand { return Operand(0.0); }

fn load_b(n: u32, k: u32) -> vec4<f16> {
  let i = n * params.K + k;
  if (n < params.O && k < params.K) { return vec4<f16>(weight[i], weight[i + 1u], weight[i + 2u], weight[i + 3u]); }
  return vec4<f16>(0.0);
}

fn b_fragment(n: u32, k: u32) -> RightFragment {
  return subgroupMatrixLoad<RightFragment, col_major>(&weight, n * params.K + k, params.K);
}

// Output pixel m's first row in the padded input (16 neighbours follow stride * C apart), a_depth's
// window offset and channel added.
fn a_fragment(m: u32, k: u32) -> LeftFragment {
  let mm = select(0u, m, m < params.M);
  let ow = mm % params.OW;
  let rest = mm / params.OW;
  let oh = rest % params.OH;
  let n = rest / params.OH;
  let hp = params.H + 2u * params.pad;
  let wp = params.W + 2u * params.pad;
  let pixel = (n * hp + oh * params.stride + u32(depth_kh)) * wp + ow * params.stride + u32(depth_kw);
  return subgroupMatrixLoad<LeftFragment, row_major>(&input, pixel * params.C + depth_c, params.stride * params.C);
}
