// Shared tile machinery of the subgroup-matrix GEMMs (matmul_sgmat, conv2d_nhwc_sgmat): a
// workgroup computes a BM x BN output tile with SGM x SGN subgroups, each FM x FN fragments of
// MMA_M x MMA_N f32 results (subgroup_matrix_result) on f16 operands (tensor cores on NVIDIA).
// A (activations, f32 in storage, for convolutions an implicit im2col with zero padding) is
// staged: every BK-deep step, the threads copy the step's BM x BK slice from storage into
// workgroup memory as f16, four consecutive k per vec4 load, prefetching the next step into
// registers meanwhile in the storage type (converting at the load would wait for it before the
// step's multiplications: on an H100 that halved the linear layers' speed). B (the weight, [N, K],
// f16 in storage) is either staged the same way, or with B_DIRECT read by each subgroup straight
// from storage as whole fragments (subgroup-matrix loads need subgroup-uniform offsets and whole
// fragments inside the buffer: the compiler sets B_DIRECT only where BN divides N and BK divides
// K). Direct loads halve the workgroup-memory stores per step, the cost that bounded the staged
// kernels (the probe's direct-load GEMM reached 74 TFLOP/s on an H200, staged ones at most 46).
// A may be direct too (A_DIRECT, which the including template declares: its A is f16 in storage,
// a_fragment reads whole fragments): then nothing is staged and a step needs no barrier.
// The fragments are named variables, not an array: indexed arrays of subgroup matrices went
// through local memory on the H200 (5x slower); each FM x FN has its own tile function.
//
// The including template defines, besides the constants below:
//   const A_DIRECT: bool               A's fragments straight from storage (a_fragment) rather than staged
//   fn a_depth(k: u32)                 once per step with the thread's k (a multiple of 4; may cache per-k state);
//                                      with A_DIRECT once per fragment depth k (a multiple of MMA_K) instead
//   fn load_a(l: u32, r: u32, k: u32) -> Operand  A at the tile's row r (the thread's l-th: r = lr + l * RSTEP),
//                                      depths k..k+3; 0 outside M and K (Operand: vec4<f32>)
//   fn load_b(n: u32, k: u32) -> vec4<f16>  B (the weight [N, K]) at column n, depths k..k+3; 0 outside N and K
//   fn b_fragment(n: u32, k: u32) -> RightFragment  B's fragment at columns n.., depths k.. from storage
//   fn a_fragment(m: u32, k: u32) -> LeftFragment   A's fragment at rows m.. (of the whole GEMM), depths k..
//                                      from storage, after a_depth(k) (only called with A_DIRECT)
//   fn store_out(m: u32, n: u32, v: f32)  the epilogue of one output (bias, activation, residual, bounds)
// gemm_tile(m0, n0, k_begin, k_end, lid) sums over depths [k_begin, k_end): all of K, or one
// split of it (split-K: each split's partial sums go to a workspace, a second launch adds them).
// Constants: SGM, SGN (subgroups along M and N), FM x FN (fragments per subgroup along M and N: 1 x 1,
// 2 x 2, 4 x 2 or 4 x 4), BM = SGM * FM * MMA_M, BN = SGN * FN * MMA_N, BK (a multiple of MMA_K and of 4),
// B_DIRECT, SG_SIZE (the adapter's subgroup size: a workgroup is SG_SIZE x (SGM * SGN)
// invocations, each row one subgroup), MMA_M, MMA_N, MMA_K (the adapter's f16 -> f32
// configuration; 16 on NVIDIA).

const WGX: u32 = SG_SIZE;             // the workgroup: one subgroup per row
const WGY: u32 = SGM * SGN;
const NT: u32 = WGX * WGY;
const KV: u32 = BK / 4u;              // vec4s per staged row
const LA: u32 = select(BM * KV / NT, 1u, A_DIRECT);  // A vec4s each thread stages per step (none if direct)
const LB: u32 = select(BN * KV / NT, 1u, B_DIRECT);  // B vec4s each thread stages per step (none if direct)
const RSTEP: u32 = NT / KV;           // rows one staging round covers
const STAGED: bool = !(A_DIRECT && B_DIRECT);  // whether a step goes through workgroup memory
const AST: u32 = BK + 8u;             // row stride of the staged tiles in halves (16 bytes of padding)

alias LeftFragment = subgroup_matrix_left<f16, MMA_K, MMA_M>;
alias RightFragment = subgroup_matrix_right<f16, MMA_N, MMA_K>;
alias ResultFragment = subgroup_matrix_result<f32, MMA_N, MMA_M>;

// The thread's first staged row (then every RSTEP rows); its k within a step is 4 * (t % KV).
fn staging_row(lid: vec3<u32>) -> u32 { return (lid.y * WGX + lid.x) / KV; }

