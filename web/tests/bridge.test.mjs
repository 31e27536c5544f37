// The WebGPU bridge (web/bridge/websd_gpu.mjs) on Dawn under Node: SwiftShader in CI, a real GPU
// where one is offered. Every read-back is compared with what the host computes.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { GpuBridge, chooseTier, gpuErrorMessage, missingCapability } from '../bridge/websd_gpu.mjs';
import { nodeGpu } from '../node/node_gpu.mjs';

// out[i] = a[i] * scale + b[i], with scale and n in a uniform block.
const kAxpy = `
struct Params { n: u32, scale: f32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
@compute @workgroup_size(64)
fn axpy(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < params.n) { out[id.x] = a[id.x] * params.scale + b[id.x]; }
}`;

// x[i] += 1, no uniforms.
const kIncrement = `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64)
fn increment(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x < arrayLength(&x)) { x[id.x] = x[id.x] + 1.0; }
}`;

let gpu;
before(async () => {
  gpu = await GpuBridge.create(await nodeGpu());
});
after(() => gpu?.destroy());

function floats(values) {
  return new Float32Array(values);
}

function uniforms(n, scale) {
  const bytes = new ArrayBuffer(8);
  new DataView(bytes).setUint32(0, n, true);
  new DataView(bytes).setFloat32(4, scale, true);
  return new Uint8Array(bytes);
}

async function readFloats(handle, offset, count) {
  let result;
  gpu.readBuffer(handle, offset, count * 4, (view) => {
    result = new Float32Array(view.slice().buffer);
  });
  await gpu.settled();
  return Array.from(result);
}

test('a program runs its launches with their uniforms and reads back the result', async () => {
  const n = 100;
  const a = gpu.createBuffer(n * 4), b = gpu.createBuffer(n * 4), out = gpu.createBuffer(n * 4);
  const av = floats(Array.from({ length: n }, (_, i) => i)), bv = floats(Array.from({ length: n }, (_, i) => 1 - i));
  gpu.writeBuffer(a, 0, av);
  gpu.writeBuffer(b, 0, bv);
  const kernel = gpu.createKernel(kAxpy, 'axpy', ['read', 'read', 'write'], 8);
  await gpu.settled();
  const binding = (buffer) => ({ buffer, offset: 0, bytes: n * 4 });
  const program = gpu.createProgram([
    { kernel, bindings: [binding(a), binding(b), binding(out)], uniforms: uniforms(n, 3), dispatch: [2, 1, 1] },
  ]);
  gpu.runProgram(program);
  const result = await readFloats(out, 0, n);
  assert.deepEqual(result, Array.from({ length: n }, (_, i) => Math.fround(av[i] * 3 + bv[i])));
  for (const handle of [program, kernel, a, b, out]) gpu.release(handle);
});

test('writes, runs, copies and reads take effect in the order they are called', async () => {
  const x = gpu.createBuffer(16), copy = gpu.createBuffer(16);
  const kernel = gpu.createKernel(kIncrement, 'increment', ['readwrite']);
  await gpu.settled();
  const program = gpu.createProgram([{ kernel, bindings: [{ buffer: x, offset: 0, bytes: 16 }], dispatch: [1, 1, 1] }]);
  gpu.writeBuffer(x, 0, floats([1, 2, 3, 4]));
  gpu.runProgram(program);
  gpu.copyBuffer(x, 0, copy, 0, 16);  // holds the first run's result
  const first = [];
  gpu.readBuffer(x, 0, 16, (view) => first.push(...new Float32Array(view.slice().buffer)));
  gpu.writeBuffer(x, 0, floats([10, 20, 30, 40]));  // after the run and the read: must not overtake them
  gpu.runProgram(program);
  gpu.runProgram(program);
  assert.deepEqual(await readFloats(x, 0, 4), [12, 22, 32, 42]);
  assert.deepEqual(first, [2, 3, 4, 5]);
  assert.deepEqual(await readFloats(copy, 0, 4), [2, 3, 4, 5]);
  for (const handle of [program, kernel, x, copy]) gpu.release(handle);
});

