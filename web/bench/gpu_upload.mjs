// Times handing weights to the GPU under Node (Dawn), by the ways WebGPU offers, in one process,
// alternating: how the first image's wait for 1.9 GiB of SD 1.5 weights could shrink.
//   write        queue.writeBuffer per weight into its own storage buffer, an empty submit every
//                64 MiB (the bridge's way: web/bridge/websd_gpu.mjs writeBuffer)
//   mapped       createBuffer({ mappedAtCreation: true }) per weight, copied into, unmapped
//   staging      a ring of MAP_WRITE staging buffers, reused: mapAsync, copy in, unmap,
//                copyBufferToBuffer into the weight's buffer
// Weights are sized like SD 1.5's (a mix of 6.6, 13, 26 and 1.6 MiB, and small ones).
//
//   node bench/gpu_upload.mjs [--gib 2] [--reps 2] [--ring-mib 64] [--ring 4]
import { performance } from 'node:perf_hooks';

import { nodeGpu } from '../node/node_gpu.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const totalBytes = option('--gib', 2) * 2 ** 30;
const reps = option('--reps', 2);
const ringBytes = option('--ring-mib', 64) * 2 ** 20;
const ringCount = option('--ring', 4);

// Weight sizes cycling through an SD 1.5-like mix until the total is reached.
const kMix = [6.55e6, 13.1e6, 26.2e6, 1.64e6, 2560, 5120, 11.8e6, 6.55e6, 3.28e6];
const sizes = [];
for (let sum = 0, i = 0; sum < totalBytes; ++i) {
  const bytes = Math.min(Math.round(kMix[i % kMix.length] / 4) * 4, ringBytes);
  sizes.push(bytes);
  sum += bytes;
}
const source = new Uint8Array(Math.max(...sizes));
for (let i = 0; i < source.length; i += 4096) source[i] = i & 255;

const gpu = await nodeGpu();
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
const device = await adapter.requestDevice();
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;

async function write() {
  const buffers = [];
  let since = 0;
  for (const bytes of sizes) {
    const buffer = device.createBuffer({ size: bytes, usage });
    device.queue.writeBuffer(buffer, 0, source.buffer, 0, bytes);
    buffers.push(buffer);
    since += bytes;
    if (since >= 64 * 2 ** 20) { device.queue.submit([]); since = 0; }
  }
  return buffers;
}

async function mapped() {
  return sizes.map((bytes) => {
    const buffer = device.createBuffer({ size: bytes, usage, mappedAtCreation: true });
    new Uint8Array(buffer.getMappedRange()).set(source.subarray(0, bytes));
    buffer.unmap();
    return buffer;
  });
}

// Each staging buffer is filled with whole weights up to ringBytes, then copied out in one
// submit and mapped again for reuse; the next one fills meanwhile.
async function staging() {
  const ring = Array.from({ length: ringCount }, () => ({
    buffer: device.createBuffer({ size: ringBytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true }),
    ready: null,
  }));
  const buffers = [];
  let slot = 0, used = 0, copies = [];
  let view = new Uint8Array(ring[0].buffer.getMappedRange());
  const send = () => {
    const entry = ring[slot];
    entry.buffer.unmap();
    const encoder = device.createCommandEncoder();
    for (const { target, offset, bytes } of copies) encoder.copyBufferToBuffer(entry.buffer, offset, target, 0, bytes);
    device.queue.submit([encoder.finish()]);
    entry.ready = entry.buffer.mapAsync(GPUMapMode.WRITE);
    slot = (slot + 1) % ringCount;
    used = 0;
    copies = [];
  };
  for (const bytes of sizes) {
    if (used + bytes > ringBytes) {
      send();
      if (ring[slot].ready) await ring[slot].ready;
      view = new Uint8Array(ring[slot].buffer.getMappedRange());
    }
    const target = device.createBuffer({ size: bytes, usage });
    view.set(source.subarray(0, bytes), used);
    copies.push({ target, offset: used, bytes });
    buffers.push(target);
    used += bytes;
  }
  send();
  await device.queue.onSubmittedWorkDone();
  for (const entry of ring) { await entry.ready; entry.buffer.destroy(); }
  return buffers;
}

const ways = { write, mapped, staging };
const results = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
for (let rep = 0; rep < reps; ++rep) {
  for (const [name, way] of Object.entries(ways)) {
    const start = performance.now();
    const buffers = await way();
    const handed = performance.now();
    await device.queue.onSubmittedWorkDone();
    const done = performance.now();
    results[name].push({ handed_s: (handed - start) / 1000, done_s: (done - start) / 1000 });
    for (const buffer of buffers) buffer.destroy();
    await device.queue.onSubmittedWorkDone();
  }
}
const gib = sizes.reduce((a, b) => a + b, 0) / 2 ** 30;
console.log(`${sizes.length} weights, ${gib.toFixed(2)} GiB, on ${adapter.info?.description ?? adapter.info?.vendor ?? 'an adapter'}`);
for (const [name, runs] of Object.entries(results)) {
  const best = runs.reduce((a, b) => (a.done_s < b.done_s ? a : b));
  console.log(`${name.padEnd(8)} handed in ${best.handed_s.toFixed(3)} s, on the GPU in ${best.done_s.toFixed(3)} s ` +
              `(${(gib / best.done_s).toFixed(2)} GiB/s; runs: ${runs.map((r) => r.done_s.toFixed(2)).join(', ')})`);
}
console.log(`peak RSS ${(process.resourceUsage().maxRSS / 2 ** 20).toFixed(2)} GiB`);
process.exit(0);
