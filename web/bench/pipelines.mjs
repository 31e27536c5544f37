// Times creating a webgpu artifact's compute pipelines for one kernel tier under Node (Dawn), as
// the bridge does (explicit layouts, createComputePipelineAsync): the cold start's other wait.
//   serial       one at a time, each awaited (shows what one pipeline costs and the slowest ones)
//   concurrent   all asked for at once, in the order the functions need them (shows whether Dawn
//                compiles them in parallel, and when each function's last pipeline is ready)
// Run each mode in its own process: the GPU driver caches compiled pipelines on disk (NVIDIA:
// __GL_SHADER_DISK_CACHE_PATH), so a second run measures a warm cache.
//
//   node bench/pipelines.mjs ARTIFACT [--tier NAME] [--mode serial|concurrent]
//                            [--functions clip,unet_cfg,vae_decode,...]   (default: every function)
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

import { GpuBridge } from '../bridge/websd_gpu.mjs';
import { nodeGpu } from '../node/node_gpu.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const root = resolve(args[0] ?? '.');
const mode = option('--mode', 'concurrent');
const t0 = performance.now();
const since = () => (performance.now() - t0) / 1000;

const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));
const gpu = await nodeGpu();
const bridge = await GpuBridge.create(gpu, { manifest, tier: option('--tier', '') });
const device = bridge.device;
const deviceReady = since();
const lists = bridge.tier && manifest.sections.tier_launch_lists?.[bridge.tier]
  ? manifest.sections.tier_launch_lists[bridge.tier] : manifest.sections.launch_lists;
const functions = option('--functions', '') ? option('--functions', '').split(',') : Object.keys(lists);

// Unique kernels in the order the functions first use them, as the runtime keys them.
const kernels = new Map();
for (const fn of functions) {
  if (!lists[fn]) throw new Error(`no function '${fn}' in tier '${bridge.tier}' (it has ${Object.keys(lists).join(', ')})`);
  for (const k of lists[fn].kernels) {
    const key = `${k.file}\n${k.entry}\n${k.bindings.length}\n${k.uniform_bytes}`;
    if (!kernels.has(key)) kernels.set(key, { ...k, functions: new Set() });
    kernels.get(key).functions.add(fn);
  }
}
const sources = new Map();
const read = (file) => sources.get(file) ?? sources.set(file, readFileSync(join(root, file), 'utf8')).get(file);
for (const k of kernels.values()) read(k.file);
const filesRead = since();

function create(k) {
  const entries = k.bindings.map((_, binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }));
  if (k.uniform_bytes > 0) entries.push({ binding: k.bindings.length, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } });
  const layout = device.createPipelineLayout({ bindGroupLayouts: [device.createBindGroupLayout({ entries })] });
  const module = device.createShaderModule({ code: read(k.file), label: k.name });
  return device.createComputePipelineAsync({ layout, compute: { module, entryPoint: k.entry } });
}

const start = performance.now();
const times = [];
const readyAt = new Map();  // function -> seconds until its last kernel was ready
if (mode === 'serial') {
  for (const k of kernels.values()) {
    const t = performance.now();
    await create(k);
    times.push({ name: k.name, s: (performance.now() - t) / 1000 });
  }
} else {
  await Promise.all([...kernels.values()].map((k) => create(k).then(() => {
    const at = (performance.now() - start) / 1000;
    for (const fn of k.functions) readyAt.set(fn, Math.max(readyAt.get(fn) ?? 0, at));
  })));
}
const wall = (performance.now() - start) / 1000;
console.log(`tier ${bridge.tier || '(one lowering)'} on ${bridge.adapterName}: ${kernels.size} pipelines ` +
            `(${sources.size} files, ${([...sources.values()].reduce((a, s) => a + s.length, 0) / 1024).toFixed(0)} KiB of WGSL) ` +
            `for ${functions.join(', ')}`);
console.log(`device ready ${deviceReady.toFixed(3)} s after start, kernel files read by ${filesRead.toFixed(3)} s`);
console.log(`${mode}: ${wall.toFixed(3)} s for all (${(1000 * wall / kernels.size).toFixed(1)} ms a pipeline)`);
if (mode === 'serial') {
  times.sort((a, b) => b.s - a.s);
  console.log(`slowest: ${times.slice(0, 8).map((t) => `${t.name} ${(1000 * t.s).toFixed(0)} ms`).join(', ')}`);
} else {
  console.log(`each function's last pipeline ready at: ${[...readyAt].map(([fn, s]) => `${fn} ${s.toFixed(2)} s`).join(', ')}`);
}
bridge.destroy();
process.exit(0);
