// conv2d_nhwc's kernel (the contract in conv2d_nhwc.wgsl), shared by conv2d_nhwc and
// conv2d_nhwc_f16. The including template names the weight's element type, `alias WeightOperand`:
// f32, or f16 where the tier stores weights in f16 (read into f32 registers: the arithmetic stays
// f32).
alias Operand = f32;
// requires: conv2d_io (common/conv2d_io.wgsl: struct Params, the bindings, the entry points)

// requires: tiled_gemm (common/tiled_gemm.wgsl: fn gemm_tile)

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)

// requires: activation (common/activation.wgsl: fn activate)

fn load_a(l: u32, r: u32, k: u32) -> f32 {
  let row = rows[l];
  let ih = row.ih0 + depth_kh;
  let iw = row.iw0 + depth_kw;
  if (row.valid && depth_ok && ih >= 0 && iw >= 0 && u32(ih) < params.H && u32(iw) < params.W) {
    return input[row.base + (u32(ih) * params.W + u32(iw)) * params.C + depth_c];
  }
  return 0.0;
}

fn load_b(n: u32, k: u32) -> WeightOperand {
  if (n < params.O && k < params.K) { return weight[n * params.K + k]; }
  return WeightOperand(0.0);
}