test('a run before its kernel compiled waits for it, and later commands keep their order', async () => {
  const x = gpu.createBuffer(16);
  const kernel = gpu.createKernel(kIncrement, 'increment', ['readwrite']);
  const program = gpu.createProgram([{ kernel, bindings: [{ buffer: x, offset: 0, bytes: 16 }], dispatch: [1, 1, 1] }]);
  gpu.writeBuffer(x, 0, floats([1, 2, 3, 4]));
  gpu.runProgram(program);  // the kernel is still compiling: queued, with what follows
  const first = [];
  gpu.readBuffer(x, 0, 16, (view) => first.push(...new Float32Array(view.slice().buffer)));
  const later = floats([10, 20, 30, 40]);
  gpu.writeBuffer(x, 0, later);
  later.fill(0);  // the queued write holds a copy
  gpu.runProgram(program);
  assert.equal(gpu.poll(), false);
  assert.deepEqual(await readFloats(x, 0, 4), [11, 21, 31, 41]);
  assert.deepEqual(first, [2, 3, 4, 5]);
  for (const handle of [program, kernel, x]) gpu.release(handle);
});

// Writes go through the bridge's upload slots (4 x 32 MiB, reused once the GPU copied them out; a
// write split where a slot fills), in order with the runs around them; past the slots' room,
// queue.writeBuffer takes over. uploadRoom() waits for room again.
test('large writes go through reused upload slots, in order, and uploadRoom waits for their room', async () => {
  const mib = 1024 * 1024;
  const count = (5 * mib) / 4;
  const pattern = (seed) => Float32Array.from({ length: count }, (_, i) => ((i * 7 + seed) % 1000) - 500);
  const kernel = gpu.createKernel(kIncrement, 'increment', ['readwrite']);
  await gpu.settled();
  const buffers = [];
  // 40 writes of 5 MiB: 200 MiB, more than the slots hold at once (128 MiB).
  for (let i = 0; i < 40; ++i) {
    const buffer = gpu.createBuffer(count * 4);
    gpu.writeBuffer(buffer, 0, pattern(i));
    buffers.push(buffer);
  }
  assert.ok(gpu.uploadSlots.length > 0 && gpu.uploadSlots.length <= 4);
  const x = buffers[3];
  const program = gpu.createProgram([{ kernel, bindings: [{ buffer: x, offset: 0, bytes: count * 4 }], dispatch: [Math.ceil(count / 64), 1, 1] }]);
  gpu.runProgram(program);  // after x's write, before the next one
  gpu.writeBuffer(x, 0, pattern(100));
  gpu.runProgram(program);
  await gpu.uploadRoom();
  assert.ok(gpu.uploadSlots.every((slot) => slot.view && slot.used === 0));
  const big = gpu.createBuffer(40 * mib);  // larger than a slot: split over two
  const bigValues = Float32Array.from({ length: 10 * mib }, (_, i) => i % 4096);
  gpu.writeBuffer(big, 0, bigValues);
  assert.equal(gpu.uploadRoomNow(), 128 * mib - 40 * mib);
  for (const i of [0, 17, 39]) assert.deepEqual(await readFloats(buffers[i], 0, count), Array.from(pattern(i)));
  assert.deepEqual(await readFloats(x, 0, count), Array.from(pattern(100), (v) => v + 1));
  assert.deepEqual(await readFloats(big, 4 * (10 * mib - 8), 8), Array.from(bigValues.subarray(10 * mib - 8)));
  for (const handle of [program, kernel, big, ...buffers]) gpu.release(handle);
});

// A small write between large ones (a bias after its weight) shares the slots rather than
// flushing them to the GPU half-used, so that the next large write still finds their room.
test('small writes share the upload slots with large ones, without a flush', async () => {
  const mib = 1024 * 1024;
  await gpu.uploadRoom(128 * mib);
  const room = gpu.uploadRoomNow();
  const weight = gpu.createBuffer(mib), bias = gpu.createBuffer(16), next = gpu.createBuffer(mib);
  const values = Float32Array.from({ length: mib / 4 }, (_, i) => i % 977);
  gpu.writeBuffer(weight, 0, values);
  gpu.writeBuffer(bias, 0, floats([1, 2, 3, 4]));
  gpu.writeBuffer(next, 0, values);
  assert.equal(gpu.uploadRoomNow(), room - 2 * mib - 16);  // nothing handed back to the GPU yet
  assert.deepEqual(await readFloats(bias, 0, 4), [1, 2, 3, 4]);
  assert.deepEqual(await readFloats(next, 4 * (mib / 4 - 4), 4), Array.from(values.subarray(mib / 4 - 4)));
  for (const handle of [weight, bias, next]) gpu.release(handle);
});

