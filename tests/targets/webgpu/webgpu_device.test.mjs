// WebGpuDevice (src/targets/webgpu/runtime) compiled to wasm, on a real GpuBridge under Node: Dawn
// from npm `webgpu`, on SwiftShader without a GPU. The probe module (webgpu_device_wasm_probe.cpp)
// runs runtime::Executor over hand-made launch lists; this test drives it in halves, awaiting the
// bridge between calls as the page does (wasm never blocks), and checks the numbers exactly.
//
//   WEBSD_WEBGPU_DEVICE_PROBE=build-wasm/wasm/webgpu_device_wasm_probe.js node --test tests/targets/webgpu/
// (ctest of the wasm build sets the variable; without it the build-wasm/ path above is used).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { GpuBridge } from '../../../web/bridge/websd_gpu.mjs';
import { nodeGpu } from '../../../web/node/node_gpu.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const probePath = process.env.WEBSD_WEBGPU_DEVICE_PROBE ?? resolve(root, 'build-wasm/wasm/webgpu_device_wasm_probe.js');
const createProbe = createRequire(import.meta.url)(probePath);

// What the probe's list computes (its kernels' numbers are exact in f32, fused or not).
const f = Math.fround;
const x = [0.5, -1, 1.5, 2, -2.5, 3, 0.25, -0.75];
const w = [1, -0.5, 0.125, 2, -3, 0.75, 1.5, -1.25];
const t1 = x.map((v, i) => f(f(v * 3) + w[i]));
const expected = [t1.map((v, i) => f(f(v * v) + x[i])), x.map((v, i) => f(f(v * -2) + w[i]))];

let bridge, probe;
const calls = { createKernel: 0, createProgram: 0, runProgram: 0 };

before(async () => {
  bridge = await GpuBridge.create(await nodeGpu());
  for (const name of Object.keys(calls)) {  // counted, to see what the device asks of the bridge
    const original = bridge[name].bind(bridge);
    bridge[name] = (...args) => {
      calls[name] += 1;
      return original(...args);
    };
  }
  probe = await createProbe({ websdGpu: bridge });
});

after(() => {
  probe?._probe_close();
  bridge?.destroy();
});

const errorText = () => probe.UTF8ToString(probe._probe_error());

function ok(result) {
  if (result < 0) assert.fail(errorText());
  return result;
}

// The websd::Error text of a call that must fail.
function failure(result) {
  assert.equal(result, -1, 'expected a websd::Error');
  return errorText();
}

function outputs() {
  return expected.map((values, o) => values.map((_, i) => probe._probe_output(o, i)));
}

test('the registry opens the webgpu device with the bridge\'s limits', () => {
  ok(probe._probe_open());
  const described = JSON.parse(probe.UTF8ToString(probe._probe_describe()));
  assert.equal(described.name, `webgpu (${bridge.adapterName})`);
  assert.equal(described.max_buffer_bytes, bridge.device.limits.maxBufferSize);
  assert.equal(described.max_binding_bytes, bridge.device.limits.maxStorageBufferBindingSize);
  assert.equal(described.offset_alignment, bridge.device.limits.minStorageBufferOffsetAlignment);
  // f16 values only where kernels may read them: an adapter's shader-f16.
  assert.deepEqual(described.value_dtypes, ['f32', 'i32', ...(bridge.device.features.has('shader-f16') ? ['f16'] : [])]);
  assert.equal(described.shader_f16, bridge.device.features.has('shader-f16'));
});

test('a launch list runs through the Executor in halves: input, f16 weight, arena values, two kernels', async () => {
  ok(probe._probe_load(0));
  assert.equal(calls.createKernel, 2);  // one per kernel of the list, not per launch
  // Submitted at once, while the kernels compile in the background: the bridge queues the run.
  ok(probe._probe_run());
  assert.match(failure(probe._probe_wait()), /^\[webgpu\] webgpu \(.*\): work is still pending .* await the bridge's settled\(\)/);
  await bridge.settled();
  ok(probe._probe_wait());
  assert.deepEqual(outputs(), expected);

  // Submitted again: the same numbers, through the program made at the first bind.
  const runs = calls.runProgram;
  ok(probe._probe_run());
  assert.equal(calls.runProgram, runs + 1);  // one runProgram per submit, not one per launch
  await bridge.settled();
  ok(probe._probe_wait());
  assert.deepEqual(outputs(), expected);
  assert.equal(calls.createProgram, 1);
});

test('poll() alone drives the device to completion, and reads land after wasm memory grew', async () => {
  ok(probe._probe_run());
  const before = probe.HEAPU8.buffer.byteLength;
  ok(probe._probe_grow_memory(64));  // the pending reads must write through the new heap, not the old
  assert.ok(probe.HEAPU8.buffer.byteLength > before);
  while (ok(probe._probe_poll()) === 0) await new Promise((done) => setTimeout(done, 1));
  ok(probe._probe_wait());
  assert.deepEqual(outputs(), expected);
});

// poll() waits for reads and for the runs queued behind compilations, not for kernels no run
// needs yet: the error surfaces at the first poll once the compilation has failed.
test('a WGSL compile error surfaces at poll as websd::Error naming the kernel and the line', async () => {
  ok(probe._probe_load(1));
  while (bridge.compiling > 0) await new Promise((done) => setTimeout(done, 1));
  assert.match(failure(probe._probe_poll()), /^\[webgpu\] .*kernel 'square_add': 6:\d+: .*undefined_name/);
});

test('a dispatch beyond the adapter\'s workgroups per dimension is refused at load, naming the limit', () => {
  // Checked from the device's limits before any pipeline is made (runtime::check_fits_device),
  // rather than left to a GPU validation error of the whole command buffer.
  assert.match(failure(probe._probe_load(4)),
               /^\[artifact\] probe on webgpu .*: launch 2 dispatches 70000 workgroups in one dimension; this device allows 65535 \(maxComputeWorkgroupsPerDimension\)/);
});

test('a weight held in f16 is refused at load where the adapter lacks shader-f16', () => {
  if (bridge.device.features.has('shader-f16')) {
    ok(probe._probe_load(5));  // held as f16 (these kernels would read it wrongly: the load is the point)
  } else {
    assert.match(failure(probe._probe_load(5)), /^\[artifact\] probe on webgpu .*: value 1 is f16; this device stores only f32, i32 values/);
  }
});

test('a built-in kernel is refused at prepare, naming the function and the kernel', () => {
  assert.match(failure(probe._probe_load(2)),
               /^\[artifact\] probe: kernel 'square_add' is the built-in 'square_add'; the webgpu device has no built-in kernels/);
});

test('a launch binding overlapping bytes of one buffer twice is refused at bind, naming it', async () => {
  ok(probe._probe_load(3));
  await bridge.settled();
  assert.match(failure(probe._probe_run()),
               /^\[artifact\] probe: launch 1 \('square_add'\) binds value 2 \(slot 0\) and value 2 \(slot 1\) to overlapping bytes of one buffer/);
});

test('a module without a bridge refuses to open the device', async () => {
  const bare = await createProbe({});
  assert.equal(bare._probe_open(), -1);
  assert.match(bare.UTF8ToString(bare._probe_error()), /^\[webgpu\] no GpuBridge on the module/);
});
