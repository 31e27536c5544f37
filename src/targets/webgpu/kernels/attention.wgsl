// attention: out[b, h, i, :] = sum_j softmax_j(scale * q[b, h, i, :] . k[b, h, j, :]) v[b, h, j, :]
// with, when CAUSAL, query i seeing only keys j <= i + Skv - Sq. Flash attention: one pass over the
// keys in tiles of BKV through workgroup memory with an online softmax (running max, rescaled sum
// and output), so the Sq x Skv score matrix is never stored. Scores in the log2 domain (q is
// pre-multiplied by scale * log2(e), exp2 thereafter); all in f32. A row that sees no key gets 0.
//
// Each query row is owned by TPR adjacent threads: thread `part` holds q[part*D/TPR ..) and
// out[part*Dv/TPR ..) in registers; with TPR > 1 the partial dot products meet in workgroup memory.
// Each thread holds RPT rows (BQ / RPT apart), so that a key or value staged in workgroup memory
// is read once for RPT rows.
// Operands are addressed through (offset, batch, head, sequence) strides in elements with the head
// dimension contiguous, so [B,H,S,D] tensors, [B,S,H,D] ones and slices of a merged QKV
// projection [B,S,3*H*D] are all read in place.
//
// Constants (prepended as `const NAME: TYPE = VALUE;`), defaults in brackets (by head dimension):
//   HEAD_DIM: u32 (D), HEAD_DIM_V: u32 (Dv)  D/TPR and Dv/TPR multiples of 4
//   TPR: u32 [1 for D <= 48, 2 for D <= 96, 4 beyond]  threads per query row
//   BQ: u32 [128 at TPR 1, 64 at TPR 2, 32 at TPR 4]  query rows per workgroup; BQ * TPR / RPT <= 256
//   BKV: u32 [8 at TPR 1, else the largest of 16, 8, 4 that fits: 40 -> 8, 64 -> 16, 80 -> 8, 160 -> 8]
//   RPT: u32 [1]  query rows per thread, dividing BQ; BQ * TPR / RPT threads per workgroup
//   CAUSAL: bool [false]
//   Workgroup memory 4 * (BKV * (D + Dv) + (TPR > 1 ? BQ * TPR * (BKV + 1) : 1)) bytes <= 16384.
// Bindings (@group(0)): 0 q: read, 1 k: read, 2 v: read, 3 out: read_write, 4 params: uniform Params.
// Params (4-byte fields, in order): H, Sq, Skv, scale (f32), then for q, k, v and out in turn:
//   off, sb, sh, ss (element offset, batch / head / sequence strides), then bh (= B * H).
// Dispatch: x = ceil(Sq / BQ); the B*H (batch, head) pairs folded into (y, z):
//   B*H <= 65535: (B*H, 1), else z = ceil(B*H / 65535), y = ceil(B*H / z);
//   pair = wg.y + wg.z * num_workgroups.y (b = pair / H, h = pair % H).

// requires: attention_io (common/attention_io.wgsl: struct Params and the bindings listed above)

const WG: u32 = BQ * TPR / RPT;
const GROUPS: u32 = BQ / RPT;             // groups of TPR threads; group g owns rows g + r * GROUPS
const D4: u32 = HEAD_DIM / 4u;
const DV4: u32 = HEAD_DIM_V / 4u;
const DT4: u32 = HEAD_DIM / TPR / 4u;     // vec4s of q per thread and row
const DVT4: u32 = HEAD_DIM_V / TPR / 4u;  // vec4s of out per thread and row
const PS: u32 = BKV + 1u;                 // padded row of partial scores
const NEG: f32 = -3.0e38;                 // a masked score
const M0: f32 = -1.0e30;                  // the running max before any key

var<workgroup> Ks: array<vec4<f32>, BKV * D4>;
var<workgroup> Vs: array<vec4<f32>, BKV * DV4>;
var<workgroup> Ps: array<f32, select(1u, BQ * TPR * PS, TPR > 1u)>;