// A run waits for its own kernels only, and drained() for the reads enqueued, not for the
// compilations no run waits on (a first image's steps need not wait for the VAE's pipelines).
test('drained() delivers the reads enqueued while another kernel may still compile', async () => {
  const x = gpu.createBuffer(16);
  const kernel = gpu.createKernel(kIncrement, 'increment', ['readwrite']);
  await gpu.settled();
  const program = gpu.createProgram([{ kernel, bindings: [{ buffer: x, offset: 0, bytes: 16 }], dispatch: [1, 1, 1] }]);
  const other = gpu.createKernel(kAxpy.replace('* params.scale', '* params.scale * 1.0'), 'axpy', ['read', 'read', 'write'], 8);
  gpu.writeBuffer(x, 0, floats([1, 2, 3, 4]));
  gpu.runProgram(program);
  let seen = null;
  gpu.readBuffer(x, 0, 16, (view) => { seen = Array.from(new Float32Array(view.slice().buffer)); });
  await gpu.drained();
  assert.deepEqual(seen, [2, 3, 4, 5]);
  await gpu.settled();  // the other kernel too
  for (const handle of [program, kernel, other, x]) gpu.release(handle);
});

test('a sub-range binding and a partial read see only their bytes', async () => {
  const alignment = gpu.limits().minStorageBufferOffsetAlignment;
  const x = gpu.createBuffer(alignment + 16);
  gpu.writeBuffer(x, 0, new Float32Array((alignment + 16) / 4));
  const kernel = gpu.createKernel(kIncrement, 'increment', ['readwrite']);
  await gpu.settled();
  const program = gpu.createProgram([{ kernel, bindings: [{ buffer: x, offset: alignment, bytes: 16 }], dispatch: [1, 1, 1] }]);
  gpu.runProgram(program);
  assert.deepEqual(await readFloats(x, alignment - 8, 6), [0, 0, 1, 1, 1, 1]);
  for (const handle of [program, kernel, x]) gpu.release(handle);
});

test('poll reports work in flight until it is delivered', async () => {
  const x = gpu.createBuffer(4);
  gpu.writeBuffer(x, 0, floats([7]));
  let delivered = null;
  gpu.readBuffer(x, 0, 4, (view) => { delivered = new Float32Array(view.slice().buffer)[0]; });
  assert.equal(gpu.poll(), false);  // not even submitted yet
  gpu.flush();
  while (!gpu.poll()) await new Promise((resolve) => setTimeout(resolve, 1));
  assert.equal(delivered, 7);
  gpu.release(x);
});

test('a WGSL error names the kernel and the line', async () => {
  gpu.createKernel('@compute @workgroup_size(1) fn broken() { let x: f32 = undefined_name; }', 'broken', []);
  await assert.rejects(gpu.settled(), /kernel 'broken': .*1:\d+: .*undefined_name/);
  // A label (the launch list's kernel name) names it instead of its entry point.
  gpu.createKernel('@compute @workgroup_size(1) fn main() { let x: f32 = undefined_name; }', 'main', [], 0, 'conv_3');
  await assert.rejects(gpu.settled(), /kernel 'conv_3': .*undefined_name/);
  // A run of a kernel that failed to compile is refused, naming it.
  const broken = gpu.createKernel('@compute @workgroup_size(1) fn main() { let x: f32 = undefined_name; }', 'main', [], 0, 'conv_4');
  await assert.rejects(gpu.settled(), /kernel 'conv_4'/);
  const program = gpu.createProgram([{ kernel: broken, bindings: [], dispatch: [1, 1, 1] }]);
  assert.throws(() => gpu.runProgram(program), /kernel 'conv_4' did not compile/);
});

