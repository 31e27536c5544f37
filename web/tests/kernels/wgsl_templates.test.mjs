// The JS side of the template contract, without a GPU: grid folding, Params packing, limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FAMILIES, constantLines, fold1d, foldYz, packParams, prepare, specialize, toF16Bits } from '../../kernels/wgsl_templates.mjs';

test('fold1d keeps every dimension <= 65535 and covers the count', () => {
  assert.deepEqual(fold1d(1), [1, 1, 1]);
  assert.deepEqual(fold1d(65535), [65535, 1, 1]);
  assert.deepEqual(fold1d(65536), [32768, 2, 1]);
  for (const g of [65536, 100000, 4194304, 65535 * 65535]) {
    const [x, y] = fold1d(g);
    assert.ok(x <= 65535 && y <= 65535 && x * y >= g && x * (y - 1) < g, `${g}: ${x} x ${y}`);
  }
  assert.deepEqual(foldYz(5, 70000), [5, 35000, 2]);
});

test('toF16Bits rounds to the nearest binary16, ties to even, with subnormals, infinities and NaN', () => {
  const cases = [[1, 0x3c00], [-2, 0xc000], [0, 0], [-0, 0x8000], [65504, 0x7bff], [65520, 0x7c00], [1e6, 0x7c00],
                 [-Infinity, 0xfc00], [NaN, 0x7e00], [1 + 2 ** -11, 0x3c00], [1 + 3 * 2 ** -11, 0x3c02],
                 [2 ** -24, 0x0001], [2 ** -25, 0], [3 * 2 ** -25, 0x0002], [2 ** -14, 0x0400], [0.1, 0x2e66],
                 [2 ** -15 + 2 ** -25, 0x0200]];
  assert.deepEqual([...toF16Bits(cases.map(([v]) => v))].map((h) => h.toString(16)), cases.map(([, h]) => h.toString(16)));
});

test('the subgroup-matrix GEMMs read their weight as f16, every other binding as f32', async () => {
  assert.deepEqual((await prepare('matmul_sgmat', { M: 64, N: 64, K: 64 })).f16Bindings, ['w']);
  assert.deepEqual((await prepare('conv2d_nhwc_sgmat', { N: 1, H: 8, W: 8, C: 8, O: 64, KH: 3, pad: 1 })).f16Bindings, ['weight']);
  assert.deepEqual((await prepare('matmul', { M: 64, N: 64, K: 64 })).f16Bindings, []);
});

test('Params pack as consecutive 4-byte fields, padded to 16 bytes', () => {
  const bytes = packParams([['a', 'u32'], ['b', 'f32'], ['c', 'i32'], ['d', 'u32'], ['e', 'u32']], { a: 7, b: 0.5, c: -3, d: 2 ** 32 - 1, e: 1 });
  assert.equal(bytes.byteLength, 32);
  const view = new DataView(bytes.buffer);
  assert.deepEqual([view.getUint32(0, true), view.getFloat32(4, true), view.getInt32(8, true), view.getUint32(12, true), view.getUint32(16, true)],
                   [7, 0.5, -3, 2 ** 32 - 1, 1]);
  assert.throws(() => packParams([['a', 'u32']], { a: -1 }), /not a u32/);
  assert.throws(() => packParams([['a', 'u32']], {}), /no value/);
});

test('constants are written as typed WGSL const declarations', () => {
  assert.equal(constantLines({ BM: ['u32', 64], CAUSAL: ['bool', false], S: ['f32', 1], E: ['f32', 0.5], I: ['i32', -2] }),
               'const BM: u32 = 64u;\nconst CAUSAL: bool = false;\nconst S: f32 = 1.0;\nconst E: f32 = 0.5;\nconst I: i32 = -2i;\n');
});

test('every family binds at most 8 storage buffers; tiling beyond the limits is refused', async () => {
  for (const [name, spec] of Object.entries(FAMILIES)) {
    const bindings = typeof spec.bindings === 'function' ? spec.bindings({}) : spec.bindings;
    assert.ok(bindings.length <= 8, `${name}: ${bindings.length}`);
  }
  await assert.rejects(prepare('matmul', { M: 8, N: 8, K: 8 }, { BM: 128, BN: 128, TM: 4, TN: 4 }), /threads per workgroup/);
  await assert.rejects(prepare('matmul', { M: 8, N: 8, K: 8 }, { BK: 32 }), /workgroup memory/);
  await assert.rejects(prepare('attention', { B: 1, H: 1, Sq: 8, Skv: 8, D: 160 }, { TPR: 1, BKV: 32 }), /workgroup memory/);
  // The defaults fit at every SD head dimension.
  for (const D of [40, 64, 80, 160]) await prepare('attention', { B: 2, H: 8, Sq: 4096, Skv: 4096, D });
});

// The same case as the C++ side's WgslModule.SpecializingPutsDirectivesBeforeTheConstants.
test('specialize puts the directives before the constants, as the compiler does', () => {
  assert.equal(specialize('const A: u32 = 1u;\n',
                          '// a header\nenable f16;\nstruct S { x: u32 }\ndiagnostic(off, chromium.rule);\nenabled_flag();\nfn f() {}\n'),
               'enable f16;\ndiagnostic(off, chromium.rule);\nconst A: u32 = 1u;\n// a header\nstruct S { x: u32 }\nenabled_flag();\nfn f() {}\n');
  assert.equal(specialize('const A: u32 = 1u;\n', 'fn f() {}\n'), 'const A: u32 = 1u;\nfn f() {}\n');
});
