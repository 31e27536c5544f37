// Issue 35's first question for the subgroup-matrix tier: which way of feeding WebGPU's subgroup
// matrices (tensor cores on NVIDIA) beats the probe's direct loads (73.8 TFLOP/s on an H200, 4x4
// tiles of 16x16 per subgroup, one subgroup per workgroup). Times an f16 x f16 -> f32 matmul C = A B
// (row-major, N x N) for each variant and prints one line each, checking a few outputs against
// the CPU so a fast wrong kernel cannot win.
//   variants: direct loads with RxC tiles per subgroup (one subgroup per workgroup, offsets from
//   workgroup_id), the same with K unrolled twice, and W subgroups per workgroup (offsets from
//   @builtin(subgroup_id)) sharing A rows or B columns through L1/L2.
//   usage (on the GPU machine, after `source CARRY/env.sh`): node bench/webgpu/sgmm_variants.mjs
//   N=4096 REPS=20; VARIANTS=name,name to run some.
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const webgpu = require(process.env.WEBGPU_MODULE || 'webgpu');
Object.assign(globalThis, webgpu.globals);
const gpu = webgpu.create(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia']);
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
const configs = adapter.info.subgroupMatrixConfigs || [];
const pick = configs.find((c) => c.componentType === 'f16' && c.resultComponentType === 'f32');
console.log(`adapter ${adapter.info.vendor} ${adapter.info.device} ${adapter.info.description}`);
if (!pick) {
  console.log('no f16 -> f32 subgroup-matrix configuration: nothing to time');
  process.exit(0);
}
const device = await adapter.requestDevice({
  requiredFeatures: ['shader-f16', 'subgroups', 'chromium-experimental-subgroup-matrix'],
  requiredLimits: { maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30 },
});
let gpuError = null;
device.addEventListener?.('uncapturederror', (e) => (gpuError = e.error?.message.split('\n')[0]));
const N = +(process.env.N || 4096), REPS = +(process.env.REPS || 20);
const { M, N: TN, K } = pick;

// One kernel: each subgroup computes R x C result tiles (R*M rows, C*TN columns); W subgroups per
// workgroup laid out `wr` down by `wc` across; K unrolled `unroll` times.
function kernel({ R, C, W = 1, wr = 1, unroll = 1 }) {
  const L = `subgroup_matrix_left<f16, ${K}, ${M}>`, Rt = `subgroup_matrix_right<f16, ${TN}, ${K}>`;
  const load = (T, p, off) => `subgroupMatrixLoad<${T}, row_major>(${p}, ${off}, N)`;
  const wc = W / wr;
  let s = `enable f16;\nenable chromium_experimental_subgroup_matrix;\n`;
  s += `@group(0) @binding(0) var<storage, read> A: array<f16>;
@group(0) @binding(1) var<storage, read> B: array<f16>;
@group(0) @binding(2) var<storage, read_write> Cm: array<f32>;
const N = ${N}u;
@compute @workgroup_size(${32 * W})
fn main(@builtin(workgroup_id) wg: vec3u${W > 1 ? ', @builtin(subgroup_id) sg: u32' : ''}) {
  let sub = ${W > 1 ? 'sg' : '0u'};
  let row0 = (wg.y * ${wr}u + sub / ${wc}u) * ${R * M}u;
  let col0 = (wg.x * ${wc}u + sub % ${wc}u) * ${C * TN}u;\n`;
  for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) s += `  var acc${r}_${c} = subgroup_matrix_result<f32, ${TN}, ${M}>();\n`;
  s += `  for (var k0 = 0u; k0 < N; k0 += ${K * unroll}u) {\n`;
  for (let u = 0; u < unroll; u++) {
    const k = `k0 + ${u * K}u`;
    for (let r = 0; r < R; r++) s += `    let a${u}_${r} = ${load(L, '&A', `(row0 + ${r * M}u) * N + ${k}`)};\n`;
    for (let c = 0; c < C; c++) {
      s += `    let b${u}_${c} = ${load(Rt, '&B', `(${k}) * N + col0 + ${c * TN}u`)};\n`;
      for (let r = 0; r < R; r++) s += `    acc${r}_${c} = subgroupMatrixMultiplyAccumulate(a${u}_${r}, b${u}_${c}, acc${r}_${c});\n`;
    }
  }
  s += `  }\n`;
  for (let r = 0; r < R; r++)
    for (let c = 0; c < C; c++)
      s += `  subgroupMatrixStore<row_major>(&Cm, (row0 + ${r * M}u) * N + col0 + ${c * TN}u, acc${r}_${c}, N);\n`;
  return { code: s + '}\n', grid: [N / (C * TN * wc), N / (R * M * wr)] };
}

