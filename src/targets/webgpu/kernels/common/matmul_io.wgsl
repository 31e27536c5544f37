// matmul's uniform block, bindings (matmul.wgsl states the contract), epilogue and entry points,
// shared by every matmul template: each supplies its GEMM snippet (tiled_gemm or sgmat_gemm:
// gemm_tile, the workgroup WGX x WGY) and its loads. The including template names the element
// types: `alias Operand` of x (f32, or vec4<f32> where the template reads four consecutive k at
// once) and `alias WeightOperand` of w (Operand, or vec4<f16> where the tier stores weights in f16).
struct Params {
  M: u32, N: u32, K: u32, lda: u32,
  ldw: u32, ldo: u32, tiles_m: u32, batch: u32,
  stride_x: u32, stride_w: u32, stride_o: u32,
}

@group(0) @binding(0) var<storage, read> x: array<Operand>;
@group(0) @binding(1) var<storage, read> w: array<WeightOperand>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> residual: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> workspace: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;

// requires: split_k (common/split_k.wgsl: split, split_range, split_sum, reduce_index)

// The GEMM snippets' hooks common to matmul's kernels: the workgroup's tile (its first row and the
// batch offsets of x, w and out, set by begin_tile from the entry point's tile index), no per-depth
// state, and the epilogue of one output (bias, activation, residual, bounds).
var<private> tile_m0: u32;   // this workgroup's first row, batch offsets of x, w and out
var<private> x_base: u32;
var<private> w_base: u32;
var<private> o_base: u32;

fn begin_tile(tile: u32) {
  let b = tile / params.tiles_m;
  tile_m0 = (tile % params.tiles_m) * BM;
  x_base = b * params.stride_x;
  w_base = b * params.stride_w;
  o_base = b * params.stride_o;
}

fn a_depth(k: u32) {}

// One output's bias, activation and residual, written (m < M, n < N; o_base set).
fn epilogue(m: u32, n: u32, value: f32) {
  var v = value;
  if (HAS_BIAS) { v += bias[n]; }
  v = activate(v);
  let o = o_base + m * params.ldo + n;
  if (HAS_RESIDUAL) { v += residual[o]; }
  out[o] = v;
}

// The GEMM snippets' epilogue hook: bounds, then the split's partial sum (out is dense when K is
// split: ldo = N, stride_o = M * N) or the epilogue.
fn store_out(m: u32, n: u32, value: f32) {
  if (m >= params.M || n >= params.N) { return; }
  if (SPLIT_K > 1u) {
    workspace[split * params.batch * params.stride_o + o_base + m * params.ldo + n] = value;
  } else {
    epilogue(m, n, value);
  }
}

@compute @workgroup_size(WGX, WGY)
fn matmul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_id) lid: vec3<u32>) {
  let tile = wg.y + wg.z * nwg.y;
  let tiles = params.tiles_m * params.batch;
  if (tile >= tiles * SPLIT_K) { return; }
  let part = tile / tiles;
  split = part;
  begin_tile(tile % tiles);
  let range = split_range(part, params.K);
  gemm_tile(tile_m0, wg.x * BN, range.x, range.y, lid);
}

// Split-K's second launch: each output the sum of its splits' partial sums, then the epilogue.
@compute @workgroup_size(256)
fn splitk_reduce(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lane: u32) {
  let i = reduce_index(wg, nwg, lane);
  let total = params.batch * params.stride_o;
  if (i >= total) { return; }
  let r = i % params.stride_o;
  o_base = i - r;
  epilogue(r / params.ldo, r % params.ldo, split_sum(i, total));
}
