// Shared tile machinery of the subgroup-matrix GEMMs (matmul_sgmat, conv2d_nhwc_sgmat): a
// workgroup computes a BM x BN output tile with SGM x SGN subgroups, each 2 x 2 fragments of
// MMA_M x MMA_N f32 results (subgroup_matrix_result) on f16 operands (tensor cores on NVIDIA).
// Every BK-deep step, the threads stage the step's A (BM x BK) and B (BN x BK, both k-contiguous)
// from storage into workgroup memory as f16, four consecutive k per vec4 load, prefetching the
// next step into registers meanwhile, in the operands' storage types: converting A to f16 at the
// load would wait for the load before the step's multiplications (on an H100 that halved the
// linear layers' speed), converting it when staging does not; each subgroup then loads its fragments from there. Staging
// is what lets A be anything (an implicit im2col for convolutions, zero padding, edges that are no
// multiple of the tile): subgroup-matrix loads take whole fragments at subgroup-uniform offsets.
// The fragments are named variables, not an array: indexed arrays of subgroup matrices went
// through local memory on the H200 (5x slower).
//
// The including template defines, besides the constants below:
//   fn a_depth(k: u32)                 once per step with the thread's k (a multiple of 4; may cache per-k state)
//   fn load_a(l: u32, r: u32, k: u32) -> Operand  A at the tile's row r (the thread's l-th: r = lr + l * RSTEP),
//                                      depths k..k+3; 0 outside M and K (Operand: vec4<f32>)
//   fn load_b(n: u32, k: u32) -> WeightOperand  B (the weight [N, K]) at column n, depths k..k+3; 0 outside
//                                      N and K (WeightOperand: vec4<f16>)
//   fn store_out(m: u32, n: u32, v: f32)  the epilogue of one output (bias, activation, residual, bounds)
// gemm_tile(m0, n0, k_begin, k_end, lid) sums over depths [k_begin, k_end): all of K, or one
// split of it (split-K: each split's partial sums go to a workspace, a second launch adds them).
// Constants: BM = SGM * 2 * MMA_M, BN = SGN * 2 * MMA_N, BK (a multiple of MMA_K and of 4), SGM,
// SGN (subgroups along M and N), SG_SIZE (the adapter's subgroup size: a workgroup is SG_SIZE x
// (SGM * SGN) invocations, each row one subgroup), MMA_M, MMA_N, MMA_K (the adapter's f16 -> f32
// configuration; 16 on NVIDIA).

const WGX: u32 = SG_SIZE;             // the workgroup: one subgroup per row
const WGY: u32 = SGM * SGN;
const NT: u32 = WGX * WGY;
const KV: u32 = BK / 4u;              // vec4s per staged row
const LA: u32 = BM * KV / NT;         // A vec4s each thread stages per step
const LB: u32 = BN * KV / NT;         // B vec4s each thread stages per step
const RSTEP: u32 = NT / KV;           // rows one staging round covers
const AST: u32 = BK + 8u;             // row stride of the staged tiles in halves (16 bytes of padding)

// The thread's first staged row (then every RSTEP rows); its k within a step is 4 * (t % KV).
fn staging_row(lid: vec3<u32>) -> u32 { return (lid.y * WGX + lid.x) / KV; }

var<workgroup> As: array<f16, BM * AST>;                   // As[m][k]
var<workgroup> Bs: array<f16, BN * AST>;                   // Bs[n][k]
var<workgroup> Cs: array<f32, SGM * SGN * MMA_M * MMA_N>;  // one result fragment per subgroup

fn stage_a(row: u32, kq: u32, a: Operand) {
  let v = vec4<f16>(a);
  let o = row * AST + kq * 4u;
  As[o] = v.x;
  As[o + 1u] = v.y;
  As[o + 2u] = v.z;
  As[o + 3u] = v.w;
}

fn stage_b(row: u32, kq: u32, b: WeightOperand) {
  let v = vec4<f16>(b);
  let o = row * AST + kq * 4u;
  Bs[o] = v.x;
  Bs[o + 1u] = v.y;
  Bs[o + 2u] = v.z;
  Bs[o + 3u] = v.w;
}

