// conv2d_nhwc's uniform block, bindings (conv2d_nhwc.wgsl states the contract), output-row
// geometry, epilogue and entry points, shared by every convolution template: each supplies its
// GEMM snippet (tiled_gemm or sgmat_gemm: gemm_tile, staging_row, the workgroup WGX x WGY) and its
// loads. The including template names the element types: `alias Operand` of the input (f32, or
// vec4<f32> where the template reads four channels at once) and `alias WeightOperand` of the
// weight (Operand, or vec4<f16> where the tier stores weights in f16).
struct Params {
  N: u32, H: u32, W: u32, C: u32,
  OH: u32, OW: u32, O: u32, KH: u32,
  KW: u32, stride: u32, pad: u32, M: u32,
  K: u32, tiles_m: u32,
}

@group(0) @binding(0) var<storage, read> input: array<Operand>;
@group(0) @binding(1) var<storage, read> weight: array<WeightOperand>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> residual: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> workspace: array<f32>;
@group(0) @binding(6) var<uniform> params: Params;

// requires: split_k (common/split_k.wgsl: split, split_range, split_sum, reduce_index)

// One output row's receptive field origin: the input pixel (0, 0) of its window, or invalid.
struct Row { base: u32, ih0: i32, iw0: i32, valid: bool }

fn row_of(m: u32) -> Row {
  var row: Row;
  row.valid = m < params.M;
  let mm = min(m, params.M - 1u);
  let ow = mm % params.OW;
  let rest = mm / params.OW;
  let oh = rest % params.OH;
  let n = rest / params.OH;
  row.base = n * params.H * params.W * params.C;
  row.ih0 = i32(oh * params.stride) - i32(params.pad);
  row.iw0 = i32(ow * params.stride) - i32(params.pad);
  return row;
}

// The GEMM's A at depth k is the input at the row's window offset (kh, kw) and channel c, k =
// (kh * KW + kw) * C + c: a_depth (the GEMM snippets' hook, once per staged depth) keeps them, and
// `rows` the receptive-field origin of each row this thread stages (LA of them, set per tile).
var<private> rows: array<Row, LA>;
var<private> depth_kh: i32;
var<private> depth_kw: i32;
var<private> depth_c: u32;
var<private> depth_ok: bool;

fn a_depth(k: u32) {
  let kwc = params.KW * params.C;
  depth_ok = k < params.K;
  depth_kh = i32(k / kwc);
  depth_kw = i32((k % kwc) / params.C);
  depth_c = k % params.C;
}

// One output's bias, activation and residual, written (m < M, n < O).
fn conv_epilogue(m: u32, n: u32, value: f32) {
  var v = value;
  if (HAS_BIAS) { v += bias[n]; }
  v = activate(v);
  let o = m * params.O + n;
  if (HAS_RESIDUAL) { v += residual[o]; }
  out[o] = v;
}

// The GEMM snippets' epilogue hook: bounds, then the split's partial sum or the epilogue.
fn store_out(m: u32, n: u32, value: f32) {
  if (m >= params.M || n >= params.O) { return; }
  if (SPLIT_K > 1u) {
    workspace[(split * params.M + m) * params.O + n] = value;
  } else {
    conv_epilogue(m, n, value);
  }
}

@compute @workgroup_size(WGX, WGY)
fn conv2d_nhwc(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_id) lid: vec3<u32>) {
  let tile = wg.y + wg.z * nwg.y;
  if (tile >= params.tiles_m * SPLIT_K) { return; }
  let part = tile / params.tiles_m;
  split = part;
  let m0 = (tile % params.tiles_m) * BM;
  let lr = staging_row(lid);
  for (var l = 0u; l < LA; l++) { rows[l] = row_of(m0 + lr + l * RSTEP); }
  let range = split_range(part, params.K);
  gemm_tile(m0, wg.x * BN, range.x, range.y, lid);
}

// Split-K's second launch: each output the sum of its splits' partial sums, then the epilogue.
@compute @workgroup_size(256)
fn splitk_reduce(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) lane: u32) {
  let i = reduce_index(wg, nwg, lane);
  let total = params.M * params.O;
  if (i >= total) { return; }
  conv_epilogue(i / params.O, i % params.O, split_sum(i, total));
}
