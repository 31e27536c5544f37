// conv2d_nhwc (implicit GEMM) against a float64 direct convolution on OIHW weights.
import { after, test } from 'node:test';

import { repackConvWeight } from '../../kernels/wgsl_templates.mjs';
import { assertClose, checkContract, closeGpu, rng, run, unsupported } from './harness.mjs';

after(closeGpu);

function reference({ N, H, W, C, O, KH, stride = 1, pad = 0 }, input, oihw, bias, residual, silu) {
  const KW = KH;
  const OH = Math.floor((H + 2 * pad - KH) / stride) + 1, OW = Math.floor((W + 2 * pad - KW) / stride) + 1;
  const out = new Float64Array(N * OH * OW * O);
  for (let n = 0; n < N; n++) for (let oh = 0; oh < OH; oh++) for (let ow = 0; ow < OW; ow++) {
    for (let o = 0; o < O; o++) {
      let s = bias ? bias[o] : 0;
      for (let kh = 0; kh < KH; kh++) {
        const ih = oh * stride - pad + kh;
        if (ih < 0 || ih >= H) continue;
        for (let kw = 0; kw < KW; kw++) {
          const iw = ow * stride - pad + kw;
          if (iw < 0 || iw >= W) continue;
          for (let c = 0; c < C; c++) s += input[((n * H + ih) * W + iw) * C + c] * oihw[((o * C + c) * KH + kh) * KW + kw];
        }
      }
      if (silu) s = s / (1 + Math.exp(-s));
      const idx = ((n * OH + oh) * OW + ow) * O + o;
      out[idx] = s + (residual ? residual[idx] : 0);
    }
  }
  return out;
}

test('conv2d_nhwc: the template agrees with the binding and Params tables', () => checkContract('conv2d_nhwc'));
test('conv2d_nhwc_f16: the template agrees with the binding and Params tables', () => checkContract('conv2d_nhwc_f16'));
test('conv2d_nhwc_sgmat: the template agrees with the binding and Params tables', () => checkContract('conv2d_nhwc_sgmat'));
test('conv2d_nhwc_sgmat_a16: the template agrees with the binding and Params tables', () => checkContract('conv2d_nhwc_sgmat_a16'));

const cases = [
  { name: '3x3 s1 p1 2x12x12x40 -> 48, +residual', shape: { N: 2, H: 12, W: 12, C: 40, O: 48, KH: 3, stride: 1, pad: 1 }, residual: true },
  { name: '3x3 s2 p1 (downsample) 2x10x10x32 -> 32', shape: { N: 2, H: 10, W: 10, C: 32, O: 32, KH: 3, stride: 2, pad: 1 } },
  { name: '1x1 s1 p0 (skip) 2x8x8x64 -> 40', shape: { N: 2, H: 8, W: 8, C: 64, O: 40, KH: 1, stride: 1, pad: 0 } },
  { name: '3x3 s1 p1 conv_in 1x9x7x4 -> 36, SiLU, 128x64 tiles', shape: { N: 1, H: 9, W: 7, C: 4, O: 36, KH: 3, stride: 1, pad: 1 },
    silu: true, overrides: { BM: 128, TM: 8 }, sgmat: { SGM: 4, SGN: 1, BM: 128, BN: 32, BK: 16 } },
  { name: '3x3 s1 p1 1x6x6x24 -> 20, one subgroup', shape: { N: 1, H: 6, W: 6, C: 24, O: 20, KH: 3, stride: 1, pad: 1 },
    sgmat: { SGM: 1, SGN: 1, BM: 32, BN: 32 } },
  // Split-K: K = 9 * 40 = 360 in 3 splits of 128 (the last 104 deep), +residual and SiLU after the sum.
  { name: '3x3 s1 p1 2x8x8x40 -> 72, split-K 3, +residual, SiLU',
    shape: { N: 2, H: 8, W: 8, C: 40, O: 72, KH: 3, stride: 1, pad: 1 }, residual: true, silu: true,
    overrides: { SPLIT_K: 3 }, sgmat: { SGM: 1, SGN: 1, BM: 32, BN: 32, SPLIT_K: 3 } },
  { name: '3x3 s1 p1 2x4x4x64 -> 80, split-K 6 on 64x64 tiles',
    shape: { N: 2, H: 4, W: 4, C: 64, O: 80, KH: 3, stride: 1, pad: 1 }, overrides: { SPLIT_K: 6 }, sgmat: { SPLIT_K: 6 } },
  // The subgroup-matrix tier's wider tiles, the weight's fragments straight from storage or staged.
  { name: '3x3 s1 p1 2x8x8x64 -> 128, +residual, 128x64 tiles, direct B', residual: true,
    shape: { N: 2, H: 8, W: 8, C: 64, O: 128, KH: 3, stride: 1, pad: 1 },
    sgmat: { SGM: 2, SGN: 2, FM: 4, FN: 2, BM: 128, BN: 64, B_DIRECT: true } },
  { name: '3x3 s1 p1 2x4x4x64 -> 64, split-K 4, one subgroup of 4x4, direct B',
    shape: { N: 2, H: 4, W: 4, C: 64, O: 64, KH: 3, stride: 1, pad: 1 }, overrides: { SPLIT_K: 4 },
    sgmat: { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64, B_DIRECT: true, SPLIT_K: 4 } },
  { name: '3x3 s2 p1 1x10x10x32 -> 40, SiLU, 128x64 tiles, staged B', silu: true,
    shape: { N: 1, H: 10, W: 10, C: 32, O: 40, KH: 3, stride: 2, pad: 1 },
    sgmat: { SGM: 2, SGN: 2, FM: 4, FN: 2, BM: 128, BN: 64, BK: 16 } },
];