@compute @workgroup_size(WG)
fn attention(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) t: u32) {
  let pair = wg.y + wg.z * nwg.y;
  if (pair >= params.bh) { return; }
  let bi = pair / params.H;
  let hi = pair % params.H;
  let Sq = params.Sq;
  let Skv = params.Skv;
  let group = t / TPR;
  let part = t % TPR;

  let c = params.scale * 1.4426950408889634;
  var qr: array<vec4<f32>, RPT * DT4>;
  var o: array<vec4<f32>, RPT * DVT4>;
  var m: array<f32, RPT>;
  var l: array<f32, RPT>;
  var limit: array<i32, RPT>;  // keys j <= limit are visible (causal)
  for (var r = 0u; r < RPT; r++) {
    let i = wg.x * BQ + group + r * GROUPS;
    let qbase = params.q_off + bi * params.q_sb + hi * params.q_sh + min(i, Sq - 1u) * params.q_ss + part * DT4 * 4u;
    for (var d = 0u; d < DT4; d++) {
      let e = qbase + d * 4u;
      qr[r * DT4 + d] = vec4<f32>(q[e], q[e + 1u], q[e + 2u], q[e + 3u]) * c;
    }
    m[r] = M0;
    limit[r] = i32(i) + i32(Skv) - i32(Sq);
  }

  let kbase = params.k_off + bi * params.k_sb + hi * params.k_sh;
  let vbase = params.v_off + bi * params.v_sb + hi * params.v_sh;
  // The workgroup stops after its last row's last key.
  let kv_end = keys_end(wg.x * BQ, BQ);

  for (var kv0 = 0u; kv0 < kv_end; kv0 += BKV) {
    for (var e = t; e < BKV * HEAD_DIM; e += WG) {
      let j = kv0 + e / HEAD_DIM;
      var val = 0.0;
      if (j < Skv) { val = k[kbase + j * params.k_ss + e % HEAD_DIM]; }
      Ks[e / 4u][e % 4u] = val;
    }
    for (var e = t; e < BKV * HEAD_DIM_V; e += WG) {
      let j = kv0 + e / HEAD_DIM_V;
      var val = 0.0;
      if (j < Skv) { val = v[vbase + j * params.v_ss + e % HEAD_DIM_V]; }
      Vs[e / 4u][e % 4u] = val;
    }
    workgroupBarrier();

    // Scores: each staged key vector serves the thread's RPT rows.
    var s: array<f32, RPT * BKV>;
    for (var j = 0u; j < BKV; j++) {
      // Zeroed explicitly: a declaration in a loop kept the last iteration's values on SwiftShader.
      var a: array<vec4<f32>, RPT>;
      for (var r = 0u; r < RPT; r++) { a[r] = vec4<f32>(0.0); }
      let kj = j * D4 + part * DT4;
      for (var d = 0u; d < DT4; d++) {
        let kv = Ks[kj + d];
        for (var r = 0u; r < RPT; r++) { a[r] = fma(qr[r * DT4 + d], kv, a[r]); }
      }
      for (var r = 0u; r < RPT; r++) { s[r * BKV + j] = (a[r].x + a[r].y) + (a[r].z + a[r].w); }
    }
    if (TPR > 1u) {
      for (var r = 0u; r < RPT; r++) {
        for (var j = 0u; j < BKV; j++) { Ps[(r * WG + t) * PS + j] = s[r * BKV + j]; }
      }
      workgroupBarrier();
      for (var r = 0u; r < RPT; r++) {
        for (var j = 0u; j < BKV; j++) {
          var sum = 0.0;
          for (var p = 0u; p < TPR; p++) { sum += Ps[(r * WG + group * TPR + p) * PS + j]; }
          s[r * BKV + j] = sum;
        }
      }
    }

    var p: array<f32, RPT>;
    for (var r = 0u; r < RPT; r++) {
      var mt = m[r];
      for (var j = 0u; j < BKV; j++) {
        let kj = kv0 + j;
        let visible = kj < Skv && (!CAUSAL || i32(kj) <= limit[r]);
        s[r * BKV + j] = select(NEG, s[r * BKV + j], visible);
        mt = max(mt, s[r * BKV + j]);
      }
      let alpha = exp2(m[r] - mt);
      m[r] = mt;
      l[r] *= alpha;
      for (var d = 0u; d < DVT4; d++) { o[r * DVT4 + d] *= alpha; }
    }
    for (var j = 0u; j < BKV; j++) {
      for (var r = 0u; r < RPT; r++) {
        p[r] = exp2(s[r * BKV + j] - m[r]);
        l[r] += p[r];
      }
      let vj = j * DV4 + part * DVT4;
      for (var d = 0u; d < DVT4; d++) {
        let vv = Vs[vj + d];
        for (var r = 0u; r < RPT; r++) { o[r * DVT4 + d] = fma(vec4<f32>(p[r]), vv, o[r * DVT4 + d]); }
      }
    }
    workgroupBarrier();
  }

  for (var r = 0u; r < RPT; r++) {
    let i = wg.x * BQ + group + r * GROUPS;
    if (i < Sq) {
      let inv = select(0.0, 1.0 / l[r], l[r] > 0.0);
      let obase = params.o_off + bi * params.o_sb + hi * params.o_sh + i * params.o_ss + part * DVT4 * 4u;
      for (var d = 0u; d < DVT4; d++) {
        let x = o[r * DVT4 + d] * inv;
        let e = obase + d * 4u;
        out[e] = x.x;
        out[e + 1u] = x.y;
        out[e + 2u] = x.z;
        out[e + 3u] = x.w;
      }
    }
  }
}