const variants = {
  'direct 4x4': { R: 4, C: 4 },
  'direct 2x4': { R: 2, C: 4 },
  'direct 4x2': { R: 4, C: 2 },
  'direct 4x8': { R: 4, C: 8 },
  'direct 8x4': { R: 8, C: 4 },
  'direct 4x4 unroll2': { R: 4, C: 4, unroll: 2 },
  'direct 2x4 unroll2': { R: 2, C: 4, unroll: 2 },
  '4 subgroups 2x2 of 4x4': { R: 4, C: 4, W: 4, wr: 2 },
  '4 subgroups 1x4 of 4x4': { R: 4, C: 4, W: 4, wr: 1 },
  '4 subgroups 2x2 of 2x4': { R: 2, C: 4, W: 4, wr: 2 },
  '8 subgroups 2x4 of 2x4': { R: 2, C: 4, W: 8, wr: 2 },
};
const chosen = process.env.VARIANTS ? process.env.VARIANTS.split(',') : Object.keys(variants);

// Operands: small integers in f16 (exact products and sums in f32 for this N).
const f16 = (x) => {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, x);
  const bits = view.getUint32(0), sign = (bits >>> 16) & 0x8000, exp = ((bits >>> 23) & 0xff) - 127 + 15;
  if (x === 0) return 0;
  return sign | (exp << 10) | ((bits >>> 13) & 0x3ff);
};
const aHost = new Uint16Array(N * N), bHost = new Uint16Array(N * N);
const aVal = (i, k) => ((i * 7 + k * 3) % 5) - 2, bVal = (k, j) => ((k * 5 + j * 11) % 3) - 1;
for (let i = 0; i < N; i++) for (let k = 0; k < N; k++) aHost[i * N + k] = f16(aVal(i, k));
for (let k = 0; k < N; k++) for (let j = 0; j < N; j++) bHost[k * N + j] = f16(bVal(k, j));
const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const a = device.createBuffer({ size: N * N * 2, usage }), b = device.createBuffer({ size: N * N * 2, usage });
const c = device.createBuffer({ size: N * N * 4, usage });
device.queue.writeBuffer(a, 0, aHost);
device.queue.writeBuffer(b, 0, bHost);
const readback = device.createBuffer({ size: N * N * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const samples = [[0, 0], [N - 1, N - 1], [123, 4000 % N], [N / 2 + 17, 31], [777 % N, N - 5]];
const expected = samples.map(([i, j]) => {
  let sum = 0;
  for (let k = 0; k < N; k++) sum += aVal(i, k) * bVal(k, j);
  return sum;
});

for (const name of chosen) {
  const { code, grid } = kernel(variants[name]);
  const module = device.createShaderModule({ code });
  const errors = (await module.getCompilationInfo()).messages.filter((m) => m.type === 'error');
  if (errors.length) {
    console.log(`${name}: does not compile: ${errors[0].message.split('\n')[0]}`);
    continue;
  }
  gpuError = null;
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [a, b, c].map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const run = async (reps) => {
    const encoder = device.createCommandEncoder();
    for (let r = 0; r < reps; r++) {
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(grid[0], grid[1]);
      pass.end();
    }
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  device.queue.writeBuffer(c, 0, new Float32Array(N * N));
  await run(1);
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(c, 0, readback, 0, N * N * 4);
  device.queue.submit([encoder.finish()]);
  await readback.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(readback.getMappedRange().slice(0));
  readback.unmap();
  const wrong = samples.filter(([i, j], s) => out[i * N + j] !== expected[s]).length;
  await run(2);
  const t0 = performance.now();
  await run(REPS);
  const ms = (performance.now() - t0) / REPS;
  console.log(`${name.padEnd(26)} ${ms.toFixed(3).padStart(8)} ms  ${(2 * N ** 3 / ms / 1e9).toFixed(1).padStart(6)} TFLOP/s` +
              `  ${wrong ? `WRONG (${wrong}/${samples.length} samples)` : 'correct'}${gpuError ? `  GPU error: ${gpuError}` : ''}`);
}
process.exit(0);