// The f16 tier rounds the weight to f16 (11 significant bits), the subgroup-matrix tier both
// operands; both accumulate in f32.
const families = [
  { family: 'conv2d_nhwc', tolerance: 1e-5, skip: false },
  { family: 'conv2d_nhwc_f16', tolerance: 2e-3, skip: (await unsupported('conv2d_nhwc_f16')) ?? false },
  { family: 'conv2d_nhwc_sgmat', tolerance: 2e-3, skip: (await unsupported('conv2d_nhwc_sgmat')) ?? false },
];
for (const { family, tolerance, skip } of families) {
  for (const { name, shape, residual, silu, overrides = {}, sgmat = {} } of cases) {
    test(`${family}: ${name}`, { skip }, async () => {
      const r = rng(name.length * 104729);
      const { N, H, W, C, O, KH } = shape;
      const input = r.floats(N * H * W * C);
      const oihw = r.floats(O * C * KH * KH, 1 / Math.sqrt(C * KH * KH));
      const bias = r.floats(O);
      const OH = Math.floor((H + 2 * shape.pad - KH) / shape.stride) + 1, OW = Math.floor((W + 2 * shape.pad - KH) / shape.stride) + 1;
      const inputs = { input, weight: repackConvWeight(oihw, O, C, KH, KH), bias };
      if (residual) inputs.residual = r.floats(N * OH * OW * O);
      const { out } = await run(family, shape, inputs, { HAS_BIAS: true, HAS_RESIDUAL: !!residual, ACTIVATION: silu ? 1 : 0,
                                                         ...(family.endsWith('_sgmat') ? sgmat : overrides) });
      assertClose(`${family} ${name}`, out, reference(shape, input, oihw, bias, inputs.residual, silu), tolerance);
    });
  }
}

// conv2d_nhwc_sgmat_a16: the input in f16, zero-padded by the launch before it (here by the test);
// output rows of 16 and more pixels, channels in multiples of 16, both operands' fragments from
// storage. Tolerance as conv2d_nhwc_sgmat's (the input rounds to f16 there too).
function padded({ N, H, W, C, pad }, input) {
  const HP = H + 2 * pad, WP = W + 2 * pad;
  const out = new Float32Array(N * HP * WP * C);
  for (let n = 0; n < N; n++) for (let h = 0; h < H; h++) {
    out.set(input.subarray(((n * H + h) * W) * C, ((n * H + h + 1) * W) * C), ((n * HP + h + pad) * WP + pad) * C);
  }
  return out;
}
const a16Cases = [
  { name: '3x3 s1 p1 2x16x16x32 -> 64, +residual, one subgroup of 4x4', residual: true,
    shape: { N: 2, H: 16, W: 16, C: 32, O: 64, KH: 3, stride: 1, pad: 1 }, tiles: { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64 } },
  { name: '3x3 s1 p1 1x8x32x48 -> 64, SiLU, 2x2 subgroups of 2x2, BK 16', silu: true,
    shape: { N: 1, H: 8, W: 32, C: 48, O: 64, KH: 3, stride: 1, pad: 1 }, tiles: { BK: 16 } },
  { name: '3x3 s2 p1 (downsample) 2x32x32x32 -> 32, split-K 3',
    shape: { N: 2, H: 32, W: 32, C: 32, O: 32, KH: 3, stride: 2, pad: 1 }, tiles: { SGM: 1, SGN: 1, FM: 2, FN: 2, BM: 32, BN: 32, SPLIT_K: 3 } },
  { name: '1x1 s1 p0 1x4x16x64 -> 128, 64x128 tiles', shape: { N: 1, H: 4, W: 16, C: 64, O: 128, KH: 1, stride: 1, pad: 0 },
    tiles: { SGM: 1, SGN: 2, FM: 4, FN: 4, BM: 64, BN: 128 } },
];
const a16Skip = (await unsupported('conv2d_nhwc_sgmat_a16')) ?? false;
for (const { name, shape, residual, silu, tiles } of a16Cases) {
  test(`conv2d_nhwc_sgmat_a16: ${name}`, { skip: a16Skip }, async () => {
    const r = rng(name.length * 104729);
    const { N, H, W, C, O, KH } = shape;
    const input = r.floats(N * H * W * C);
    const oihw = r.floats(O * C * KH * KH, 1 / Math.sqrt(C * KH * KH));
    const bias = r.floats(O);
    const OH = Math.floor((H + 2 * shape.pad - KH) / shape.stride) + 1, OW = Math.floor((W + 2 * shape.pad - KH) / shape.stride) + 1;
    const inputs = { input: padded(shape, input), weight: repackConvWeight(oihw, O, C, KH, KH), bias };
    if (residual) inputs.residual = r.floats(N * OH * OW * O);
    const { out } = await run('conv2d_nhwc_sgmat_a16', shape, inputs,
                              { HAS_BIAS: true, HAS_RESIDUAL: !!residual, ACTIVATION: silu ? 1 : 0, ...tiles });
    assertClose(`conv2d_nhwc_sgmat_a16 ${name}`, out, reference(shape, input, oihw, bias, inputs.residual, silu), 2e-3);
  });
}
