// attention_sgmat: attention's contract (attention.wgsl: the same operation, layouts, bindings,
// Params and dispatch folding) as flash attention on tensor cores through subgroup matrices, for
// head dimensions up to 64 (SD 1.x's 40 at 4096 tokens, where attention's time goes; 2.x's 64).
// For adapters with `shader-f16`, `subgroups` of 32 and `chromium-experimental-subgroup-matrix`
// offering f16 -> f32 16x16x16.
//
// A workgroup takes SGQ * 16 query rows, one subgroup per 16. q (times scale * log2(e)) is staged
// once as f16 in its own region, its fragments loaded again every step (fragments held in
// variables across the loop went through local memory on the H100; the GEMMs saw the same). Every
// 32 keys: the threads stage k and v as f16 (zeros past
// Skv and past the head dimension, padded to a multiple of 16); each subgroup multiplies its q
// fragments by k's (S = q k^T, 16 x 32 scores in f32), stores S to workgroup memory, where two
// lanes per row do the online softmax in f32 (running max and sum per row, in registers) and write
// P = exp2(S - max) as f16; then P v (fresh f32 fragments) goes through workgroup memory to the
// same lanes, which hold the row's output accumulator in registers and rescale it there (fragments
// cannot be scaled row by row). Output: accumulator / sum, in f32.
//
// Constants (prepended after this file's directives), defaults in brackets:
//   HEAD_DIM: u32 (D), HEAD_DIM_V: u32 (Dv), each at most 64
//   SGQ: u32 [4] subgroups per workgroup (query rows BQ = 16 * SGQ)
//   CAUSAL: bool [false]
// Workgroup memory: 2 * BQ * (DP + 8) + 2 * 32 * (DP + 8 + DPV + 8) + 4 * SGQ * 16 * max(32, DPV)
//   + 2 * SGQ * 16 * 40 bytes (DP, DPV: D, Dv rounded up to 16); with SGQ 4: 31 KiB at D 40, so the
//   family asks for maxComputeWorkgroupStorageSize 32768 (SGQ 2 at D 64).
// Workgroup size: (32, SGQ). Dispatch: x = ceil(Sq / BQ), (y, z) as attention.wgsl.
enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;
// Each row of the workgroup is one subgroup whose index is broadcast from its first invocation:
// uniform within the subgroup, which is what subgroup-matrix operations need, though not across
// the workgroup, which is all the analysis can prove.
diagnostic(off, chromium.subgroup_matrix_uniformity);

// requires: attention_io (common/attention_io.wgsl: struct Params and the bindings listed above)

const F: u32 = 16u;                        // fragment side
const BKV: u32 = 32u;                      // keys per step: two score fragments
const QF: u32 = (HEAD_DIM + F - 1u) / F;   // fragments along D (1..4)
const VF: u32 = (HEAD_DIM_V + F - 1u) / F;
const DP: u32 = QF * F;
const DPV: u32 = VF * F;
const BQ: u32 = SGQ * F;
const WG: u32 = 32u * SGQ;
const QST: u32 = DP + 8u;                  // staged row strides in halves (16 bytes of padding)
const VST: u32 = DPV + 8u;
const PST: u32 = BKV + 8u;
const VOFF: u32 = BKV * QST;               // v's rows follow k's in Stage
const SCW: u32 = max(BKV, DPV);            // a subgroup's scratch row: scores, then P v
const CPL: u32 = BKV / 2u;                 // score columns per lane (two lanes per row)
const OPL: u32 = DPV / 2u;                 // output columns per lane
const NEG: f32 = -3.0e38;                  // a masked score
const M0: f32 = -1.0e30;                   // the running max before any key

alias Left = subgroup_matrix_left<f16, F, F>;
alias Right = subgroup_matrix_right<f16, F, F>;
alias Result = subgroup_matrix_result<f32, F, F>;

var<workgroup> Qs: array<f16, BQ * QST>;                 // q, scaled
var<workgroup> Stage: array<f16, BKV * (QST + VST)>;     // each step's k and v
var<workgroup> Sc: array<f32, SGQ * F * SCW>;
var<workgroup> Ps: array<f16, SGQ * F * PST>;

// k's fragment for keys j0.. and depths d0..: a right operand (rows: depth, columns: keys).
fn k_fragment(j0: u32, d0: u32) -> Right {
  return subgroupMatrixLoad<Right, col_major>(&Stage, j0 * QST + d0, QST);
}

// v's fragment for keys j0.. and columns d0..: a right operand (rows: keys, columns: depth).
fn v_fragment(j0: u32, d0: u32) -> Right {
  return subgroupMatrixLoad<Right, row_major>(&Stage, VOFF + j0 * VST + d0, VST);
}

