// softmax over the last axis against float64.
import { after, test } from 'node:test';

import { assertClose, checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('softmax: the template agrees with the binding and Params tables', () => checkContract('softmax'));

test('softmax: 2x77 rows of 77 and 600 columns, large logits', async () => {
  for (const D of [77, 600]) {
    const rows = 154;
    const x = rng(D).floats(rows * D, 30, 100);
    const want = new Float64Array(rows * D);
    for (let r = 0; r < rows; r++) {
      let m = -Infinity, s = 0;
      for (let d = 0; d < D; d++) m = Math.max(m, x[r * D + d]);
      for (let d = 0; d < D; d++) s += Math.exp(x[r * D + d] - m);
      for (let d = 0; d < D; d++) want[r * D + d] = Math.exp(x[r * D + d] - m) / s;
    }
    const { out } = await run('softmax', { rows, D }, { x });
    assertClose(`softmax ${rows}x${D}`, out, want, 1e-5);
  }
});
