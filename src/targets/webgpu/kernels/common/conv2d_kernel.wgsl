// conv2d_nhwc's kernel (the contract in conv2d_nhwc.wgsl), shared by conv2d_nhwc and
// conv2d_nhwc_f16. The including template names the weight's element type, `alias WeightOperand`:
// f32, or f16 where the tier stores weights in f16 (read into f32 registers: the arithmetic stays
// f32).
alias Operand = f32;
// requires: conv2d_io (common/conv2d_io.wgsl: struct Params, the bindings, struct Row, fn row_of)
@group(0) @binding(5) var<uniform> params: Params;

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

fn store_out(m: u32, n: u32, value: f32) {
  if (m < params.M && n < params.O) { conv_epilogue(m, n, value); }
}

@compute @workgroup_size(WGX, WGY)
fn conv2d_nhwc(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_id) lid: vec3<u32>) {
  let tile = wg.y + wg.z * nwg.y;
  if (tile >= params.tiles_m) { return; }
  let m0 = tile * BM;
  let lr = staging_row(lid);
  for (var l = 0u; l < LA; l++) { rows[l] = row_of(m0 + lr + l * RSTEP); }
  gemm_tile(m0, wg.x * BN, params.K, lid);
}
