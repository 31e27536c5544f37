// attention (flash, online softmax) against float64 softmax(q k^T * scale) v.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { assertClose, checkContract, closeGpu, rng, run, unsupported } from './harness.mjs';

after(closeGpu);

// Layouts: element index of (b, h, s, d) for each tensor.
function reference({ B, H, Sq, Skv, D, Dv = D, scale = 1 / Math.sqrt(D), causal }, q, k, v, at) {
  const out = new Float64Array(B * H * Sq * Dv);
  const scores = new Float64Array(Skv);
  for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let i = 0; i < Sq; i++) {
    let max = -Infinity;
    for (let j = 0; j < Skv; j++) {
      if (causal && j > i + Skv - Sq) { scores[j] = -Infinity; continue; }
      let s = 0;
      for (let d = 0; d < D; d++) s += q[at.q(b, h, i, d)] * k[at.k(b, h, j, d)];
      scores[j] = s * scale;
      max = Math.max(max, scores[j]);
    }
    let sum = 0;
    for (let j = 0; j < Skv; j++) { scores[j] = Math.exp(scores[j] - max); sum += scores[j]; }
    for (let d = 0; d < Dv; d++) {
      let acc = 0;
      for (let j = 0; j < Skv; j++) acc += scores[j] * v[at.v(b, h, j, d)];
      out[((b * H + h) * Sq + i) * Dv + d] = acc / sum;
    }
  }
  return out;
}

const dense = (H, S, D) => (b, h, s, d) => ((b * H + h) * S + s) * D + d;

test('attention: the template agrees with the binding and Params tables', () => checkContract('attention'));
test('attention_sgmat: the template agrees with the binding and Params tables', () => checkContract('attention_sgmat'));

const cases = [
  { name: 'self 8x8 tokens, D=40 (SD 1.5 level 1)', shape: { B: 2, H: 2, Sq: 64, Skv: 64, D: 40 } },
  { name: 'cross 70 -> 77 tokens, D=40', shape: { B: 2, H: 1, Sq: 70, Skv: 77, D: 40 } },
  { name: 'cross 40 -> 77, D=64 (SD 2.x)', shape: { B: 2, H: 2, Sq: 40, Skv: 77, D: 64 } },
  { name: 'self 50 tokens, D=80', shape: { B: 2, H: 1, Sq: 50, Skv: 50, D: 80 } },
  { name: 'self 20 tokens, D=160', shape: { B: 1, H: 2, Sq: 20, Skv: 20, D: 160 } },
  { name: 'causal 77 tokens, D=64 (CLIP)', shape: { B: 2, H: 2, Sq: 77, Skv: 77, D: 64, causal: true } },
  { name: 'causal Sq 5 < Skv 37, D=64', shape: { B: 1, H: 1, Sq: 5, Skv: 37, D: 64, causal: true } },
  // Two and four rows per thread: a key staged once serves each thread's rows (rows past Sq too).
  { name: 'self 150 tokens, D=40, 2 rows per thread', shape: { B: 2, H: 2, Sq: 150, Skv: 150, D: 40 },
    overrides: { RPT: 2 } },
  { name: 'causal 77 tokens, D=64, 4 rows per thread', shape: { B: 1, H: 2, Sq: 77, Skv: 77, D: 64, causal: true },
    overrides: { RPT: 4, BQ: 64 } },
  { name: 'self 50 tokens, D=80, 2 threads and 2 rows per row group', shape: { B: 1, H: 2, Sq: 50, Skv: 50, D: 80 },
    overrides: { RPT: 2 } },
  // 65600 (batch, head) pairs of 4 query rows in 4-thread workgroups: the grid folds into (y, z).
  { name: 'folded grid: 2 x 32800 heads, D=4', shape: { B: 2, H: 32800, Sq: 3, Skv: 5, D: 4 }, overrides: { BQ: 4 }, folded: true },
];

// Cases the subgroup-matrix kernel adds: several 32-key steps with a partial last one, and both
// of its workgroup sizes (SGQ 2 and 4) over rows that do not fill the last workgroup.
const sgmatCases = [
  { name: 'self 300 tokens, D=40, SGQ 2', shape: { B: 1, H: 2, Sq: 300, Skv: 300, D: 40 }, overrides: { SGQ: 2 } },
  { name: 'self 300 tokens, D=40, SGQ 4', shape: { B: 1, H: 2, Sq: 300, Skv: 300, D: 40 }, overrides: { SGQ: 4 } },
  { name: 'Dv 24 < D 48', shape: { B: 1, H: 2, Sq: 33, Skv: 70, D: 48, Dv: 24 } },
];

// The subgroup-matrix kernel rounds q, k, p and v to f16 (11 significant bits), sums in f32.
const families = [
  { family: 'attention', tolerance: 1e-5, skip: false, fits: () => true },
  { family: 'attention_sgmat', tolerance: 4e-3, skip: (await unsupported('attention_sgmat')) ?? false,
    fits: (shape) => shape.D <= 64 && (shape.Dv ?? shape.D) <= 64 },
];
for (const { family, tolerance, skip, fits } of families) {
  const own = family === 'attention' ? cases : [...cases.filter((c) => !c.overrides), ...sgmatCases];
  for (const { name, shape, overrides = {}, folded } of own) {
    if (!fits(shape)) continue;
    test(`${family}: ${name}`, { skip }, async () => {
      const r = rng(name.length * 31337);
      const { B, H, Sq, Skv, D } = shape;
      const Dv = shape.Dv ?? D;
      const q = r.floats(B * H * Sq * D, 2), k = r.floats(B * H * Skv * D, 2), v = r.floats(B * H * Skv * Dv);
      const { out, prepared } = await run(family, shape, { q, k, v }, overrides);
      if (folded) assert.ok(prepared.launches[0].dispatch[2] > 1, `not folded: ${prepared.launches[0].dispatch}`);
      const want = reference(shape, q, k, v, { q: dense(H, Sq, D), k: dense(H, Skv, D), v: dense(H, Skv, Dv) });
      assertClose(`${family} ${name}`, out, want, tolerance);
    });
  }
}

for (const { family, tolerance, skip } of families) {
  test(`${family}: q, k, v read in place from a merged QKV projection [B, S, 3*H*D]`, { skip }, async () => {
    const B = 2, H = 2, S = 33, D = 40, row = 3 * H * D;
    const shape = { B, H, Sq: S, Skv: S, D,
      layout: { q: { off: 0, sb: S * row, sh: D, ss: row }, k: { off: H * D, sb: S * row, sh: D, ss: row },
                v: { off: 2 * H * D, sb: S * row, sh: D, ss: row },
                o: { off: 0, sb: S * H * D, sh: D, ss: H * D } } };  // out as [B, S, H, D]
    const qkv = rng(5).floats(B * S * row, 2);
    const { out } = await run(family, shape, { q: qkv, k: qkv, v: qkv });
    const at = (base) => (b, h, s, d) => b * S * row + s * row + base + h * D + d;
    const want = reference(shape, qkv, qkv, qkv, { q: at(0), k: at(H * D), v: at(2 * H * D) });
    // want is [B, H, S, D]; out is [B, S, H, D]
    const got = new Float32Array(want.length);
    for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let s = 0; s < S; s++) for (let d = 0; d < D; d++) {
      got[((b * H + h) * S + s) * D + d] = out[((b * S + s) * H + h) * D + d];
    }
    assertClose(`${family} merged QKV`, got, want, tolerance);
  });
}