// One result fragment through this subgroup's slice of Cs, then out element by element.
fn store_fragment(c: subgroup_matrix_result<f32, MMA_N, MMA_M>, cbase: u32, m0: u32, n0: u32, lane: u32) {
  subgroupMatrixStore<row_major>(&Cs, cbase, c, MMA_N);
  workgroupBarrier();
  for (var e = lane; e < MMA_M * MMA_N; e += SG_SIZE) {
    store_out(m0 + e / MMA_N, n0 + e % MMA_N, Cs[cbase + e]);
  }
  workgroupBarrier();
}

fn gemm_tile(m0: u32, n0: u32, k_begin: u32, k_end: u32, lid: vec3<u32>) {
  // One subgroup per row of the workgroup; broadcast makes the index visibly subgroup-uniform.
  let sg = subgroupBroadcastFirst(lid.y);
  let sm0 = (sg / SGN) * 2u * MMA_M;
  let sn0 = (sg % SGN) * 2u * MMA_N;
  let kq = (lid.y * WGX + lid.x) % KV;
  let lr = staging_row(lid);

  var ra: array<Operand, LA>;
  var rb: array<WeightOperand, LB>;
  var c00 = subgroup_matrix_result<f32, MMA_N, MMA_M>();
  var c01 = subgroup_matrix_result<f32, MMA_N, MMA_M>();
  var c10 = subgroup_matrix_result<f32, MMA_N, MMA_M>();
  var c11 = subgroup_matrix_result<f32, MMA_N, MMA_M>();

  // The thread's share of a step, depths k..k+3, into registers (zeros at and past k_end).
  var k = k_begin + kq * 4u;
  a_depth(k);
  for (var l = 0u; l < LA; l++) { ra[l] = select(Operand(0.0), load_a(l, lr + l * RSTEP, k), k < k_end); }
  for (var l = 0u; l < LB; l++) { rb[l] = select(WeightOperand(0.0), load_b(n0 + lr + l * RSTEP, k), k < k_end); }
  for (var k0 = k_begin; k0 < k_end; k0 += BK) {
    for (var l = 0u; l < LA; l++) { stage_a(lr + l * RSTEP, kq, ra[l]); }
    for (var l = 0u; l < LB; l++) { stage_b(lr + l * RSTEP, kq, rb[l]); }
    workgroupBarrier();
    if (k0 + BK < k_end) {
      k = k0 + BK + kq * 4u;
      a_depth(k);
      for (var l = 0u; l < LA; l++) { ra[l] = select(Operand(0.0), load_a(l, lr + l * RSTEP, k), k < k_end); }
      for (var l = 0u; l < LB; l++) { rb[l] = select(WeightOperand(0.0), load_b(n0 + lr + l * RSTEP, k), k < k_end); }
    }
    for (var kk = 0u; kk < BK; kk += MMA_K) {
      let a0 = subgroupMatrixLoad<subgroup_matrix_left<f16, MMA_K, MMA_M>, row_major>(&As, sm0 * AST + kk, AST);
      let a1 = subgroupMatrixLoad<subgroup_matrix_left<f16, MMA_K, MMA_M>, row_major>(
          &As, (sm0 + MMA_M) * AST + kk, AST);
      let b0 = subgroupMatrixLoad<subgroup_matrix_right<f16, MMA_N, MMA_K>, col_major>(&Bs, sn0 * AST + kk, AST);
      let b1 = subgroupMatrixLoad<subgroup_matrix_right<f16, MMA_N, MMA_K>, col_major>(
          &Bs, (sn0 + MMA_N) * AST + kk, AST);
      c00 = subgroupMatrixMultiplyAccumulate(a0, b0, c00);
      c01 = subgroupMatrixMultiplyAccumulate(a0, b1, c01);
      c10 = subgroupMatrixMultiplyAccumulate(a1, b0, c10);
      c11 = subgroupMatrixMultiplyAccumulate(a1, b1, c11);
    }
    workgroupBarrier();
  }

  let cbase = sg * MMA_M * MMA_N;
  store_fragment(c00, cbase, m0 + sm0, n0 + sn0, lid.x);
  store_fragment(c01, cbase, m0 + sm0, n0 + sn0 + MMA_N, lid.x);
  store_fragment(c10, cbase, m0 + sm0 + MMA_M, n0 + sn0, lid.x);
  store_fragment(c11, cbase, m0 + sm0 + MMA_M, n0 + sn0 + MMA_N, lid.x);
}
