// geglu (x [.., 2F] -> a * gelu(g)) against float64, and the WGSL erf on its own.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { loadTemplate } from '../../kernels/wgsl_templates.mjs';
import { assertClose, checkContract, closeGpu, gpu, rng, run } from './harness.mjs';
import { erf64, gelu64 } from './reference.mjs';

after(closeGpu);

test('geglu: the template agrees with the binding and Params tables', () => checkContract('geglu'));

test('geglu: 2x64 tokens, F = 160', async () => {
  const rows = 128, F = 160;
  const x = rng(3).floats(rows * 2 * F, 4);
  const want = new Float64Array(rows * F);
  for (let r = 0; r < rows; r++) for (let f = 0; f < F; f++) want[r * F + f] = x[r * 2 * F + f] * gelu64(x[r * 2 * F + F + f]);
  const { out } = await run('geglu', { rows, F }, { x });
  assertClose('geglu 128x2x160', out, want, 1e-5);
});

test('erf_f32 is within 1.5e-7 absolute of erf on [-6, 6]', async () => {
  const source = await loadTemplate('geglu');
  const erf = source.match(/fn erf_f32[\s\S]*?\n}\n/)[0];
  const code = `${erf}
@group(0) @binding(0) var<storage, read> xs: array<f32>;
@group(0) @binding(1) var<storage, read_write> ys: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&xs)) { ys[id.x] = erf_f32(xs[id.x]); }
}`;
  const n = 64 * 256;
  const xs = new Float32Array(n);
  for (let k = 0; k < n; k++) xs[k] = -6 + (12 * k) / (n - 1);
  xs[0] = 0; xs[1] = 0.927734375; xs[2] = -0.927734375; xs[3] = 1e-20; xs[4] = 20;
  const g = await gpu();
  const kernel = g.createKernel(code, 'main', ['read', 'readwrite']);
  const a = g.createBuffer(n * 4), y = g.createBuffer(n * 4);
  g.writeBuffer(a, 0, xs);
  await g.settled();
  const program = g.createProgram([{ kernel, bindings: [{ buffer: a, offset: 0, bytes: n * 4 }, { buffer: y, offset: 0, bytes: n * 4 }],
                                     dispatch: [n / 64, 1, 1] }]);
  g.runProgram(program);
  let ys;
  g.readBuffer(y, 0, n * 4, (view) => { ys = new Float32Array(view.slice().buffer); });
  await g.settled();
  let worst = 0, at = 0;
  for (let k = 0; k < n; k++) {
    const e = Math.abs(ys[k] - erf64(xs[k]));
    if (e > worst) { worst = e; at = xs[k]; }
  }
  console.log(`# erf_f32: max abs error ${worst.toExponential(2)} at x = ${at}`);
  assert.ok(worst <= 1.5e-7, `erf_f32 error ${worst} at ${at}`);
});
