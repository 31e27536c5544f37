// conv2d_nhwc_sgmat: conv2d_nhwc's contract (conv2d_nhwc.wgsl: the same operation, weight layout
// [O, KH, KW, C], bindings, Params and dispatch) as an implicit GEMM on tensor cores through
// subgroup matrices: the input (f32 storage) and the weight (f16 storage: the tier keeps weights
// in f16) staged in workgroup memory as f16 (the im2col gather and the zero padding happen in the
// staging), f32 accumulation and epilogue. Features as matmul_sgmat. Input
// and weight are read four channels at a time: C must be a multiple of 4 (the compiler uses
// conv2d_nhwc for the others).
//
// Constants: as matmul_sgmat (SGM, SGN, BM, BN, BK, SG_SIZE, MMA_M, MMA_N, MMA_K, HAS_BIAS [true],
//   HAS_RESIDUAL, ACTIVATION), with the same rules, and SPLIT_K: u32 [1], the splits of K (split-K,
//   for outputs too small to fill the GPU: 8x8 latents of 1280 channels).
// Bindings: conv2d_nhwc's, then 5 workspace: read_write [SPLIT_K * M * O] (the splits' partial
//   sums; only with SPLIT_K > 1), 6 params.
// Launches: SPLIT_K = 1: entry conv2d_nhwc (workgroup (SG_SIZE, SGM * SGN)), dispatched as
//   conv2d_nhwc with these BM, BN. SPLIT_K > 1: conv2d_nhwc over tiles_m * SPLIT_K tile rows
//   (folded as conv2d_nhwc's), each split's K range ceil(ceil(K / SPLIT_K) / BK) * BK deep, writing
//   its partial sums, then splitk_reduce (workgroup 256, fold1d(ceil(M * O / 256))): the sum, bias,
//   activation and residual into out.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Subgroup indices are broadcast from each subgroup's first invocation (see matmul_sgmat.wgsl).
diagnostic(off, chromium.subgroup_matrix_uniformity);

alias Operand = vec4<f32>;
alias WeightOperand = vec4<f16>;  // the tier's weights are stored f16, never widened
// requires: conv2d_io (common/conv2d_io.wgsl: struct Params, the bindings listed above, struct Row, fn row_of)
@group(0) @binding(5) var<storage, read_write> workspace: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)
// requires: sgmat_gemm (common/sgmat_gemm.wgsl: fn gemm_tile)

// requires: activation (common/activation.wgsl: fn activate)

var<private> split: u32;  // this workgroup's split of K (split-K)

fn load_a(l: u32, r: u32, k: u32) -> Operand {
  let row = rows[l];
  let ih = row.ih0 + depth_kh;
  let iw = row.iw0 + depth_kw;
  if (row.valid && depth_ok && ih >= 0 && iw >= 0 && u32(ih) < params.H && u32(iw) < params.W) {
    return input[(row.base + (u32(ih) * params.W + u32(iw)) * params.C + depth_c) / 4u];
  }
  return Operand(0.0);
}

fn load_b(n: u32, k: u32) -> WeightOperand {
  if (n < params.O && k < params.K) { return weight[(n * params.K + k) / 4u]; }
  return WeightOperand(0.0);
}

fn store_out(m: u32, n: u32, value: f32) {
  if (m >= params.M || n >= params.O) { return; }
  if (SPLIT_K > 1u) {
    workspace[(split * params.M + m) * params.O + n] = value;
  } else {
    conv_epilogue(m, n, value);
  }
}

@compute @workgroup_size(SG_SIZE, SGM * SGN)
fn conv2d_nhwc(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_id) lid: vec3<u32>) {
  let tile = wg.y + wg.z * nwg.y;
  if (tile >= params.tiles_m * SPLIT_K) { return; }
  // The K range from a let, not from the private `split`: reads of private variables count as
  // non-uniform, and the loop over it holds barriers.
  let part = tile / params.tiles_m;
  split = part;
  let m0 = (tile % params.tiles_m) * BM;
  let lr = (lid.y * SG_SIZE + lid.x) / KV;
  for (var l = 0u; l < LA; l++) { rows[l] = row_of(m0 + lr + l * RSTEP); }
  let depth = (((params.K + SPLIT_K - 1u) / SPLIT_K + BK - 1u) / BK) * BK;
  let k_begin = min(part * depth, params.K);
  gemm_tile(m0, wg.x * BN, k_begin, min(k_begin + depth, params.K), lid);
}

// Split-K's second launch: each output the sum of its splits' partial sums, then the epilogue.
@compute @workgroup_size(256)
fn splitk_reduce(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lane: u32) {
  let i = (wg.x + wg.y * nwg.x) * 256u + lane;
  let total = params.M * params.O;
  if (i >= total) { return; }
  var sum = 0.0;
  for (var s = 0u; s < SPLIT_K; s++) { sum += workspace[s * total + i]; }
  conv_epilogue(i / params.O, i % params.O, sum);
}
