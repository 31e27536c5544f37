// image_to_rgba: [1, 3, H, W] in [-1, 1] -> [H, W, 4] pixel values.
import { after, test } from 'node:test';

import { assertClose, checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('image_to_rgba: the template agrees with the binding and Params tables', () => checkContract('image_to_rgba'));

test('image_to_rgba: 24 x 40, values beyond [-1, 1] clamp', async () => {
  const H = 24, W = 40;
  const image = rng(9).floats(3 * H * W, 1.3);
  const { out } = await run('image_to_rgba', { H, W }, { image });
  const want = new Float64Array(H * W * 4);
  for (let p = 0; p < H * W; p++) {
    for (let c = 0; c < 3; c++) want[p * 4 + c] = 255 * Math.min(Math.max(image[c * H * W + p] / 2 + 0.5, 0), 1);
    want[p * 4 + 3] = 255;
  }
  assertClose('image_to_rgba', out, want, 1e-6);
});
