// matmul: out[b, m, n] = act(sum_k x[b, m, k] * w[b, n, k] + bias[n]) + residual[b, m, n]
// (linear: x [M, K] with leading batch dims folded into M, w [N, K] as torch stores it; batched
// form: batch > 1 with per-batch strides, e.g. attention-like a @ bT^T).
//
// Constants (prepended by the compiler as `const NAME: TYPE = VALUE;`), defaults in brackets:
//   BM: u32 [64]  BN: u32 [64]  rows / columns of the output tile of one workgroup
//   BK: u32 [16]  depth of one K step through workgroup memory
//   TM: u32 [4]   TN: u32 [4]   outputs per thread (rows, columns); multiples of 4
//   HAS_BIAS: bool [false]  HAS_RESIDUAL: bool [false]
//   ACTIVATION: u32 [0]     0 none, 1 SiLU, 2 GELU (exact, erf), applied after bias, before residual
//   Workgroup size (BN/TN) x (BM/TM) <= 256; (BM*BK) and (BN*BK) multiples of the thread count,
//   the thread count a multiple of BK; workgroup memory 4*BK*(BM+BN+8) bytes <= 16384.
// Bindings (@group(0)):
//   0 x: read, 1 w: read, 2 bias: read [N], 3 residual: read (laid out like out), 4 out: read_write,
//   5 params: uniform Params. bias / residual are always bound: when their flag is false bind any
//   buffer that is not written by this launch (e.g. x again); it is not read.
// Params (all 4-byte fields, in this order): M, N, K, lda (row stride of x), ldw (row stride of w),
//   ldo (row stride of out and residual), tiles_m (= ceil(M / BM)), batch, stride_x, stride_w,
//   stride_o (batch strides in elements; stride_w = 0 shares one weight).
// Dispatch: x = ceil(N / BN); T = tiles_m * batch tile rows are folded into (y, z):
//   T <= 65535: (T, 1), else z = ceil(T / 65535), y = ceil(T / z); the kernel recovers
//   t = wg.y + wg.z * num_workgroups.y and skips t >= T.

alias Operand = f32;
alias WeightOperand = Operand;
// requires: matmul_io (common/matmul_io.wgsl: struct Params and the bindings listed above)

const WGX: u32 = BN / TN;
const WGY: u32 = BM / TM;
const NT: u32 = WGX * WGY;
const TM4: u32 = TM / 4u;
const TN4: u32 = TN / 4u;
const LA: u32 = BM * BK / NT;      // x elements each thread loads per K step
const LB: u32 = BN * BK / NT;      // w elements each thread loads per K step
const RSTEP: u32 = NT / BK;        // rows covered by one load round
const AS4: u32 = BM / 4u + 1u;     // vec4s per k row of the x tile (one vec4 of padding)
const BS4: u32 = BN / 4u + 1u;

var<workgroup> As: array<vec4<f32>, BK * AS4>;   // As[k][m / 4][m % 4]
var<workgroup> Bs: array<vec4<f32>, BK * BS4>;

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)

// requires: activation (common/activation.wgsl: fn activate)

fn load_x(base: u32, r: u32, k: u32) -> f32 {
  if (r < params.M && k < params.K) { return x[base + r * params.lda + k]; }
  return 0.0;
}

fn load_w(base: u32, r: u32, k: u32) -> f32 {
  if (r < params.N && k < params.K) { return w[base + r * params.ldw + k]; }
  return 0.0;
}

@compute @workgroup_size(WGX, WGY)
fn matmul(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_id) lid: vec3<u32>) {
  let tile = wg.y + wg.z * nwg.y;
  if (tile >= params.tiles_m * params.batch) { return; }
  let b = tile / params.tiles_m;
  let m0 = (tile % params.tiles_m) * BM;
  let n0 = wg.x * BN;
  let M = params.M;
  let N = params.N;
  let K = params.K;
  let xb = b * params.stride_x;
  let wb = b * params.stride_w;
  let t = lid.y * WGX + lid.x;
  let lc = t % BK;        // the k this thread loads
  let lr = t / BK;        // its first row; then every RSTEP rows

  var ra: array<f32, LA>;
  var rb: array<f32, LB>;
  var acc: array<vec4<f32>, TM * TN4>;

  // First K step into registers.
  for (var l = 0u; l < LA; l++) { ra[l] = load_x(xb, m0 + lr + l * RSTEP, lc); }
  for (var l = 0u; l < LB; l++) { rb[l] = load_w(wb, n0 + lr + l * RSTEP, lc); }
  for (var k0 = 0u; k0 < K; k0 += BK) {
    for (var l = 0u; l < LA; l++) {
      let r = lr + l * RSTEP;
      As[lc * AS4 + r / 4u][r % 4u] = ra[l];
    }
    for (var l = 0u; l < LB; l++) {
      let r = lr + l * RSTEP;
      Bs[lc * BS4 + r / 4u][r % 4u] = rb[l];
    }
    workgroupBarrier();
    // Prefetch the next K step while this one is multiplied.
    let kn = k0 + BK + lc;
    if (k0 + BK < K) {
      for (var l = 0u; l < LA; l++) { ra[l] = load_x(xb, m0 + lr + l * RSTEP, kn); }
      for (var l = 0u; l < LB; l++) { rb[l] = load_w(wb, n0 + lr + l * RSTEP, kn); }
    }
    for (var kk = 0u; kk < BK; kk++) {
      var a4: array<vec4<f32>, TM4>;
      var b4: array<vec4<f32>, TN4>;
      for (var i = 0u; i < TM4; i++) { a4[i] = As[kk * AS4 + lid.y + i * WGY]; }
      for (var j = 0u; j < TN4; j++) { b4[j] = Bs[kk * BS4 + lid.x + j * WGX]; }
      for (var i = 0u; i < TM4; i++) {
        for (var q = 0u; q < 4u; q++) {
          let a = vec4<f32>(a4[i][q]);
          for (var j = 0u; j < TN4; j++) {
            let idx = (i * 4u + q) * TN4 + j;
            acc[idx] = fma(a, b4[j], acc[idx]);
          }
        }
      }
    }
    workgroupBarrier();
  }

  let ob = b * params.stride_o;
  for (var i = 0u; i < TM4; i++) {
    for (var q = 0u; q < 4u; q++) {
      let m = m0 + (lid.y + i * WGY) * 4u + q;
      if (m >= M) { continue; }
      for (var j = 0u; j < TN4; j++) {
        let v4 = acc[(i * 4u + q) * TN4 + j];
        for (var e = 0u; e < 4u; e++) {
          let n = n0 + (lid.x + j * WGX) * 4u + e;
          if (n >= N) { continue; }
          var v = v4[e];
          if (HAS_BIAS) { v += bias[n]; }
          v = activate(v);
          let o = ob + m * params.ldo + n;
          if (HAS_RESIDUAL) { v += residual[o]; }
          out[o] = v;
        }
      }
    }
  }
}
