// pad (constant zero, per-axis before/after) is an exact copy with zeros.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { toF16Bits } from '../../kernels/wgsl_templates.mjs';
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

test('pad_to_f16: the template agrees with the binding and Params tables', () => checkContract('pad_to_f16'));

// f16 bits to their value (exact: every f16 is an f32).
function fromF16(h) {
  const e = (h >> 10) & 0x1f, m = h & 0x3ff, sign = h & 0x8000 ? -1 : 1;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m ? NaN : sign * Infinity;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

test('pad_to_f16: zero-padded NHWC in f16, rounded to nearest, past the range clamped', async () => {
  for (const shape of [{ N: 2, H: 5, W: 7, C: 6, pad: 1 }, { N: 1, H: 1, W: 9, C: 16, pad: 0 }]) {
    const { N, H, W, C, pad } = shape;
    const x = rng(C).floats(N * H * W * C, 4);
    x[1] = 70000;  // past f16's 65504
    x[3] = 1 + 2 ** -11;  // halfway between 1 and the next f16: to even (1)
    const { out } = await run('pad_to_f16', shape, { x });
    const halves = new Uint16Array(out.buffer, out.byteOffset, 2 * out.length);
    const HP = H + 2 * pad, WP = W + 2 * pad;
    assert.equal(halves.length, N * HP * WP * C);
    const want = new Float32Array(halves.length);
    for (let n = 0; n < N; n++) for (let h = 0; h < H; h++) for (let w = 0; w < W; w++) for (let c = 0; c < C; c++) {
      want[((n * HP + h + pad) * WP + w + pad) * C + c] = x[((n * H + h) * W + w) * C + c];
    }
    const bits = toF16Bits(want.map((v) => Math.max(-65504, Math.min(65504, v))));
    assert.deepEqual(Array.from(halves), Array.from(bits));
    assert.equal(fromF16(halves[(pad * WP + pad) * C + 1]), 65504);
    assert.equal(fromF16(halves[(pad * WP + pad) * C + 3]), 1);
  }
});
