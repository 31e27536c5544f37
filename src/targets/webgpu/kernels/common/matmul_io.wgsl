// matmul's uniform block and bindings (matmul.wgsl states the contract), shared by matmul and
// matmul_sgmat. The including template names the element types: `alias Operand` of x (f32, or
// vec4<f32> where the template reads four consecutive k at once) and `alias WeightOperand` of w
// (Operand, or vec4<f16> where the tier stores weights in f16).
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
@group(0) @binding(5) var<uniform> params: Params;

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

fn store_out(m: u32, n: u32, value: f32) {
  if (m >= params.M || n >= params.N) { return; }
  var v = value;
  if (HAS_BIAS) { v += bias[n]; }
  v = activate(v);
  let o = o_base + m * params.ldo + n;
  if (HAS_RESIDUAL) { v += residual[o]; }
  out[o] = v;
}
