// Shared tile machinery of the register-tiled GEMMs (matmul, conv2d_nhwc and their _f16 forms): a
// workgroup of (BN / TN) x (BM / TM) threads computes a BM x BN output tile, each thread TM x TN
// outputs as vec4 accumulators. Every BK-deep step, the threads stage the step's A (BM x BK) and
// B (BN x BK) in workgroup memory (k-major, so each thread reads its rows and columns as vec4s),
// prefetching the next step into registers meanwhile, B in its storage type (WeightOperand): a
// conversion at the load would wait for it before the step's multiplications.
//
// The including template defines, besides the constants below:
//   fn a_depth(k: u32)                 once per step with the thread's k (may cache per-k state)
//   fn load_a(l: u32, r: u32, k: u32) -> f32  A at the tile's row r (the thread's l-th: r = lr + l * RSTEP),
//                                      depth k; 0 outside M and K
//   fn load_b(n: u32, k: u32) -> WeightOperand  B (the weight [N, K]) at column n, depth k; 0 outside N and K
//   fn store_out(m: u32, n: u32, v: f32)  the epilogue of one output (bias, activation, residual, bounds)
// gemm_tile(m0, n0, k_begin, k_end, lid) sums over depths [k_begin, k_end) (whole BK steps but
// at K): all of K, or one split of it (split_k.wgsl). The workgroup is WGX x WGY.
// Constants: BM, BN, BK, TM, TN (multiples of 4 dividing BM, BN); (BN/TN) * (BM/TM) <= 256
// threads, a multiple of BK, dividing BM * BK and BN * BK.

const WGX: u32 = BN / TN;
const WGY: u32 = BM / TM;
const NT: u32 = WGX * WGY;
const TM4: u32 = TM / 4u;
const TN4: u32 = TN / 4u;
const LA: u32 = BM * BK / NT;      // A elements each thread loads per K step
const LB: u32 = BN * BK / NT;      // B elements each thread loads per K step
const RSTEP: u32 = NT / BK;        // rows covered by one load round
const AS4: u32 = BM / 4u + 1u;     // vec4s per k row of the A tile (one vec4 of padding)
const BS4: u32 = BN / 4u + 1u;

var<workgroup> As: array<vec4<f32>, BK * AS4>;   // As[k][m / 4][m % 4]
var<workgroup> Bs: array<vec4<f32>, BK * BS4>;

// The thread's first staged row (then every RSTEP rows) and its k within a step.
fn staging_row(lid: vec3<u32>) -> u32 { return (lid.y * WGX + lid.x) / BK; }

fn gemm_tile(m0: u32, n0: u32, k_begin: u32, k_end: u32, lid: vec3<u32>) {
  let t = lid.y * WGX + lid.x;
  let lc = t % BK;
  let lr = t / BK;

  var ra: array<f32, LA>;
  var rb: array<WeightOperand, LB>;
  var acc: array<vec4<f32>, TM * TN4>;

  // First K step into registers.
  a_depth(k_begin + lc);
  for (var l = 0u; l < LA; l++) { ra[l] = load_a(l, lr + l * RSTEP, k_begin + lc); }
  for (var l = 0u; l < LB; l++) { rb[l] = load_b(n0 + lr + l * RSTEP, k_begin + lc); }
  for (var k0 = k_begin; k0 < k_end; k0 += BK) {
    for (var l = 0u; l < LA; l++) {
      let r = lr + l * RSTEP;
      As[lc * AS4 + r / 4u][r % 4u] = ra[l];
    }
    for (var l = 0u; l < LB; l++) {
      let r = lr + l * RSTEP;
      Bs[lc * BS4 + r / 4u][r % 4u] = f32(rb[l]);
    }
    workgroupBarrier();
    // Prefetch the next K step while this one is multiplied.
    let kn = k0 + BK + lc;
    if (k0 + BK < k_end) {
      a_depth(kn);
      for (var l = 0u; l < LA; l++) { ra[l] = load_a(l, lr + l * RSTEP, kn); }
      for (var l = 0u; l < LB; l++) { rb[l] = load_b(n0 + lr + l * RSTEP, kn); }
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
      for (var j = 0u; j < TN4; j++) {
        let v4 = acc[(i * 4u + q) * TN4 + j];
        for (var e = 0u; e < 4u; e++) { store_out(m, n0 + (lid.x + j * WGX) * 4u + e, v4[e]); }
      }
    }
  }
}
