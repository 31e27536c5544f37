// slice (one axis) is an exact copy.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('slice: the template agrees with the binding and Params tables', () => checkContract('slice'));

test('slice: the second half of a GEGLU projection and a middle of axis 1', async () => {
  for (const [dims, axis, start, end] of [[[2, 33, 80], 2, 40, 80], [[3, 10, 7], 1, 2, 9]]) {
    const x = rng(axis).floats(dims.reduce((p, d) => p * d, 1));
    const { out } = await run('slice', { dims, axis, start, end }, { x });
    const inner = dims.slice(axis + 1).reduce((p, d) => p * d, 1), outer = dims.slice(0, axis).reduce((p, d) => p * d, 1);
    const want = [];
    for (let o = 0; o < outer; o++) for (let i = start; i < end; i++) for (let r = 0; r < inner; r++) want.push(x[(o * dims[axis] + i) * inner + r]);
    assert.deepEqual(out, Float32Array.from(want));
  }
});
