// Shared by the kernel tests: one GPU per test file, a seeded PRNG, running a prepared template
// through the bridge exactly as the compiler's launches will, and the relative L2 error.
import assert from 'node:assert/strict';

import { GpuBridge } from '../../bridge/websd_gpu.mjs';
import { nodeGpu } from '../../node/node_gpu.mjs';
import { FAMILIES, kMaxStorageBuffersPerStage, loadTemplate, prepare, toF16Bits } from '../../kernels/wgsl_templates.mjs';

// One bridge per feature and limit set the families ask for (most ask for none).
const bridges = new Map();
export async function gpu(requiredFeatures = [], requiredLimits = {}) {
  const key = JSON.stringify([requiredFeatures, requiredLimits]);
  if (!bridges.has(key)) bridges.set(key, GpuBridge.create(await nodeGpu(), { requiredFeatures, requiredLimits }));
  return bridges.get(key);
}
export function closeGpu() {
  for (const bridge of bridges.values()) bridge.then((b) => b.destroy(), () => {});
  bridges.clear();
}

// Why this adapter cannot run `family` (a feature it lacks), or null: tests of such families are
// skipped saying so (SwiftShader offers neither shader-f16 nor subgroup matrices).
export async function unsupported(family) {
  const features = FAMILIES[family].features ?? [];
  if (features.length === 0) return null;
  const adapter = await (await nodeGpu()).requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) return 'no adapter';
  const missing = features.filter((f) => !adapter.features.has(f));
  if (missing.length) return `the adapter (${adapter.info?.description || adapter.info?.vendor || 'unknown'}) lacks ${missing.join(', ')}`;
  for (const [limit, needed] of Object.entries(FAMILIES[family].limits ?? {})) {
    if (!(adapter.limits[limit] >= needed)) return `the adapter offers ${limit} ${adapter.limits[limit]}, not ${needed}`;
  }
  const configs = adapter.info?.subgroupMatrixConfigs ?? [];
  const f16 = configs.some((c) => c.componentType === 'f16' && c.resultComponentType === 'f32' && c.M === 16 && c.N === 16 && c.K === 16);
  if (family.endsWith('_sgmat') && !f16) return 'the adapter has no f16 -> f32 16x16x16 subgroup-matrix configuration';
  return null;
}

// Mulberry32: deterministic floats in [-scale, scale).
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.floats = (n, scale = 1, offset = 0) => {
    const out = new Float32Array(n);
    for (let k = 0; k < n; k++) out[k] = offset + (next() * 2 - 1) * scale;
    return out;
  };
  return next;
}

export function relL2(got, want) {
  let num = 0, den = 0;
  for (let k = 0; k < want.length; k++) {
    const d = got[k] - want[k];
    num += d * d;
    den += want[k] * want[k];
  }
  if (!(num >= 0)) return Infinity;  // NaN
  return den === 0 ? Math.sqrt(num) : Math.sqrt(num / den);
}

// Asserts relative L2 <= tol, logs it (the deliverable reports the worst seen per family).
export function assertClose(name, got, want, tol) {
  assert.equal(got.length, want.length, `${name}: length`);
  const err = relL2(got, want);
  console.log(`# ${name}: rel L2 ${err.toExponential(2)}`);
  assert.ok(err <= tol, `${name}: relative L2 error ${err} > ${tol}`);
  return err;
}

const kernelCache = new Map();

