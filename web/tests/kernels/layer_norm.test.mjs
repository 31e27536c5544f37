// layer_norm over the last axis against float64.
import { after, test } from 'node:test';

import { assertClose, checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

function reference({ rows, D, eps = 1e-5 }, x, gamma, beta) {
  const out = new Float64Array(rows * D);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let d = 0; d < D; d++) sum += x[r * D + d];
    const mean = sum / D;
    let sq = 0;
    for (let d = 0; d < D; d++) sq += (x[r * D + d] - mean) ** 2;
    const rstd = 1 / Math.sqrt(sq / D + eps);
    for (let d = 0; d < D; d++) out[r * D + d] = (x[r * D + d] - mean) * rstd * gamma[d] + beta[d];
  }
  return out;
}

test('layer_norm: the template agrees with the binding and Params tables', () => checkContract('layer_norm'));

for (const { name, shape, offset = 0 } of [
  { name: 'CLIP rows 154 x 96', shape: { rows: 154, D: 96 } },
  { name: 'tokens 128 x 320, mean 50', shape: { rows: 128, D: 320 }, offset: 50 },
]) {
  test(`layer_norm: ${name}`, async () => {
    const r = rng(name.length * 7);
    const x = r.floats(shape.rows * shape.D, 1, offset), gamma = r.floats(shape.D, 0.5, 1), beta = r.floats(shape.D);
    const { out } = await run('layer_norm', shape, { x, gamma, beta });
    assertClose(`layer_norm ${name}`, out, reference(shape, x, gamma, beta), 1e-5);
  });
}