test('bad handles and ranges are refused with what was wrong', () => {
  const x = gpu.createBuffer(16);
  assert.throws(() => gpu.writeBuffer(x, 8, floats([1, 2, 3])), /bytes \[8, 20\) lie outside a buffer of 16/);
  assert.throws(() => gpu.copyBuffer(x, 2, x, 8, 4), /offset 2 is not a multiple of 4/);
  gpu.release(x);
  assert.throws(() => gpu.readBuffer(x, 0, 4, () => {}), /is not a live handle/);
  assert.throws(() => gpu.runProgram(12345), /is not a live handle/);
});

test('an adapter below the artifact\'s limits is refused, naming the limit', async () => {
  const offered = gpu.adapter.limits.maxStorageBufferBindingSize;
  assert.equal(missingCapability(gpu.adapter, { maxStorageBufferBindingSize: offered }), null);
  assert.match(missingCapability(gpu.adapter, { maxStorageBufferBindingSize: offered * 2 }),
               new RegExp(`limit maxStorageBufferBindingSize: the artifact needs ${offered * 2}, the adapter offers ${offered}`));
  assert.match(missingCapability(gpu.adapter, { minStorageBufferOffsetAlignment: 1 }), /minStorageBufferOffsetAlignment/);
  assert.match(missingCapability(gpu.adapter, {}, ['no-such-feature']), /lacks feature 'no-such-feature'/);
  await assert.rejects(GpuBridge.create(await nodeGpu(), { requiredLimits: { maxComputeWorkgroupsPerDimension: 1e9 } }),
                       /^Error: webgpu: .*limit maxComputeWorkgroupsPerDimension: the artifact needs 1000000000/);
});

test('no adapter, or no WebGPU at all, is one clear error', async () => {
  await assert.rejects(GpuBridge.create({ requestAdapter: async () => null }), /webgpu: no GPU adapter was found/);
  await assert.rejects(GpuBridge.create(undefined), /webgpu: this environment has no WebGPU/);
});

test('storage bytes held are counted, and their peak kept for benchmarks', async () => {
  const before = gpu.liveBytes, peakBefore = gpu.peakBytes;
  const a = gpu.createBuffer(1000), b = gpu.createBuffer(6);  // sizes rounded up to 4 bytes
  assert.equal(gpu.liveBytes, before + 1008);
  assert.equal(gpu.peakBytes, Math.max(peakBefore, before + 1008));
  gpu.release(a);
  await gpu.settled();
  assert.equal(gpu.liveBytes, before + 8);
  gpu.release(b);
  await gpu.settled();
  assert.equal(gpu.liveBytes, before);
  assert.ok(gpu.peakBytes >= before + 1008);
});

test('a timed run delivers each launch\'s GPU seconds and the same results', async () => {
  // SwiftShader and GPUs offer 'timestamp-query'; a device must ask for it to time launches.
  const timed = await GpuBridge.create(await nodeGpu(), { requiredFeatures: ['timestamp-query'] });
  try {
    assert.equal(gpu.canTime(), false, 'a device made without the feature cannot time');
    assert.equal(timed.canTime(), true);
    const n = 64;
    const a = timed.createBuffer(n * 4), b = timed.createBuffer(n * 4), out = timed.createBuffer(n * 4);
    timed.writeBuffer(a, 0, floats(Array.from({ length: n }, (_, i) => i)));
    timed.writeBuffer(b, 0, floats(Array.from({ length: n }, () => 1)));
    const kernel = timed.createKernel(kAxpy, 'axpy', ['read', 'read', 'write'], 8);
    await timed.settled();
    const binding = (buffer) => ({ buffer, offset: 0, bytes: n * 4 });
    const launch = (scale) => ({ kernel, bindings: [binding(a), binding(b), binding(out)], uniforms: uniforms(n, scale),
                                 dispatch: [1, 1, 1] });
    const program = timed.createProgram([launch(2), launch(3)]);
    let seconds = null;
    timed.runProgram(program, (values) => { seconds = values; });
    let result;
    timed.readBuffer(out, 0, n * 4, (view) => { result = new Float32Array(view.slice().buffer); });
    await timed.settled();
    assert.equal(seconds.length, 2);
    for (const s of seconds) assert.ok(s >= 0 && s < 10, `launch seconds ${s}`);
    assert.deepEqual(Array.from(result), Array.from({ length: n }, (_, i) => Math.fround(i * 3 + 1)));
  } finally {
    timed.destroy();
  }
});

