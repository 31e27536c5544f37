// conv2d_nhwc's kernel (the contract in conv2d_nhwc.wgsl), shared by conv2d_nhwc and
// conv2d_nhwc_f16. The including template names the weight's element type, `alias WeightOperand`:
// f32, or f16 where the tier stores weights in f16 (read into f32 registers: the arithmetic stays
// f32).
alias Operand = f32;
// requires: conv2d_io (common/conv2d_io.wgsl: struct Params, the bindings, struct Row, fn row_of)
@group(0) @binding(5) var<uniform> params: Params;

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


// input at row `row` and depth k = (kh * KW + kw) * C + c, given as (kh, kw, c) with k < K in `ok`.
fn load_input(row: Row, kh: u32, kw: u32, c: u32, ok: bool) -> f32 {
  let ih = row.ih0 + i32(kh);
  let iw = row.iw0 + i32(kw);
  if (row.valid && ok && ih >= 0 && iw >= 0 && u32(ih) < params.H && u32(iw) < params.W) {
    return input[row.base + (u32(ih) * params.W + u32(iw)) * params.C + c];
  }
  return 0.0;
}

fn load_w(r: u32, k: u32) -> f32 {
  if (r < params.O && k < params.K) { return f32(weight[r * params.K + k]); }
  return 0.0;
}

@compute @workgroup_size(WGX, WGY)
fn conv2d_nhwc(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_id) lid: vec3<u32>) {
  let tile = wg.y + wg.z * nwg.y;
  if (tile >= params.tiles_m) { return; }
  let m0 = tile * BM;
  let n0 = wg.x * BN;
  let M = params.M;
  let N = params.O;
  let K = params.K;
  let t = lid.y * WGX + lid.x;
  let lc = t % BK;        // the k this thread loads
  let lr = t / BK;        // its first row; then every RSTEP rows

  var rows: array<Row, LA>;
  for (var l = 0u; l < LA; l++) { rows[l] = row_of(m0 + lr + l * RSTEP); }
  let kwc = params.KW * params.C;

  var ra: array<f32, LA>;
  var rb: array<f32, LB>;
  var acc: array<vec4<f32>, TM * TN4>;

  // First K step into registers.
  {
    let kh = lc / kwc;
    let kw = (lc % kwc) / params.C;
    let c = lc % params.C;
    for (var l = 0u; l < LA; l++) { ra[l] = load_input(rows[l], kh, kw, c, lc < K); }
    for (var l = 0u; l < LB; l++) { rb[l] = load_w(n0 + lr + l * RSTEP, lc); }
  }
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
      let kh = kn / kwc;
      let kw = (kn % kwc) / params.C;
      let c = kn % params.C;
      for (var l = 0u; l < LA; l++) { ra[l] = load_input(rows[l], kh, kw, c, kn < K); }
      for (var l = 0u; l < LB; l++) { rb[l] = load_w(n0 + lr + l * RSTEP, kn); }
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
          let o = m * N + n;
          if (HAS_RESIDUAL) { v += residual[o]; }
          out[o] = v;
        }
      }
    }
  }
}
