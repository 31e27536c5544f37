// permute (rank <= 6) is an exact copy.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('permute: the template agrees with the binding and Params tables', () => checkContract('permute'));

function permuteRef(x, dims, perm) {
  const strides = dims.map((_, a) => dims.slice(a + 1).reduce((p, d) => p * d, 1));
  const outDims = perm.map((a) => dims[a]);
  const out = new Float32Array(x.length);
  for (let idx = 0; idx < x.length; idx++) {
    let rest = idx, src = 0;
    for (let a = outDims.length - 1; a >= 0; a--) {
      src += (rest % outDims[a]) * strides[perm[a]];
      rest = Math.floor(rest / outDims[a]);
    }
    out[idx] = x[src];
  }
  return out;
}

for (const [dims, perm, what] of [
  [[2, 77, 4, 16], [0, 2, 1, 3], '[B,S,H,D] -> [B,H,S,D]'],
  [[2, 5, 6, 24], [0, 3, 1, 2], 'NHWC -> NCHW'],
  [[2, 3, 4, 5, 3, 2], [5, 3, 1, 0, 4, 2], 'rank 6'],
]) {
  test(`permute: ${what} ${dims} by ${perm}`, async () => {
    const x = rng(dims.length).floats(dims.reduce((p, d) => p * d, 1));
    const { out } = await run('permute', { dims, perm }, { x });
    assert.deepEqual(out, permuteRef(x, dims, perm));
  });
}