test('running out of GPU memory is named so; other uncaptured errors are GPU errors', () => {
  class GPUOutOfMemoryError { constructor(message) { this.message = message; } }
  class GPUValidationError { constructor(message) { this.message = message; } }
  assert.equal(gpuErrorMessage(new GPUOutOfMemoryError('allocation of 4 GiB failed')),
               'the GPU is out of memory: allocation of 4 GiB failed');
  assert.equal(gpuErrorMessage(new GPUValidationError('bad binding')), 'GPU error: bad binding');
});

// chooseTier on adapters described by hand: the manifest's tiers from the base up.
test('chooseTier takes the best tier the adapter runs, or the one asked for, naming what is missing', () => {
  const sgmat = { features: ['shader-f16', 'subgroups', 'chromium-experimental-subgroup-matrix'], limits: {},
                  subgroup_size: 32,
                  subgroup_matrix: { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 } };
  const manifest = { sections: { device_requirements: { features: [], limits: { maxBufferSize: 1000 } },
                                 tiers: [{ name: 'f32' }, { name: 'subgroup-matrix', device_requirements: sgmat }] } };
  const adapter = (features, info = {}) => ({ features: new Set(features), limits: { maxBufferSize: 4096 }, info });
  const tensorCores = adapter(sgmat.features, { subgroupMinSize: 32, subgroupMaxSize: 32,
    subgroupMatrixConfigs: [{ componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 }] });
  assert.equal(chooseTier(manifest, tensorCores).name, 'subgroup-matrix');
  assert.deepEqual(chooseTier(manifest, tensorCores).requiredFeatures, sgmat.features);
  assert.equal(chooseTier(manifest, tensorCores, 'f32').name, 'f32');
  assert.deepEqual(chooseTier(manifest, tensorCores, 'f32').requiredLimits, { maxBufferSize: 1000 });
  // SwiftShader: subgroups of 4, no f16: the base.
  const swiftShader = adapter(['subgroups'], { subgroupMinSize: 4, subgroupMaxSize: 4 });
  assert.equal(chooseTier(manifest, swiftShader).name, 'f32');
  assert.throws(() => chooseTier(manifest, swiftShader, 'subgroup-matrix'), /cannot run tier 'subgroup-matrix'.*lacks feature 'shader-f16'/);
  // Features without the fragment shape the kernels use.
  const otherShape = adapter(sgmat.features, { subgroupMinSize: 32, subgroupMaxSize: 32,
    subgroupMatrixConfigs: [{ componentType: 'f16', resultComponentType: 'f16', M: 8, N: 8, K: 8 }] });
  assert.equal(chooseTier(manifest, otherShape).name, 'f32');
  assert.throws(() => chooseTier(manifest, otherShape, 'subgroup-matrix'), /no f16 -> f32 16x16x16 subgroup matrices/);
  const varying = adapter(sgmat.features, { subgroupMinSize: 16, subgroupMaxSize: 32 });
  assert.throws(() => chooseTier(manifest, varying, 'subgroup-matrix'), /not all 32 wide \(16 to 32\)/);
  assert.throws(() => chooseTier(manifest, tensorCores, 'f16'), /no tier 'f16' \(it holds f32, subgroup-matrix\)/);
  // A tier that runs only when asked for.
  const optIn = { sections: { ...manifest.sections, tiers: [{ name: 'f32' }, { name: 'subgroup-matrix', automatic: false,
    device_requirements: sgmat }] } };
  assert.equal(chooseTier(optIn, tensorCores).name, 'f32');
  assert.equal(chooseTier(optIn, tensorCores, 'subgroup-matrix').name, 'subgroup-matrix');
  // An artifact from before tiers: its one lowering, under its device_requirements.
  const old = { sections: { device_requirements: { features: [], limits: { maxBufferSize: 10 } } } };
  assert.deepEqual(chooseTier(old, swiftShader), { name: '', requiredLimits: { maxBufferSize: 10 }, requiredFeatures: [] });
});