@compute @workgroup_size(32, SGQ)
fn attention(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_id) lid: vec3<u32>,
             @builtin(subgroup_invocation_id) lane: u32) {
  let pair = wg.y + wg.z * nwg.y;
  if (pair >= params.bh) { return; }
  let bi = pair / params.H;
  let hi = pair % params.H;
  let Sq = params.Sq;
  let Skv = params.Skv;
  let t = lid.y * 32u + lid.x;
  let sg = subgroupBroadcastFirst(lid.y);
  let row0 = wg.x * BQ;

  // q, scaled into the log2 domain, staged as f16; each subgroup keeps its 16 rows as fragments.
  let qbase = params.q_off + bi * params.q_sb + hi * params.q_sh;
  let c = params.scale * 1.4426950408889634;
  for (var e = t; e < BQ * DP; e += WG) {
    let i = row0 + e / DP;
    let d = e % DP;
    var val = 0.0;
    if (i < Sq && d < HEAD_DIM) { val = q[qbase + i * params.q_ss + d] * c; }
    Qs[(e / DP) * QST + d] = f16(val);
  }
  let qrow = sg * F * QST;

  // This lane's row of the subgroup's 16 and its half of the columns.
  let r = lane / 2u;
  let half = lane % 2u;
  let i = row0 + sg * F + r;
  let sbase = sg * F * SCW;
  let pbase = sg * F * PST;
  var o: array<f32, OPL>;
  var m = M0;
  var l = 0.0;

  let kbase = params.k_off + bi * params.k_sb + hi * params.k_sh;
  let vbase = params.v_off + bi * params.v_sb + hi * params.v_sh;
  // Keys j <= limit are visible (causal); the workgroup stops after its last row's last key.
  let limit = i32(i) + i32(Skv) - i32(Sq);
  let kv_end = keys_end(row0, BQ);

  for (var kv0 = 0u; kv0 < kv_end; kv0 += BKV) {
    for (var e = t; e < BKV * DP; e += WG) {
      let j = kv0 + e / DP;
      let d = e % DP;
      var val = 0.0;
      if (j < Skv && d < HEAD_DIM) { val = k[kbase + j * params.k_ss + d]; }
      Stage[(e / DP) * QST + d] = f16(val);
    }
    for (var e = t; e < BKV * DPV; e += WG) {
      let j = kv0 + e / DPV;
      let d = e % DPV;
      var val = 0.0;
      if (j < Skv && d < HEAD_DIM_V) { val = v[vbase + j * params.v_ss + d]; }
      Stage[VOFF + (e / DPV) * VST + d] = f16(val);
    }
    workgroupBarrier();

    // S = q k^T for keys kv0 .. kv0 + 31: two fragments.
    var s0 = Result();
    var s1 = Result();
    for (var f = 0u; f < QF; f++) {
      let qf = subgroupMatrixLoad<Left, row_major>(&Qs, qrow + f * F, QST);
      s0 = subgroupMatrixMultiplyAccumulate(qf, k_fragment(0u, f * F), s0);
      s1 = subgroupMatrixMultiplyAccumulate(qf, k_fragment(F, f * F), s1);
    }
    subgroupMatrixStore<row_major>(&Sc, sbase, s0, SCW);
    subgroupMatrixStore<row_major>(&Sc, sbase + F, s1, SCW);
    workgroupBarrier();

    // The online softmax of row r over this lane's 16 columns and its partner lane's.
    var s: array<f32, CPL>;
    var step_max = NEG;
    for (var cc = 0u; cc < CPL; cc++) {
      let col = half * CPL + cc;
      let j = kv0 + col;
      let visible = j < Skv && (!CAUSAL || i32(j) <= limit);
      s[cc] = select(NEG, Sc[sbase + r * SCW + col], visible);
      step_max = max(step_max, s[cc]);
    }
    step_max = max(step_max, subgroupShuffleXor(step_max, 1u));
    let m_new = max(m, step_max);
    let alpha = exp2(m - m_new);
    m = m_new;
    var sum = 0.0;
    for (var cc = 0u; cc < CPL; cc++) {
      let p = exp2(s[cc] - m);
      sum += p;
      Ps[pbase + r * PST + half * CPL + cc] = f16(p);
    }
    sum += subgroupShuffleXor(sum, 1u);
    l = l * alpha + sum;
    workgroupBarrier();

    // P v for this step in fresh fragments, out through the scratch to the row's lanes.
    let p0 = subgroupMatrixLoad<Left, row_major>(&Ps, pbase, PST);
    let p1 = subgroupMatrixLoad<Left, row_major>(&Ps, pbase + F, PST);
    var t0 = Result();
    t0 = subgroupMatrixMultiplyAccumulate(p0, v_fragment(0u, 0u), t0);
    t0 = subgroupMatrixMultiplyAccumulate(p1, v_fragment(F, 0u), t0);
    subgroupMatrixStore<row_major>(&Sc, sbase, t0, SCW);
    if (VF > 1u) {
      var t1 = Result();
      t1 = subgroupMatrixMultiplyAccumulate(p0, v_fragment(0u, F), t1);
      t1 = subgroupMatrixMultiplyAccumulate(p1, v_fragment(F, F), t1);
      subgroupMatrixStore<row_major>(&Sc, sbase + F, t1, SCW);
    }
    if (VF > 2u) {
      var t2 = Result();
      t2 = subgroupMatrixMultiplyAccumulate(p0, v_fragment(0u, 2u * F), t2);
      t2 = subgroupMatrixMultiplyAccumulate(p1, v_fragment(F, 2u * F), t2);
      subgroupMatrixStore<row_major>(&Sc, sbase + 2u * F, t2, SCW);
    }
    if (VF > 3u) {
      var t3 = Result();
      t3 = subgroupMatrixMultiplyAccumulate(p0, v_fragment(0u, 3u * F), t3);
      t3 = subgroupMatrixMultiplyAccumulate(p1, v_fragment(F, 3u * F), t3);
      subgroupMatrixStore<row_major>(&Sc, sbase + 3u * F, t3, SCW);
    }
    workgroupBarrier();
    for (var cc = 0u; cc < OPL; cc++) {
      o[cc] = fma(o[cc], alpha, Sc[sbase + r * SCW + half * OPL + cc]);
    }
    workgroupBarrier();
  }

  if (i < Sq) {
    let inv = select(0.0, 1.0 / l, l > 0.0);
    let obase = params.o_off + bi * params.o_sb + hi * params.o_sh + i * params.o_ss;
    for (var cc = 0u; cc < OPL; cc++) {
      let d = half * OPL + cc;
      if (d < HEAD_DIM_V) { out[obase + d] = o[cc] * inv; }
    }
  }
}
