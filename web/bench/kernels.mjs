// Times the hot WGSL kernels at SD 1.5 512x512 sizes (UNet at 64x64 latents, batch 2 for guidance),
// exactly as the compiler will launch them (web/kernels/wgsl_templates.mjs), and prints ms and
// TFLOP/s (compute-bound) or GB/s (memory-bound) per kernel.
//
//   node bench/kernels.mjs [--small] [--tune] [--reps N] [--only SUBSTRING] [--set NAME=VALUE ...]
//
// --small: shapes of the same structure scaled down (runs on SwiftShader in seconds).
// --tune:  every constant variant listed for a case, not only the default (the first).
// --set:   override a constant in every case whose family has it (e.g. --set BKV=16).
// Timing: GPU timestamps around one compute pass of --reps runs when the adapter offers
// 'timestamp-query', and always wall time around settled() for --reps runs submitted
// together, after warm-up runs.
import { GpuBridge } from '../bridge/websd_gpu.mjs';
import { nodeGpu } from '../node/node_gpu.mjs';
import { FAMILIES, kSubgroupMatrixFeatures, prepare, toF16Bits } from '../kernels/wgsl_templates.mjs';

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const small = flag('--small');
const tune = flag('--tune');
const reps = Number(option('--reps', small ? 1 : 20));
const only = option('--only', '');
const sets = {};
args.forEach((arg, at) => {
  if (arg === '--set') {
    const [name, value] = args[at + 1].split('=');
    sets[name] = value === 'true' ? true : value === 'false' ? false : Number(value);
  }
});

// Scale: full SD 1.5 sizes, or the same structure scaled down.
const s = small ? { px: 16, c: 8, tok: 64, heads: 8 } : { px: 1, c: 1, tok: 1, heads: 1 };
const P = (n) => Math.max(1, Math.round(n / s.px));  // spatial
const C = (n) => Math.max(4, Math.round(n / s.c));   // channels
const T = (n) => Math.max(4, Math.round(n / s.tok)); // tokens

// Split-K (SPLIT_K splits of K, then a reduction launch) for outputs whose tiles cannot fill the
// GPU; the compiler picks the splits for about 528 workgroups (webgpu_lowering.cpp gemm_kernel).
const splits = [2, 4, 8, 14].map((k) => ({ SPLIT_K: k }));
const convTiles = [{}, { BM: 128, TM: 8 }, { BM: 128, BN: 128, TM: 8, TN: 8, BK: 8 }, { BM: 64, BN: 128, TM: 4, TN: 8 },
                   { BK: 8 }, ...splits, { BM: 128, TM: 8, SPLIT_K: 4 }, { BM: 32, SPLIT_K: 8 }];
const matmulTiles = convTiles;
// The subgroup-matrix tier's tiles (f16 -> f32 16x16x16 fragments; SGM x SGN subgroups of 32, each
// FM x FN fragments; B_DIRECT: the weight's fragments straight from storage).
const direct = { B_DIRECT: true };
const sgmatTiles = [{}, { ...direct }, { FM: 4, FN: 2, BM: 128, BN: 64, ...direct }, { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64, ...direct },
                    { SGM: 1, SGN: 2, FM: 4, FN: 4, BM: 64, BN: 128, ...direct }, { FM: 4, FN: 4, BM: 128, BN: 128, ...direct },
                    ...splits.map((split) => ({ ...split, ...direct })), { FM: 4, FN: 2, BM: 128, BN: 64, SPLIT_K: 4, ...direct },
                    { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64, SPLIT_K: 4, ...direct }];
// The same with f16 activations (_sgmat_a16: both operands' fragments straight from storage).
const a16Tiles = [{}, { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64 }, { SGM: 1, SGN: 2, FM: 4, FN: 4, BM: 64, BN: 128 },
                  { SGM: 2, SGN: 1, FM: 4, FN: 4, BM: 128, BN: 64 }, { SGM: 2, SGN: 2, FM: 4, FN: 4, BM: 128, BN: 128 },
                  { SGM: 2, SGN: 2, FM: 4, FN: 2, BM: 128, BN: 64 }, { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64, BK: 64 },
                  { SGM: 4, SGN: 2, FM: 2, FN: 2, BM: 128, BN: 64 },
                  { SGM: 1, SGN: 1, FM: 4, FN: 4, BM: 64, BN: 64, SPLIT_K: 2 }, { SPLIT_K: 4 }, { SPLIT_K: 8 }];
