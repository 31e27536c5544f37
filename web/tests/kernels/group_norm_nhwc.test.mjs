// group_norm_nhwc (three launches: chunk partials, Chan merge, apply) against float64.
import { after, test } from 'node:test';

import { assertClose, checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

function reference({ N, H, W, C, G, eps = 1e-5 }, x, gamma, beta, silu) {
  const HW = H * W, Cg = C / G;
  const out = new Float64Array(x.length);
  for (let n = 0; n < N; n++) for (let g = 0; g < G; g++) {
    let sum = 0;
    for (let p = 0; p < HW; p++) for (let c = g * Cg; c < (g + 1) * Cg; c++) sum += x[(n * HW + p) * C + c];
    const mean = sum / (HW * Cg);
    let sq = 0;
    for (let p = 0; p < HW; p++) for (let c = g * Cg; c < (g + 1) * Cg; c++) sq += (x[(n * HW + p) * C + c] - mean) ** 2;
    const rstd = 1 / Math.sqrt(sq / (HW * Cg) + eps);
    for (let p = 0; p < HW; p++) for (let c = g * Cg; c < (g + 1) * Cg; c++) {
      const i = (n * HW + p) * C + c;
      let y = (x[i] - mean) * rstd * gamma[c] + beta[c];
      if (silu) y = y / (1 + Math.exp(-y));
      out[i] = y;
    }
  }
  return out;
}

test('group_norm_nhwc: the template agrees with the binding and Params tables', () => checkContract('group_norm_nhwc'));

const cases = [
  // SD's 32 groups of 10 channels (C=320 scaled down to 8 groups of 10), SiLU, one chunk per group.
  { name: '2x8x8x80 G=8 SiLU', shape: { N: 2, H: 8, W: 8, C: 80, G: 8 }, silu: true },
  // Many chunks per group (chunks of 7 pixels: a partial last one), data far from zero: E[x^2] - E[x]^2
  // in f32 loses about 1e-3 of the variance here (an error near 1e-3), a shifted two-pass method
  // stays near f32's own rounding of the mean (ulp(30) / std, about 2e-6).
  { name: '2x16x16x64 G=16, mean 30, 37 chunks', shape: { N: 2, H: 16, W: 16, C: 64, G: 16, chunkPixels: 7 },
    offset: 30 },
  { name: '1x12x10x96 G=32 eps 1e-6', shape: { N: 1, H: 12, W: 10, C: 96, G: 32, eps: 1e-6 } },
];

for (const { name, shape, silu, scale = 1, offset = 0 } of cases) {
  test(`group_norm_nhwc: ${name}`, async () => {
    const r = rng(name.length * 65537);
    const x = r.floats(shape.N * shape.H * shape.W * shape.C, scale, offset);
    const gamma = r.floats(shape.C, 0.5, 1), beta = r.floats(shape.C, 0.5);
    const { out } = await run('group_norm_nhwc', shape, { x, gamma, beta }, { SILU: !!silu });
    assertClose(`group_norm_nhwc ${name}`, out, reference(shape, x, gamma, beta, silu), 1e-5);
  });
}
