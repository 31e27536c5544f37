// matmul / linear: out = act(x @ w^T + bias) + residual, against float64.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { assertClose, checkContract, closeGpu, rng, run, unsupported } from './harness.mjs';
import { erf64 } from './reference.mjs';

after(closeGpu);

function reference({ M, N, K, batch = 1, sharedWeight = true }, x, w, bias, residual, activation = 0) {
  const out = new Float64Array(batch * M * N);
  for (let bb = 0; bb < batch; bb++) {
    const wb = sharedWeight ? 0 : bb * N * K;
    for (let m = 0; m < M; m++) {
      for (let n = 0; n < N; n++) {
        let s = bias ? bias[n] : 0;
        for (let k = 0; k < K; k++) s += x[(bb * M + m) * K + k] * w[wb + n * K + k];
        if (activation === 1) s = s / (1 + Math.exp(-s));
        if (activation === 2) s = 0.5 * s * (1 + erf64(s / Math.SQRT2));
        const o = (bb * M + m) * N + n;
        out[o] = s + (residual ? residual[o] : 0);
      }
    }
  }
  return out;
}

test('matmul: the template agrees with the binding and Params tables', () => checkContract('matmul'));
test('matmul_f16: the template agrees with the binding and Params tables', () => checkContract('matmul_f16'));
test('matmul_sgmat: the template agrees with the binding and Params tables', () => checkContract('matmul_sgmat'));
test('matmul_sgmat_a16: the template agrees with the binding and Params tables', () => checkContract('matmul_sgmat_a16'));

const cases = [
  // CLIP-like rows (77 * 2), K = 320, N not a tile multiple.
  { name: 'linear 154x96x320 +bias +residual', shape: { M: 154, N: 96, K: 320 }, bias: true, residual: true },
  // K not a multiple of BK, odd M and N (same pipeline).
  { name: 'linear 130x72x100 +bias +residual', shape: { M: 130, N: 72, K: 100 }, bias: true, residual: true },
  { name: 'linear 70x80x36 GELU, 128x64 tiles of 8x4', shape: { M: 70, N: 80, K: 36 }, bias: true, activation: 2,
    overrides: { BM: 128, BN: 64, TM: 8, TN: 4 }, sgmat: { SGM: 4, SGN: 1, BM: 128, BN: 32, BK: 16 } },
  { name: 'linear 40x48x64 SiLU, one subgroup of 32x32', shape: { M: 40, N: 48, K: 64 }, bias: true, activation: 1,
    sgmat: { BM: 32, BN: 32, SGM: 1, SGN: 1 } },
  { name: 'batched 2x(77x64x40), per-batch weights', shape: { M: 77, N: 64, K: 40, batch: 2, sharedWeight: false } },
  // Split-K: K = 200 in 3 splits (16-deep steps: 80, 80, 40; 32-deep: 96, 96, 8), the epilogue
  // (bias, GELU, residual) after the sum; then the time embedding's shape (2 rows) and a batch.
  { name: 'linear 70x72x200 split-K 3 +bias +residual GELU', shape: { M: 70, N: 72, K: 200 }, bias: true, residual: true,
    activation: 2, overrides: { SPLIT_K: 3 }, sgmat: { SGM: 1, SGN: 1, BM: 32, BN: 32, SPLIT_K: 3 } },
  { name: 'linear 2x80x640 split-K 5 +bias SiLU', shape: { M: 2, N: 80, K: 640 }, bias: true, activation: 1,
    overrides: { SPLIT_K: 5 }, sgmat: { SGM: 1, SGN: 1, BM: 32, BN: 32, SPLIT_K: 5 } },
  { name: 'batched 3x(20x24x96) split-K 2, per-batch weights', shape: { M: 20, N: 24, K: 96, batch: 3, sharedWeight: false },
    overrides: { SPLIT_K: 2 }, sgmat: { SGM: 1, SGN: 1, BM: 32, BN: 32, SPLIT_K: 2 } },
  // The subgroup-matrix tier's tiles of FM x FN fragments per subgroup, B read straight from
  // storage (B_DIRECT: BN divides N, BK divides K) or staged; the other tiers take their defaults.
  { name: 'linear 200x128x192 +bias +residual, 128x64 tiles, direct B', shape: { M: 200, N: 128, K: 192 }, bias: true,
    residual: true, sgmat: { SGM: 2, SGN: 2, FM: 4, FN: 2, BM: 128, BN: 64, B_DIRECT: true } },
  { name: 'linear 90x256x96 GELU, 64x128 tiles of 4x4 per subgroup, direct B', shape: { M: 90, N: 256, K: 96 }, bias: true, activation: 2,
    sgmat: { SGM: 1, SGN: 2, FM: 4, FN: 4, BM: 64, BN: 128, B_DIRECT: true } },
  { name: 'linear 100x64x320 split-K 3, one subgroup of 4x4, direct B', shape: { M: 100, N: 64, K: 320 }, bias: true,
    overrides: { SPLIT_K: 3 }, sgmat: { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64, B_DIRECT: true, SPLIT_K: 3 } },
  { name: 'linear 2x40x64 SiLU, one fragment, staged B', shape: { M: 2, N: 40, K: 64 }, bias: true, activation: 1,
    sgmat: { SGM: 1, SGN: 1, FM: 1, FN: 1, BM: 16, BN: 16 } },
  { name: 'linear 150x72x96, 128x64 tiles, staged B (N not a tile multiple)', shape: { M: 150, N: 72, K: 96 },
    bias: true, sgmat: { SGM: 2, SGN: 2, FM: 4, FN: 2, BM: 128, BN: 64, BK: 16 } },
  { name: 'batched 2x(77x64x64), per-batch weights, direct B', shape: { M: 77, N: 64, K: 64, batch: 2, sharedWeight: false },
    sgmat: { SGM: 1, SGN: 2, FM: 2, FN: 2, BM: 32, BN: 64, B_DIRECT: true } },
  // 70000 one-thread workgroups of 4x4 tiles: the tile rows fold into (y, z) past 65535.
  { name: 'batched 70000x(3x3x5), folded grid', shape: { M: 3, N: 3, K: 5, batch: 70000, sharedWeight: false },
    overrides: { BM: 4, BN: 4, TM: 4, TN: 4, BK: 1 }, folded: true },
];

