// gather_rows (token embedding by i32 ids), in one block and in two row blocks.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { checkContract, closeGpu, rng, run } from './harness.mjs';

after(closeGpu);

test('gather_rows: the template agrees with the binding and Params tables', () => checkContract('gather_rows'));

test('gather_rows: 2x77 ids into a 1000 x 48 table, whole and as two row blocks', async () => {
  const V = 1000, D = 48, n = 154;
  const r = rng(77);
  const table = r.floats(V * D);
  const ids = Int32Array.from({ length: n }, (_, i) => (i === 0 ? 0 : i === 1 ? V - 1 : Math.floor(r() * V)));
  const want = new Float32Array(n * D);
  for (let i = 0; i < n; i++) want.set(table.subarray(ids[i] * D, ids[i] * D + D), i * D);
  const whole = await run('gather_rows', { n, D, rows: V }, { table, ids });
  assert.deepEqual(whole.out, want);
  // Rows [0, 600) then [600, 1000), each launch writing only its ids' rows.
  const first = await run('gather_rows', { n, D, rows: 600, rowBegin: 0 },
                          { table: table.subarray(0, 600 * D), ids, out: new Float32Array(n * D) });
  const second = await run('gather_rows', { n, D, rows: 400, rowBegin: 600 },
                           { table: table.subarray(600 * D), ids, out: first.out });
  assert.deepEqual(second.out, want);
});
