// pad (constant zero, per-axis before/after) is an exact copy with zeros.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('pad: the template agrees with the binding and Params tables', () => checkContract('pad'));

test('pad: NHWC spatial (the VAE downsample pads 0/1) and every axis', async () => {
  for (const [dims, before, after] of [[[1, 6, 5, 8], [0, 0, 0, 0], [0, 1, 1, 0]], [[2, 3, 4], [1, 2, 0], [0, 1, 3]]]) {
    const x = rng(dims.length).floats(dims.reduce((p, d) => p * d, 1));
    const { out } = await run('pad', { dims, before, after }, { x });
    const od = dims.map((d, a) => d + before[a] + after[a]);
    const want = new Float32Array(od.reduce((p, d) => p * d, 1));
    for (let idx = 0; idx < want.length; idx++) {
      let rest = idx, src = 0, stride = 1, inside = true;
      for (let a = od.length - 1; a >= 0; a--) {
        const c = (rest % od[a]) - before[a];
        rest = Math.floor(rest / od[a]);
        inside &&= c >= 0 && c < dims[a];
        src += c * stride;
        stride *= dims[a];
      }
      want[idx] = inside ? x[src] : 0;
    }
    assert.deepEqual(out, want);
  }
});