// As[m][k], Bs[n][k]; unused if direct, yet their loads (in a branch the constant rules out) are
// validated against their sizes: one fragment's worth then.
var<workgroup> As: array<f16, select(BM, MMA_M, A_DIRECT) * AST>;
var<workgroup> Bs: array<f16, select(BN, MMA_N, B_DIRECT) * AST>;
var<workgroup> Cs: array<f32, SGM * SGN * MMA_M * MMA_N>;         // one result fragment per subgroup

fn stage_a(row: u32, kq: u32, a: Operand) {
  let v = vec4<f16>(a);
  let o = row * AST + kq * 4u;
  As[o] = v.x;
  As[o + 1u] = v.y;
  As[o + 2u] = v.z;
  As[o + 3u] = v.w;
}

fn stage_b(row: u32, kq: u32, v: vec4<f16>) {
  let o = row * AST + kq * 4u;
  Bs[o] = v.x;
  Bs[o + 1u] = v.y;
  Bs[o + 2u] = v.z;
  Bs[o + 3u] = v.w;
}

// A subgroup's place in the workgroup's tile and the thread's in the staging. The depths
// [k_begin, k_end) travel beside it as their own arguments: the loops over them hold barriers, and
// a struct with any non-uniform member is non-uniform as a whole.
struct Tile {
  m0: u32, n0: u32,
  sm0: u32, sn0: u32,  // the subgroup's first row and column in the tile
  cbase: u32,          // its slice of Cs
  kq: u32, lr: u32,    // the thread's vec4 within a staged row, its first staged row
  lane: u32,
}

// A's fragment i of the subgroup's (staged, or from storage), B's at the tile's column n (n0 its
// first), at the step's depth k0 + kk.
fn fragment_a(t: Tile, i: u32, k0: u32, kk: u32) -> LeftFragment {
  if (A_DIRECT) { return a_fragment(t.m0 + t.sm0 + i * MMA_M, k0 + kk); }
  return subgroupMatrixLoad<LeftFragment, row_major>(&As, (t.sm0 + i * MMA_M) * AST + kk, AST);
}

// The depth k0 + kk's state for a_fragment (A_DIRECT), once for all of a subgroup's fragments.
fn fragment_depth(k0: u32, kk: u32) {
  if (A_DIRECT) { a_depth(k0 + kk); }
}

fn fragment_b(n0: u32, n: u32, k0: u32, kk: u32) -> RightFragment {
  if (B_DIRECT) { return b_fragment(n0 + n, k0 + kk); }
  return subgroupMatrixLoad<RightFragment, col_major>(&Bs, n * AST + kk, AST);
}

// One result fragment through this subgroup's slice of Cs, then out element by element.
fn store_fragment(c: ResultFragment, cbase: u32, m0: u32, n0: u32, lane: u32) {
  subgroupMatrixStore<row_major>(&Cs, cbase, c, MMA_N);
  workgroupBarrier();
  for (var e = lane; e < MMA_M * MMA_N; e += SG_SIZE) {
    store_out(m0 + e / MMA_N, n0 + e % MMA_N, Cs[cbase + e]);
  }
  workgroupBarrier();
}

// The staging registers: the thread's share of the next step, in the operands' storage types.
var<private> ra: array<Operand, LA>;
var<private> rb: array<vec4<f16>, LB>;


// The thread's share of the step at depth k0, depths k..k+3, into registers (zeros at and past k_end).
fn prefetch(t: Tile, k0: u32, k_end: u32) {
  let k = k0 + t.kq * 4u;
  if (!A_DIRECT) {
    a_depth(k);
    for (var l = 0u; l < LA; l++) { ra[l] = select(Operand(0.0), load_a(l, t.lr + l * RSTEP, k), k < k_end); }
  }
  if (!B_DIRECT) {
    for (var l = 0u; l < LB; l++) { rb[l] = select(vec4<f16>(0.0), load_b(t.n0 + t.lr + l * RSTEP, k), k < k_end); }
  }
}

// The step at k0 into workgroup memory, then the next one's loads begun.
fn begin_step(t: Tile, k0: u32, k_end: u32) {
  if (!A_DIRECT) {
    for (var l = 0u; l < LA; l++) { stage_a(t.lr + l * RSTEP, t.kq, ra[l]); }
  }
  if (!B_DIRECT) {
    for (var l = 0u; l < LB; l++) { stage_b(t.lr + l * RSTEP, t.kq, rb[l]); }
  }
  if (STAGED) { workgroupBarrier(); }
  if (k0 + BK < k_end) { prefetch(t, k0 + BK, k_end); }
}