// Runs `family` on `shape` with `inputs` ({ bindingName: typed array }): optional inputs left out
// are bound to the first input (not read); those the kernel reads as f16 are written rounded to f16. Returns { outputName: Float32Array }, plus `prepared`.
export async function run(family, shape, inputs, overrides = {}, { repeat = 1 } = {}) {
  const prepared = await prepare(family, shape, overrides);
  const g = await gpu(prepared.features, prepared.limits);
  const access = prepared.bindings.map(([, mode]) => (mode === 'read' ? 'read' : 'readwrite'));
  const kernels = new Map();
  for (const { entry } of prepared.launches) {
    const key = `${prepared.code}\n//${entry}`;
    if (!kernelCache.has(key)) kernelCache.set(key, g.createKernel(prepared.code, entry, access, prepared.uniforms.byteLength));
    kernels.set(entry, kernelCache.get(key));
  }
  const buffers = [];
  const made = [];
  let first = null;
  for (const [name, mode] of prepared.bindings) {
    let data = inputs[name];
    let count;
    if (data) {
      count = data.length;
      if (prepared.f16Bindings.includes(name)) data = toF16Bits(data);
    } else if (mode === 'read') {
      buffers.push(first);
      continue;
    } else {
      count = name === 'workspace' ? prepared.sizes.workspace : prepared.sizes[name];
      if (count === undefined) throw new Error(`harness: no size for output '${name}'`);
    }
    const bytes = Math.max(4, data ? data.byteLength + (data.byteLength % 4) : 4 * count);
    const handle = g.createBuffer(bytes);
    made.push(handle);
    if (data) g.writeBuffer(handle, 0, data);
    else g.writeBuffer(handle, 0, new Float32Array(Math.ceil(bytes / 4)).fill(NaN));  // catches unwritten outputs
    const binding = { buffer: handle, offset: 0, bytes, name, mode };
    first ??= binding;
    buffers.push(binding);
  }
  await g.settled();
  const program = g.createProgram(prepared.launches.map(({ entry, dispatch }) => ({
    kernel: kernels.get(entry),
    bindings: buffers.map(({ buffer, offset, bytes }) => ({ buffer, offset, bytes })),
    uniforms: prepared.uniforms,
    dispatch,
  })));
  for (let r = 0; r < repeat; r++) g.runProgram(program);
  const outputs = { prepared };
  for (const binding of buffers) {
    if (binding.mode === 'read' || binding.name === 'workspace') continue;
    g.readBuffer(binding.buffer, 0, binding.bytes, (view) => {
      outputs[binding.name] = new Float32Array(view.slice().buffer);
    });
  }
  await g.settled();
  g.release(program);
  for (const handle of made) g.release(handle);
  return outputs;
}

// The template's declared bindings agree with the table, are at most 8 storage buffers, and its
// Params struct has the table's fields in the table's order.
export async function checkContract(family) {
  const source = await loadTemplate(family);
  const spec = FAMILIES[family];
  const bindings = typeof spec.bindings === 'function' ? spec.bindings(Object.fromEntries(
      Object.entries(spec.constants({})).map(([n, [, v]]) => [n, v]))) : spec.bindings;
  const declared = [...source.matchAll(/@binding\((\d+)\)\s*var<storage,\s*(read|read_write)>\s*(\w+)/g)];
  const byIndex = new Map();
  for (const [, index, mode, name] of declared) byIndex.set(Number(index), [name, mode]);
  assert.ok(bindings.length <= kMaxStorageBuffersPerStage, `${family}: ${bindings.length} storage bindings`);
  assert.equal(byIndex.size, bindings.length, `${family}: storage bindings declared`);
  bindings.forEach(([name, mode], index) => assert.deepEqual(byIndex.get(index), [name, mode], `${family} binding ${index}`));
  const uniform = source.match(/@binding\((\d+)\)\s*var<uniform>\s*params\s*:\s*Params/);
  assert.ok(uniform, `${family}: uniform params`);
  assert.equal(Number(uniform[1]), bindings.length, `${family}: the uniform follows the storage bindings`);
  const struct = source.match(/struct Params\s*{([^}]*)}/)[1];
  const fields = [...struct.matchAll(/(\w+)\s*:\s*(u32|i32|f32)/g)].map(([, n, t]) => [n, t]);
  assert.deepEqual(fields, spec.params, `${family}: Params fields`);
}
