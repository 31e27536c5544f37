// matmul's kernel (the contract in matmul.wgsl), shared by matmul and matmul_f16. The
// including template names the weight's element type, `alias WeightOperand`: f32, or f16 where
// the tier stores weights in f16 (read into f32 registers: the arithmetic stays f32).
alias Operand = f32;
// requires: matmul_io (common/matmul_io.wgsl: struct Params and the bindings)

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
  if (r < params.N && k < params.K) { return f32(w[base + r * params.ldw + k]); }
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
