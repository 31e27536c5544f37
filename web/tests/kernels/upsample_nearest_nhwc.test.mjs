// upsample_nearest_nhwc is an exact copy.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('upsample_nearest_nhwc: the template agrees with the binding and Params tables', () => checkContract('upsample_nearest_nhwc'));

test('upsample_nearest_nhwc: 2x5x4x24 by 2, 1x3x3x8 by 3', async () => {
  for (const [N, H, W, C, scale] of [[2, 5, 4, 24, 2], [1, 3, 3, 8, 3]]) {
    const x = rng(scale).floats(N * H * W * C);
    const { out } = await run('upsample_nearest_nhwc', { N, H, W, C, scale }, { x });
    const want = [];
    for (let n = 0; n < N; n++) for (let oh = 0; oh < H * scale; oh++) for (let ow = 0; ow < W * scale; ow++) {
      for (let c = 0; c < C; c++) want.push(x[((n * H + Math.floor(oh / scale)) * W + Math.floor(ow / scale)) * C + c]);
    }
    assert.deepEqual(out, Float32Array.from(want));
  }
});