// The f16 tier rounds the weight to f16 (11 significant bits), the subgroup-matrix tier both
// operands; both accumulate in f32.
const families = [
  { family: 'matmul', tolerance: 1e-5, skip: false },
  { family: 'matmul_f16', tolerance: 2e-3, skip: (await unsupported('matmul_f16')) ?? false },
  { family: 'matmul_sgmat', tolerance: 2e-3, skip: (await unsupported('matmul_sgmat')) ?? false },
];
for (const { family, tolerance, skip } of families) {
  for (const { name, shape, bias, residual, activation = 0, overrides = {}, sgmat = {}, folded } of cases) {
    if (family.endsWith('_sgmat') && folded) continue;  // the base tiles of 4 rows make the fold reachable
    test(`${family}: ${name}`, { skip }, async () => {
      const r = rng(name.length * 7919);
      const batch = shape.batch ?? 1;
      const x = r.floats(batch * shape.M * shape.K);
      const w = r.floats((shape.sharedWeight === false ? batch : 1) * shape.N * shape.K, 0.2);
      const inputs = { x, w };
      if (bias) inputs.bias = r.floats(shape.N);
      if (residual) inputs.residual = r.floats(batch * shape.M * shape.N);
      const constants = { HAS_BIAS: !!bias, HAS_RESIDUAL: !!residual, ACTIVATION: activation,
                          ...(family.endsWith('_sgmat') ? sgmat : overrides) };
      const { out, prepared } = await run(family, shape, inputs, constants);
      if (folded) assert.ok(prepared.launches[0].dispatch[2] > 1, `not folded: ${prepared.launches[0].dispatch}`);
      assertClose(`${family} ${name}`, out, reference(shape, x, w, inputs.bias, inputs.residual, activation), tolerance);
    });
  }
}

// matmul_sgmat_a16: x in f16 too, both operands' fragments from storage (M and K multiples of 16,
// BK dividing K); rows past M in a tile's last fragments read row 0 and are not stored.
const a16Cases = [
  { name: 'linear 96x128x320 +bias +residual, one subgroup of 4x4', shape: { M: 96, N: 128, K: 320 }, bias: true, residual: true,
    tiles: { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64 } },
  { name: 'linear 48x64x96 GELU, 2x2 subgroups of 2x2, BK 16', shape: { M: 48, N: 64, K: 96 }, bias: true, activation: 2,
    tiles: { BK: 16 } },
  { name: 'linear 32x64x640 split-K 5 SiLU', shape: { M: 32, N: 64, K: 640 }, bias: true, activation: 1,
    tiles: { SGM: 1, SGN: 1, BM: 32, BN: 32, SPLIT_K: 5 } },
  { name: 'batched 2x(80x128x64), per-batch weights, 64x128 tiles', shape: { M: 80, N: 128, K: 64, batch: 2, sharedWeight: false },
    tiles: { SGM: 1, SGN: 2, FM: 4, FN: 4, BM: 64, BN: 128 } },
];
const a16Skip = (await unsupported('matmul_sgmat_a16')) ?? false;
for (const { name, shape, bias, residual, activation = 0, tiles } of a16Cases) {
  test(`matmul_sgmat_a16: ${name}`, { skip: a16Skip }, async () => {
    const r = rng(name.length * 7919);
    const batch = shape.batch ?? 1;
    const x = r.floats(batch * shape.M * shape.K);
    const w = r.floats((shape.sharedWeight === false ? batch : 1) * shape.N * shape.K, 0.2);
    const inputs = { x, w };
    if (bias) inputs.bias = r.floats(shape.N);
    if (residual) inputs.residual = r.floats(batch * shape.M * shape.N);
    const { out } = await run('matmul_sgmat_a16', shape, inputs,
                              { HAS_BIAS: !!bias, HAS_RESIDUAL: !!residual, ACTIVATION: activation, ...tiles });
    assertClose(`matmul_sgmat_a16 ${name}`, out, reference(shape, x, w, inputs.bias, inputs.residual, activation), 2e-3);
  });
}