const tilesOf = (tier, plain) => (tier === '_sgmat' ? sgmatTiles : tier === '_sgmat_a16' ? a16Tiles : plain);
const conv = (hw, c, { tier = '', batch = 2, kernel = 3, o = c } = {}) => {
  const shape = { N: batch, H: P(hw), W: P(hw), C: C(c), O: C(o), KH: kernel, stride: 1, pad: kernel === 3 ? 1 : 0 };
  const M = shape.N * shape.H * shape.W;
  // The _a16 kernel reads the input zero-padded.
  const input = tier === '_sgmat_a16' ? shape.N * (shape.H + 2 * shape.pad) * (shape.W + 2 * shape.pad) * shape.C : M * shape.C;
  return { family: `conv2d_nhwc${tier}`, shape, variants: tilesOf(tier, convTiles),
           flops: 2 * M * shape.O * kernel * kernel * shape.C,
           inputs: { input, weight: shape.O * kernel * kernel * shape.C, bias: shape.O } };
};
const linear = (rows, k, n, tier = '') => {
  const shape = { M: T(rows), N: C(n), K: C(k) };
  return { family: `matmul${tier}`, shape, variants: tilesOf(tier, matmulTiles), constants: { HAS_BIAS: true },
           flops: 2 * shape.M * shape.N * shape.K, inputs: { x: shape.M * shape.K, w: shape.N * shape.K, bias: shape.N } };
};
// The GEMM cases of every tier (f32, _f16: f16 weights, _sgmat): SD 1.5's UNet at 512x512 (64x64 latents, batch 2) and its VAE decoder.
const gemmCases = (tier) => [
  { name: `conv3x3 320->320 @64x64 b2${tier}`, ...conv(64, 320, { tier }) },
  { name: `conv3x3 640->640 @32x32 b2${tier}`, ...conv(32, 640, { tier }) },
  { name: `conv3x3 1280->1280 @16x16 b2${tier}`, ...conv(16, 1280, { tier }) },
  { name: `conv3x3 1280->1280 @8x8 b2${tier}`, ...conv(8, 1280, { tier }) },
  { name: `conv3x3 2560->1280 @16x16 b2${tier}`, ...conv(16, 2560, { tier, o: 1280 }) },
  { name: `conv1x1 640->640 @32x32 b2${tier}`, ...conv(32, 640, { tier, kernel: 1 }) },
  { name: `vae conv3x3 512->512 @128x128${tier}`, ...conv(128, 512, { tier, batch: 1 }) },
  { name: `vae conv3x3 128->128 @512x512${tier}`, ...conv(512, 128, { tier, batch: 1 }) },
  { name: `linear 8192x320->1280${tier}`, ...linear(8192, 320, 1280, tier) },
  { name: `linear 8192x1280->320${tier}`, ...linear(8192, 1280, 320, tier) },
  { name: `linear GEGLU proj 8192x320->2560${tier}`, ...linear(8192, 320, 2560, tier) },
  { name: `linear ff out 512x5120->1280${tier}`, ...linear(512, 5120, 1280, tier) },
  { name: `linear GEGLU proj 512x1280->10240${tier}`, ...linear(512, 1280, 10240, tier) },
  { name: `linear time embedding 2x1280->1280${tier}`, ...linear(2, 1280, 1280, tier) },
];
const attention = (sq, skv, heads, d, tier = '') => {
  const shape = { B: 2, H: Math.max(1, heads / s.heads), Sq: T(sq), Skv: skv === 77 ? 77 : T(skv), D: d };
  const q = shape.B * shape.H * shape.Sq * d, kv = shape.B * shape.H * shape.Skv * d;
  const variants = tier ? [{}, { SGQ: 2 }, { SGQ: 1 }]
                 : d === 40 ? [{}, { BKV: 32 }, { BKV: 16 }, { BKV: 4 }, { BQ: 64 }, { TPR: 2, BKV: 8 }, { RPT: 2 }, { RPT: 2, BKV: 8 },
                              { RPT: 2, BQ: 256 }, { RPT: 4, BQ: 256, BKV: 8 }]
                 : d === 80 ? [{}, { TPR: 1, BKV: 16 }, { BQ: 32 }, { TPR: 4, BQ: 32 }, { RPT: 2 }, { TPR: 1, RPT: 2, BKV: 8 }]
                 : [{}, { TPR: 2, BKV: 4 }, { TPR: 8, BQ: 16 }];
  return { family: `attention${tier}`, shape, variants, flops: 2 * shape.B * shape.H * shape.Sq * shape.Skv * 2 * d,
           inputs: { q, k: kv, v: kv } };
};

