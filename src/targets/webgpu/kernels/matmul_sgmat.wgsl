// matmul_sgmat: matmul's contract (matmul.wgsl: the same operation, bindings, Params and dispatch)
// on tensor cores through subgroup matrices: f16 operands staged from the f32 storage, f32
// accumulation, the epilogue (bias, activation, residual) in f32. For adapters with `shader-f16`,
// `subgroups` and `chromium-experimental-subgroup-matrix` offering f16 -> f32 MMA_M x MMA_N x MMA_K.
//
// Constants (prepended after this file's directives), defaults in brackets:
//   BM: u32 [64]  BN: u32 [64]  BK: u32 [32]  the workgroup's output tile and K step
//   SGM: u32 [2]  SGN: u32 [2]  subgroups along M and N; SG_SIZE: u32 [32] the adapter's subgroup size
//   MMA_M, MMA_N, MMA_K: u32 [16]  the subgroup-matrix configuration
//   HAS_BIAS: bool [false]  HAS_RESIDUAL: bool [false]  ACTIVATION: u32 [0] (0 none, 1 SiLU, 2 GELU)
//   BM a multiple of SGM * MMA_M, BN of SGN * MMA_N, BK of MMA_K; the thread count
//   SG_SIZE * SGM * SGN a multiple of BK and dividing BM * BK and BN * BK;
//   workgroup memory 2 * (BM + BN) * (BK + 8) + 4 * SGM * SGN * MMA_M * MMA_N bytes.
// Workgroup size: (SG_SIZE, SGM * SGN). Dispatch: as matmul with these BM, BN.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Each row of the workgroup is one subgroup (SG_SIZE wide) whose index is broadcast from its first
// invocation: uniform within the subgroup, which is what subgroup-matrix operations need, though not
// across the workgroup, which is all the analysis can prove.
diagnostic(off, chromium.subgroup_matrix_uniformity);

// requires: matmul_io (common/matmul_io.wgsl: struct Params and the bindings listed above)

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)
// requires: sgmat_gemm (common/sgmat_gemm.wgsl: fn gemm_tile)

var<private> tile_m0: u32;   // this workgroup's first row, batch offsets of x and w
var<private> x_base: u32;
var<private> w_base: u32;

// requires: activation (common/activation.wgsl: fn activate)

fn a_depth(k: u32) {}

fn load_a(l: u32, r: u32, k: u32) -> f32 {
  let m = tile_m0 + r;
  if (m < params.M && k < params.K) { return x[x_base + m * params.lda + k]; }
  return 0.0;
}

fn load_b(n: u32, k: u32) -> f32 {
  if (n < params.N && k < params.K) { return w[w_base + n * params.ldw + k]; }
  return 0.0;
}

var<private> o_base: u32;

fn store_out(m: u32, n: u32, value: f32) {
  if (m >= params.M || n >= params.N) { return; }
  var v = value;
  if (HAS_BIAS) { v += bias[n]; }
  v = activate(v);
  let o = o_base + m * params.ldo + n;
  if (HAS_RESIDUAL) { v += residual[o]; }
  out[o] = v;
}

@compute @workgroup_size(SG_SIZE, SGM * SGN)
fn matmul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_id) lid: vec3<u32>) {
  let tile = wg.y + wg.z * nwg.y;
  if (tile >= params.tiles_m * params.batch) { return; }
  let b = tile / params.tiles_m;
  tile_m0 = (tile % params.tiles_m) * BM;
  x_base = b * params.stride_x;
  w_base = b * params.stride_w;
  o_base = b * params.stride_o;
  gemm_tile(tile_m0, wg.x * BN, params.K, lid);
}