fn gemm_tile(m0: u32, n0: u32, k_begin: u32, k_end: u32, lid: vec3<u32>) {
  // One subgroup per row of the workgroup; broadcast makes the index visibly subgroup-uniform.
  let sg = subgroupBroadcastFirst(lid.y);
  let t = Tile(m0, n0, (sg / SGN) * FM * MMA_M, (sg % SGN) * FN * MMA_N, sg * MMA_M * MMA_N,
               (lid.y * WGX + lid.x) % KV, staging_row(lid), lid.x);
  // One function per fragment shape, each holding only its accumulators: declared together, the
  // unused ones still took registers (the 2 x 2 tiles ran 30% slower beside 16 of them).
  if (FM == 4u && FN == 4u) {
    tile_4x4(t, k_begin, k_end);
  } else if (FM == 4u) {
    tile_4x2(t, k_begin, k_end);
  } else if (FM == 2u) {
    tile_2x2(t, k_begin, k_end);
  } else {
    tile_1x1(t, k_begin, k_end);
  }
}

// Fragment (i, j) of the subgroup's results out.
fn store_at(c: ResultFragment, t: Tile, i: u32, j: u32) {
  store_fragment(c, t.cbase, t.m0 + t.sm0 + i * MMA_M, t.n0 + t.sn0 + j * MMA_N, t.lane);
}

fn tile_1x1(t: Tile, k_begin: u32, k_end: u32) {
  var c00 = ResultFragment();
  prefetch(t, k_begin, k_end);
  for (var k0 = k_begin; k0 < k_end; k0 += BK) {
    begin_step(t, k0, k_end);
    for (var kk = 0u; kk < BK; kk += MMA_K) {
      fragment_depth(k0, kk);
      c00 = subgroupMatrixMultiplyAccumulate(fragment_a(t, 0u, k0, kk), fragment_b(t.n0, t.sn0, k0, kk), c00);
    }
    if (STAGED) { workgroupBarrier(); }
  }
  store_at(c00, t, 0u, 0u);
}

fn tile_2x2(t: Tile, k_begin: u32, k_end: u32) {
  var c00 = ResultFragment();
  var c01 = ResultFragment();
  var c10 = ResultFragment();
  var c11 = ResultFragment();
  prefetch(t, k_begin, k_end);
  for (var k0 = k_begin; k0 < k_end; k0 += BK) {
    begin_step(t, k0, k_end);
    for (var kk = 0u; kk < BK; kk += MMA_K) {
      fragment_depth(k0, kk);
      let a0 = fragment_a(t, 0u, k0, kk);
      let a1 = fragment_a(t, 1u, k0, kk);
      let b0 = fragment_b(t.n0, t.sn0, k0, kk);
      let b1 = fragment_b(t.n0, t.sn0 + MMA_N, k0, kk);
      c00 = subgroupMatrixMultiplyAccumulate(a0, b0, c00);
      c01 = subgroupMatrixMultiplyAccumulate(a0, b1, c01);
      c10 = subgroupMatrixMultiplyAccumulate(a1, b0, c10);
      c11 = subgroupMatrixMultiplyAccumulate(a1, b1, c11);
    }
    if (STAGED) { workgroupBarrier(); }
  }
  store_at(c00, t, 0u, 0u);
  store_at(c01, t, 0u, 1u);
  store_at(c10, t, 1u, 0u);
  store_at(c11, t, 1u, 1u);
}

fn tile_4x2(t: Tile, k_begin: u32, k_end: u32) {
  var c00 = ResultFragment();
  var c01 = ResultFragment();
  var c10 = ResultFragment();
  var c11 = ResultFragment();
  var c20 = ResultFragment();
  var c21 = ResultFragment();
  var c30 = ResultFragment();
  var c31 = ResultFragment();
  prefetch(t, k_begin, k_end);
  for (var k0 = k_begin; k0 < k_end; k0 += BK) {
    begin_step(t, k0, k_end);
    for (var kk = 0u; kk < BK; kk += MMA_K) {
      fragment_depth(k0, kk);
      let b0 = fragment_b(t.n0, t.sn0, k0, kk);
      let b1 = fragment_b(t.n0, t.sn0 + MMA_N, k0, kk);
      let a0 = fragment_a(t, 0u, k0, kk);
      c00 = subgroupMatrixMultiplyAccumulate(a0, b0, c00);
      c01 = subgroupMatrixMultiplyAccumulate(a0, b1, c01);
      let a1 = fragment_a(t, 1u, k0, kk);
      c10 = subgroupMatrixMultiplyAccumulate(a1, b0, c10);
      c11 = subgroupMatrixMultiplyAccumulate(a1, b1, c11);
      let a2 = fragment_a(t, 2u, k0, kk);
      c20 = subgroupMatrixMultiplyAccumulate(a2, b0, c20);
      c21 = subgroupMatrixMultiplyAccumulate(a2, b1, c21);
      let a3 = fragment_a(t, 3u, k0, kk);
      c30 = subgroupMatrixMultiplyAccumulate(a3, b0, c30);
      c31 = subgroupMatrixMultiplyAccumulate(a3, b1, c31);
    }
    if (STAGED) { workgroupBarrier(); }
  }
  store_at(c00, t, 0u, 0u);
  store_at(c01, t, 0u, 1u);
  store_at(c10, t, 1u, 0u);
  store_at(c11, t, 1u, 1u);
  store_at(c20, t, 2u, 0u);
  store_at(c21, t, 2u, 1u);
  store_at(c30, t, 3u, 0u);
  store_at(c31, t, 3u, 1u);
}