const cases = [
  ...gemmCases(''),
  ...gemmCases('_f16'),
  ...gemmCases('_sgmat'),
  ...gemmCases('_sgmat_a16'),
  { name: 'attention self 4096 tok 8x40 b2', ...attention(4096, 4096, 8, 40) },
  { name: 'attention cross 4096x77 8x40 b2', ...attention(4096, 77, 8, 40) },
  { name: 'attention self 1024 tok 8x80 b2', ...attention(1024, 1024, 8, 80) },
  { name: 'attention self 256 tok 8x160 b2', ...attention(256, 256, 8, 160) },
  { name: 'attention self 4096 tok 8x40 b2_sgmat', ...attention(4096, 4096, 8, 40, '_sgmat') },
  { name: 'attention cross 4096x77 8x40 b2_sgmat', ...attention(4096, 77, 8, 40, '_sgmat') },
  (() => {
    const shape = { N: 2, H: P(64), W: P(64), C: C(320), G: small ? 8 : 32 };
    const n = shape.N * shape.H * shape.W * shape.C;
    return { name: 'group_norm 32 groups 64x64x320 b2 +SiLU', family: 'group_norm_nhwc', shape, constants: { SILU: true },
             bytes: 3 * 4 * n, inputs: { x: n, gamma: shape.C, beta: shape.C } };
  })(),
  (() => {
    const shape = { rows: T(8192), F: C(1280) };
    return { name: 'geglu 8192x2560->1280', family: 'geglu', shape, bytes: 4 * 3 * shape.rows * shape.F,
             inputs: { x: 2 * shape.rows * shape.F } };
  })(),
  (() => {
    const shape = { N: 2, H: P(64), W: P(64), C: C(320), pad: 1 };
    const n = shape.N * shape.H * shape.W * shape.C;
    return { name: 'pad_to_f16 64x64x320 b2 (_a16 operand)', family: 'pad_to_f16', shape, bytes: 6 * n, inputs: { x: n } };
  })(),
  (() => {
    const shape = { rows: T(8192), D: C(320) };
    return { name: 'layer_norm 8192x320', family: 'layer_norm', shape, bytes: 4 * 2 * shape.rows * shape.D,
             inputs: { x: shape.rows * shape.D, gamma: shape.D, beta: shape.D } };
  })(),
];

const webgpu = await nodeGpu();
const adapter = await webgpu.requestAdapter({ powerPreference: 'high-performance' });
const timestamps = adapter.features.has('timestamp-query');
const tiered = kSubgroupMatrixFeatures.every((f) => adapter.features.has(f));
const gpu = await GpuBridge.create(webgpu, { requiredFeatures: [...(timestamps ? ['timestamp-query'] : []),
                                                                ...(tiered ? kSubgroupMatrixFeatures : [])],
                                             requiredLimits: tiered ? FAMILIES.attention_sgmat.limits : {} });
console.log(`# ${gpu.adapterName}; ${small ? 'small' : 'full'} sizes; ${reps} reps; timing: ` +
            `${timestamps ? 'timestamp queries + ' : ''}wall time around settled()` +
            `${tiered ? '' : '; the subgroup-matrix cases are skipped: the adapter lacks ' +
                              kSubgroupMatrixFeatures.filter((f) => !adapter.features.has(f)).join(', ')}`);

function random(n, seed) {
  const out = new Float32Array(n);
  let a = seed >>> 0;
  for (let k = 0; k < n; k++) {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    out[k] = a / 4294967296 - 0.5;
  }
  return out;
}

