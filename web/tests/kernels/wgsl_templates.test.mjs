// The JS side of the template contract, without a GPU: grid folding, Params packing, limits.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FAMILIES, constantLines, fold1d, foldYz, packParams, prepare, specialize } from '../../kernels/wgsl_templates.mjs';

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