fn tile_4x4(t: Tile, k_begin: u32, k_end: u32) {
  var c00 = ResultFragment();
  var c01 = ResultFragment();
  var c02 = ResultFragment();
  var c03 = ResultFragment();
  var c10 = ResultFragment();
  var c11 = ResultFragment();
  var c12 = ResultFragment();
  var c13 = ResultFragment();
  var c20 = ResultFragment();
  var c21 = ResultFragment();
  var c22 = ResultFragment();
  var c23 = ResultFragment();
  var c30 = ResultFragment();
  var c31 = ResultFragment();
  var c32 = ResultFragment();
  var c33 = ResultFragment();
  prefetch(t, k_begin, k_end);
  for (var k0 = k_begin; k0 < k_end; k0 += BK) {
    begin_step(t, k0, k_end);
    for (var kk = 0u; kk < BK; kk += MMA_K) {
      fragment_depth(k0, kk);
      let b0 = fragment_b(t.n0, t.sn0, k0, kk);
      let b1 = fragment_b(t.n0, t.sn0 + MMA_N, k0, kk);
      let b2 = fragment_b(t.n0, t.sn0 + 2u * MMA_N, k0, kk);
      let b3 = fragment_b(t.n0, t.sn0 + 3u * MMA_N, k0, kk);
      let a0 = fragment_a(t, 0u, k0, kk);
      c00 = subgroupMatrixMultiplyAccumulate(a0, b0, c00);
      c01 = subgroupMatrixMultiplyAccumulate(a0, b1, c01);
      c02 = subgroupMatrixMultiplyAccumulate(a0, b2, c02);
      c03 = subgroupMatrixMultiplyAccumulate(a0, b3, c03);
      let a1 = fragment_a(t, 1u, k0, kk);
      c10 = subgroupMatrixMultiplyAccumulate(a1, b0, c10);
      c11 = subgroupMatrixMultiplyAccumulate(a1, b1, c11);
      c12 = subgroupMatrixMultiplyAccumulate(a1, b2, c12);
      c13 = subgroupMatrixMultiplyAccumulate(a1, b3, c13);
      let a2 = fragment_a(t, 2u, k0, kk);
      c20 = subgroupMatrixMultiplyAccumulate(a2, b0, c20);
      c21 = subgroupMatrixMultiplyAccumulate(a2, b1, c21);
      c22 = subgroupMatrixMultiplyAccumulate(a2, b2, c22);
      c23 = subgroupMatrixMultiplyAccumulate(a2, b3, c23);
      let a3 = fragment_a(t, 3u, k0, kk);
      c30 = subgroupMatrixMultiplyAccumulate(a3, b0, c30);
      c31 = subgroupMatrixMultiplyAccumulate(a3, b1, c31);
      c32 = subgroupMatrixMultiplyAccumulate(a3, b2, c32);
      c33 = subgroupMatrixMultiplyAccumulate(a3, b3, c33);
    }
    if (STAGED) { workgroupBarrier(); }
  }
  store_at(c00, t, 0u, 0u);
  store_at(c01, t, 0u, 1u);
  store_at(c02, t, 0u, 2u);
  store_at(c03, t, 0u, 3u);
  store_at(c10, t, 1u, 0u);
  store_at(c11, t, 1u, 1u);
  store_at(c12, t, 1u, 2u);
  store_at(c13, t, 1u, 3u);
  store_at(c20, t, 2u, 0u);
  store_at(c21, t, 2u, 1u);
  store_at(c22, t, 2u, 2u);
  store_at(c23, t, 2u, 3u);
  store_at(c30, t, 3u, 0u);
  store_at(c31, t, 3u, 1u);
  store_at(c32, t, 3u, 2u);
  store_at(c33, t, 3u, 3u);
}