async function measure(item, overrides) {
  const constants = { ...(item.constants ?? {}), ...overrides };
  const prepared = await prepare(item.family, item.shape, constants);
  const access = prepared.bindings.map(([, mode]) => (mode === 'read' ? 'read' : 'readwrite'));
  const kernels = new Map();
  for (const { entry } of prepared.launches) {
    if (!kernels.has(entry)) kernels.set(entry, gpu.createKernel(prepared.code, entry, access, prepared.uniforms.byteLength));
  }
  const made = [];
  const bindings = prepared.bindings.map(([name], index) => {
    const count = item.inputs[name] ?? (name === 'workspace' ? prepared.sizes.workspace : prepared.sizes[name]) ??
                  item.inputs[prepared.bindings[0][0]];  // an unused optional operand: any buffer of its size
    const f16 = prepared.f16Bindings.includes(name);
    const bytes = (f16 ? 2 : 4) * count;
    const buffer = gpu.createBuffer(bytes);
    made.push(buffer);
    if (item.inputs[name]) {
      const values = random(count, index + 1);
      gpu.writeBuffer(buffer, 0, f16 ? toF16Bits(values) : values);
    }
    return { buffer, offset: 0, bytes };
  });
  await gpu.settled();
  const program = gpu.createProgram(prepared.launches.map(({ entry, dispatch }) => ({
    kernel: kernels.get(entry), bindings, uniforms: prepared.uniforms, dispatch })));
  const out = bindings[prepared.bindings.findIndex(([, mode]) => mode !== 'read')];
  const finish = async () => {  // settled() waits for reads: read 4 bytes of the output
    gpu.readBuffer(out.buffer, 0, 4, () => {});
    await gpu.settled();
  };
  // Warm-up.
  for (let r = 0; r < (small ? 1 : 3); r++) gpu.runProgram(program);
  await finish();
  // Wall time: reps runs submitted together.
  const t0 = performance.now();
  for (let r = 0; r < reps; r++) gpu.runProgram(program);
  await finish();
  const wallMs = (performance.now() - t0) / reps;
  let gpuMs = null;
  if (timestamps) gpuMs = await timestamped(program);
  gpu.release(program);
  for (const buffer of made) gpu.release(buffer);
  return { wallMs, gpuMs, prepared };
}

// GPU time of one run: reps runs back to back in one compute pass (as a UNet step runs), between
// two timestamps, divided by reps (Dawn may quantize timestamps, to about 65 us on the H200).
async function timestamped(programHandle) {
  const device = gpu.device;
  const program = gpu.get(programHandle);
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 });
  const resolve = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const read = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } });
  for (let r = 0; r < reps; r++) {
    for (const step of program.steps) {
      pass.setPipeline(step.kernel.pipeline);
      pass.setBindGroup(0, step.bindGroup);
      pass.dispatchWorkgroups(...step.dispatch);
    }
  }
  pass.end();
  encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
  encoder.copyBufferToBuffer(resolve, 0, read, 0, 16);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const ticks = new BigUint64Array(read.getMappedRange().slice(0));
  read.unmap();
  for (const object of [querySet, resolve, read]) object.destroy();
  const ms = Number(ticks[1] - ticks[0]) / 1e6 / reps;
  return ms > 0 ? ms : null;  // a missing timestamp reads 0
}

const rate = (item, ms) => (item.flops ? `${(item.flops / ms / 1e9).toFixed(2)} TFLOP/s` : `${(item.bytes / ms / 1e6).toFixed(1)} GB/s`);
for (const item of cases) {
  if (only && !item.name.includes(only)) continue;
  if (FAMILIES[item.family].features && !tiered) continue;
  const variants = tune ? (item.variants ?? [{}]) : [{}];
  for (const variant of variants) {
    let result;
    try {
      const known = FAMILIES[item.family].constants(item.shape);
      result = await measure(item, { ...variant, ...Object.fromEntries(Object.entries(sets).filter(([n]) => n in known)) });
    } catch (error) {
      console.log(`${item.name} ${JSON.stringify(variant)}: ${error.message}`);
      continue;
    }
    const { wallMs, gpuMs, prepared } = result;
    const ms = gpuMs ?? wallMs;
    const tuned = Object.entries(prepared.constants).filter(([n]) => !/^(HAS_|ACTIVATION|SILU|CAUSAL|HEAD_DIM)/.test(n))
        .map(([n, v]) => `${n}=${v}`).join(' ');
    console.log(`${item.name.padEnd(42)} ${ms.toFixed(3).padStart(9)} ms  ${rate(item, ms).padStart(16)}` +
                `  (wall ${wallMs.toFixed(3)} ms${gpuMs ? `, gpu ${gpuMs.toFixed(3)} ms` : ''})  ${tuned}`);
  }
}
gpu.destroy();
process.exit(0);
