// Shared tile machinery of the subgroup-matrix GEMMs (matmul_sgmat, conv2d_nhwc_sgmat): a
// workgroup computes a BM x BN output tile with SGM x SGN subgroups, each FM x FN accumulators of
// MMA_M x MMA_N f32 (subgroup_matrix_result) on f16 operands (tensor cores on NVIDIA). Every
// BK-deep step, the threads stage the step's A (BM x BK) and B (BN x BK, both k-contiguous) from
// storage into workgroup memory as f16, prefetching the next step into registers meanwhile; each
// subgroup then loads its fragments from there. Staging is what lets A be anything (an implicit
// im2col for convolutions, zero padding, edges that are no multiple of the tile): subgroup-matrix
// loads take whole fragments at subgroup-uniform offsets.
//
// The including template defines, besides the constants below:
//   fn a_depth(k: u32)               called once per step with the thread's k (may cache per-k state)
//   fn load_a(l: u32, r: u32, k: u32) -> f32  A at the tile's row r (the thread's l-th: r = lr + l * RSTEP)
//                                    and depth k; 0 outside M and K
//   fn load_b(n: u32, k: u32) -> f32 B (the weight [N, K]) at column n, depth k; 0 outside N and K
//   fn store_out(m: u32, n: u32, v: f32) the epilogue of one output (bias, activation, residual, bounds)
// Constants: BM, BN, BK (multiples of MMA_M, MMA_N, MMA_K), SGM, SGN (subgroups along M and N),
// SG_SIZE (the adapter's subgroup size: a workgroup is SG_SIZE x (SGM * SGN) invocations, each row
// one subgroup), MMA_M, MMA_N, MMA_K (the adapter's f16 -> f32 configuration; 16 on NVIDIA).

const NT: u32 = SG_SIZE * SGM * SGN;
const FM: u32 = BM / (SGM * MMA_M);   // accumulator rows per subgroup
const FN: u32 = BN / (SGN * MMA_N);   // accumulator columns per subgroup
const LA: u32 = BM * BK / NT;         // A elements each thread stages per step
const LB: u32 = BN * BK / NT;         // B elements each thread stages per step
const RSTEP: u32 = NT / BK;           // rows one staging round covers
const AST: u32 = BK + 8u;             // row stride of the staged tiles in halves (16 bytes of padding)

var<workgroup> As: array<f16, BM * AST>;                   // As[m][k]
var<workgroup> Bs: array<f16, BN * AST>;                   // Bs[n][k]
var<workgroup> Cs: array<f32, SGM * SGN * MMA_M * MMA_N>;  // one result fragment per subgroup

fn gemm_tile(m0: u32, n0: u32, K: u32, lid: vec3<u32>) {
  // One subgroup per row of the workgroup; broadcast makes the index visibly subgroup-uniform.
  let sg = subgroupBroadcastFirst(lid.y);
  let sm0 = (sg / SGN) * FM * MMA_M;
  let sn0 = (sg % SGN) * FN * MMA_N;
  let t = lid.y * SG_SIZE + lid.x;
  let lc = t % BK;
  let lr = t / BK;

  var ra: array<f32, LA>;
  var rb: array<f32, LB>;
  var acc: array<subgroup_matrix_result<f32, MMA_N, MMA_M>, FM * FN>;

  a_depth(lc);
  for (var l = 0u; l < LA; l++) { ra[l] = load_a(l, lr + l * RSTEP, lc); }
  for (var l = 0u; l < LB; l++) { rb[l] = load_b(n0 + lr + l * RSTEP, lc); }
  for (var k0 = 0u; k0 < K; k0 += BK) {
    for (var l = 0u; l < LA; l++) { As[(lr + l * RSTEP) * AST + lc] = f16(ra[l]); }
    for (var l = 0u; l < LB; l++) { Bs[(lr + l * RSTEP) * AST + lc] = f16(rb[l]); }
    workgroupBarrier();
    if (k0 + BK < K) {
      let kn = k0 + BK + lc;
      a_depth(kn);
      for (var l = 0u; l < LA; l++) { ra[l] = load_a(l, lr + l * RSTEP, kn); }
      for (var l = 0u; l < LB; l++) { rb[l] = load_b(n0 + lr + l * RSTEP, kn); }
    }
    for (var kk = 0u; kk < BK; kk += MMA_K) {
      var a: array<subgroup_matrix_left<f16, MMA_K, MMA_M>, FM>;
      for (var i = 0u; i < FM; i++) {
        a[i] = subgroupMatrixLoad<subgroup_matrix_left<f16, MMA_K, MMA_M>, row_major>(
            &As, (sm0 + i * MMA_M) * AST + kk, AST);
      }
      for (var j = 0u; j < FN; j++) {
        let b = subgroupMatrixLoad<subgroup_matrix_right<f16, MMA_N, MMA_K>, col_major>(
            &Bs, (sn0 + j * MMA_N) * AST + kk, AST);
        for (var i = 0u; i < FM; i++) {
          acc[i * FN + j] = subgroupMatrixMultiplyAccumulate(a[i], b, acc[i * FN + j]);
        }
      }
    }
    workgroupBarrier();
  }

  // Epilogue: each fragment through this subgroup's slice of Cs, then out element by element.
  let cbase = sg * MMA_M * MMA_N;
  for (var i = 0u; i < FM; i++) {
    for (var j = 0u; j < FN; j++) {
      subgroupMatrixStore<row_major>(&Cs, cbase, acc[i * FN + j], MMA_N);
      workgroupBarrier();
      for (var e = lid.x; e < MMA_M * MMA_N; e += SG_SIZE) {
        store_out(m0 + sm0 + i * MMA_M + e / MMA_N, n0 + sn0 + j * MMA_N + e % MMA_N, Cs[cbase + e]);
      }
      workgroupBarrier();
    }
  }
}
