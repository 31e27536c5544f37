// concat (two inputs, one axis) is an exact copy.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('concat: the template agrees with the binding and Params tables', () => checkContract('concat'));

test('concat: UNet skip connection on channels (NHWC) and on the batch axis', async () => {
  for (const [dimsA, dimsB, axis] of [[[2, 4, 4, 40], [2, 4, 4, 24], 3], [[1, 7, 3], [2, 7, 3], 0]]) {
    const r = rng(axis + 1);
    const a = r.floats(dimsA.reduce((p, d) => p * d, 1)), b = r.floats(dimsB.reduce((p, d) => p * d, 1));
    const { out } = await run('concat', { dimsA, dimsB, axis }, { a, b });
    const inner = dimsA.slice(axis + 1).reduce((p, d) => p * d, 1), outer = dimsA.slice(0, axis).reduce((p, d) => p * d, 1);
    const want = [];
    for (let o = 0; o < outer; o++) {
      for (let i = 0; i < dimsA[axis] * inner; i++) want.push(a[o * dimsA[axis] * inner + i]);
      for (let i = 0; i < dimsB[axis] * inner; i++) want.push(b[o * dimsB[axis] * inner + i]);
    }
    assert.deepEqual(out, Float32Array.from(want));
  }
});
