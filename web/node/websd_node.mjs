// The Node runner of a webgpu artifact: the WebAssembly runtime (runtime/websd_web.{js,wasm}) and
// the WebGPU bridge under Node with Dawn (npm `webgpu`). `websd generate|bench --artifact ART`
// starts it for a webgpu artifact; it can also run alone:
//
//   node websd_node.mjs generate ART REQUEST.json OUT_DIR   # images as OUT_DIR/image-<i>.rgb, their
//                                                           # latents as image-<i>.latents.f32
//   node websd_node.mjs bench ART REQUEST.json              # timings as one JSON line
//   node websd_node.mjs profile ART REQUEST.json            # per-kernel GPU times as one JSON line
//   node websd_node.mjs function ART REQUEST.json           # one function ({"function", "runs"}) on
//                                                           # sample inputs: a warm-up, then timed runs
//                                                           # with per-kernel GPU times
//   node websd_node.mjs network ART NAME INPUTS.safetensors TIMESTEP OUT.f32 [NAME INPUTS ...]
//                                            # networks alone (text, unet, vae_decode), for
//                                            # conformance: each output's float32 values in its OUT
//
// REQUEST is the run as the native CLI validated it (pipeline/generation_request_json.h), plus
// "init_image": {"rgb", "width", "height"} (img2img) or "init_latents": {"f32", "shape"}, naming
// raw files beside REQUEST.
// Standard output carries one JSON line per result ({"image": ...} or {"bench": ...}); progress
// and errors go to standard error, and a failure exits with status 1 and one line "websd: ...".
// Dawn toggles: WEBSD_DAWN_TOGGLES (see node_gpu.mjs). The wasm runtime never blocks: this loop
// awaits the GPU between its calls, as a page does.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { performance } from 'node:perf_hooks';

import { GpuBridge } from '../bridge/websd_gpu.mjs';
import { nodeGpu } from './node_gpu.mjs';
import { ShardPrefetch, readFully } from './shard_prefetch.mjs';

// websd_web.{js,wasm}: beside node/ in an artifact's runtime/ folder; in a source tree, where
// WEBSD_WEB_RUNTIME says (the WebAssembly build's src/web_runtime).
const runtimeDir = process.env.WEBSD_WEB_RUNTIME ?? new URL('..', import.meta.url).pathname;

// A bridge for the artifact's kernel tier (WEBSD_TIER, which `--tier` sets, or the best the adapter
// runs: chooseTier) with its device requirements, and 'timestamp-query' for a profile where the
// adapter has it. The tier in use goes to stderr, as `websd_open` takes it.
async function createBridge(artifact, timed = false) {
  const gpu = await nodeGpu();
  const manifest = JSON.parse(readFileSync(join(artifact, 'manifest.json'), 'utf8'));
  if (manifest.target !== 'webgpu') {
    throw new Error(`${artifact} is a '${manifest.target}' artifact, not a webgpu one`);
  }
  const requiredFeatures = [];
  if (timed) {
    const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (adapter?.features.has('timestamp-query')) requiredFeatures.push('timestamp-query');
  }
  const bridge = await GpuBridge.create(gpu, { manifest, tier: process.env.WEBSD_TIER ?? '', requiredFeatures });
  if (bridge.tier) process.stderr.write(`websd: kernel tier ${bridge.tier}\n`);
  return bridge;
}

// websd_open on the bridge's tier.
function open(module, bridge, redraw = 0) {
  call(module, 'websd_open', 'number', ['number', 'string'], [redraw, bridge.tier]);
}

// The artifact folder's files as the runtime reads them (src/web_runtime/web_host_library.js): by
// the relative paths its manifest lists, never outside the folder.
function folderFiles(artifact) {
  const root = resolve(artifact);
  const digests = new Map();  // path -> SHA-256 of its last readInto
  const inside = (path) => {
    const full = resolve(root, path);
    if (isAbsolute(path) || !full.startsWith(root + sep)) throw new Error(`${path}: not a path inside ${root}`);
    return full;
  };
  // Shards read and hashed ahead by worker threads while the runtime uploads the ones before.
  const prefetch = ShardPrefetch.start(root, inside);
  return {
    describe: root,
    size(path) {
      const full = inside(path);
      return existsSync(full) ? statSync(full).size : null;
    },
    read: (path) => readFileSync(inside(path)),
    // Straight into the runtime's memory: a 2 GB model read through read() would leave its
    // shards' Buffers to the garbage collector, which a synchronous upload loop gives no turn.
    // Hashed here as read, natively (OpenSSL: several times WebAssembly's speed), for digest().
    readInto(path, target) {
      const ahead = prefetch?.readInto(path, target);
      if (ahead) {
        digests.set(path, ahead.digest);
        return ahead.bytes;
      }
      const done = readFully(inside(path), target);
      digests.set(path, createHash('sha256').update(target.subarray(0, done)).digest());
      return done;
    },
    digest(path) {
      const digest = digests.get(path) ?? null;
      digests.delete(path);
      return digest;
    },
  };
}

async function loadRuntime(bridge, artifact) {
  const require = createRequire(import.meta.url);
  const createWebsd = require(join(runtimeDir, 'websd_web.js'));
  return createWebsd({
    websdGpu: bridge,
    websdFiles: folderFiles(artifact),
    wasmBinary: readFileSync(join(runtimeDir, 'websd_web.wasm')),
  });
}

// A staging call of the runtime: the pointer it returns, or its error.
function stage(module, name, types, args) {
  const pointer = module.ccall(name, 'number', types, args);
  if (pointer === 0) throw new Error(module.ccall('websd_error', 'string', [], []));
  return pointer;
}

// Calls `name` and throws the runtime's error when it reports one.
function call(module, name, returns, types = [], args = []) {
  const result = module.ccall(name, returns, types, args);
  if (result === -1) throw new Error(module.ccall('websd_error', 'string', [], []));
  return result;
}

// The profile's per-op times, or the runtime's error (a GPU error found while collecting them).
function profileOps(module) {
  const text = module.ccall('websd_profile_json', 'string', [], []);
  if (!text) throw new Error(module.ccall('websd_error', 'string', [], []));
  return JSON.parse(text);
}

async function settle(bridge) {
  await bridge.settled();
}

// Networks called alone, one after the other on one opened artifact (jobs: NAME INPUTS TIMESTEP
// OUT, repeated): {"network": {"name", "shape", "seconds"}} per job on stdout.
async function runNetworks(artifact, jobs) {
  const bridge = await createBridge(artifact);
  const module = await loadRuntime(bridge, artifact);
  open(module, bridge);
  await settle(bridge);
  for (let j = 0; j < jobs.length; j += 4) {
    const [name, inputs, timestep, out] = jobs.slice(j, j + 4);
    const start = performance.now();
    // Inputs and output pass through the module's in-memory file system.
    module.FS.writeFile('/inputs.safetensors', readFileSync(inputs));
    call(module, 'websd_network_submit', 'number', ['string', 'string', 'number'], [name, '/inputs.safetensors', Number(timestep)]);
    await settle(bridge);
    call(module, 'websd_network_finish', 'number', ['string'], ['/output.f32']);
    writeFileSync(out, module.FS.readFile('/output.f32'));
    const shape = JSON.parse(module.ccall('websd_network_shape', 'string', [], []));
    process.stdout.write(JSON.stringify({ network: { name, shape, seconds: (performance.now() - start) / 1000 } }) + '\n');
  }
  module.ccall('websd_close', null, [], []);
  bridge.destroy();
}

// One function on sample inputs: a warm-up run (weights uploaded), then `runs` runs timed from
// submit to the GPU's completion, each launch timed on the GPU where the adapter offers it.
async function runFunction(artifact, requestPath) {
  const { function: symbol, runs } = JSON.parse(readFileSync(requestPath, 'utf8'));
  const bridge = await createBridge(artifact, true);
  const module = await loadRuntime(bridge, artifact);
  open(module, bridge);
  await settle(bridge);
  const once = async () => {
    const start = performance.now();
    call(module, 'websd_function_submit', 'number', ['string'], [symbol]);
    await bridge.idle();  // the outputs stay on the GPU: nothing is read back to wait for
    call(module, 'websd_function_finish', 'number');
    return (performance.now() - start) / 1000;
  };
  process.stderr.write(`websd profile: ${symbol}: warm-up run\n`);
  const warmup = await once();
  const timed = bridge.canTime();
  if (timed) call(module, 'websd_profile_start', 'number');
  const seconds = [];
  for (let run = 0; run < runs; ++run) {
    seconds.push(await once());
    process.stderr.write(`websd profile: run ${run + 1}/${runs}\n`);
  }
  const ops = timed ? profileOps(module) : [];
  process.stdout.write(JSON.stringify({ function: { adapter: bridge.adapterName, timed, warmup_s: warmup, run_s: seconds, ops } }) + '\n');
  module.ccall('websd_close', null, [], []);
  bridge.destroy();
}

async function run(mode, artifact, requestPath, outDir) {
  const started = performance.now();
  // An init image or init latents travel as files beside the request (names relative to it).
  const { init_image: initImage, init_latents: initLatents, ...request } = JSON.parse(readFileSync(requestPath, 'utf8'));
  const beside = (name) => readFileSync(join(dirname(requestPath), name));
  const bridge = await createBridge(artifact, mode === 'profile');
  const bridged = performance.now();
  const module = await loadRuntime(bridge, artifact);
  const instantiated = performance.now();
  open(module, bridge, process.stderr.isTTY ? 1 : 0);
  // Pipelines compile in the background from here on: the weights upload meanwhile (below), and
  // each run waits for its own kernels only (the bridge holds it until they are made).
  const opened = performance.now();
  if (mode === 'profile') {
    if (!bridge.canTime()) throw new Error(`webgpu: ${bridge.adapterName} offers no 'timestamp-query': no profile`);
    call(module, 'websd_profile_start', 'number');
  }
  if (initImage) {
    const pointer = stage(module, 'websd_stage_init_image', ['number', 'number'], [initImage.width, initImage.height]);
    const bytes = beside(initImage.rgb);
    if (bytes.length !== initImage.width * initImage.height * 3) throw new Error(`webgpu: ${initImage.rgb} is not ${initImage.width}x${initImage.height} RGB`);
    module.HEAPU8.set(bytes, pointer);
  }
  if (initLatents) {
    const pointer = stage(module, 'websd_stage_init_latents', ['string'], [JSON.stringify(initLatents.shape)]);
    const bytes = beside(initLatents.f32);
    if (bytes.length !== initLatents.shape.reduce((a, b) => a * b, 4)) throw new Error(`webgpu: ${initLatents.f32} does not hold float32 ${JSON.stringify(initLatents.shape)}`);
    module.HEAPU8.set(bytes, pointer);
  }
  call(module, 'websd_begin', 'number', ['string'], [JSON.stringify(request)]);
  // The weights of every network the run calls, a part at a time through the bridge's upload
  // staging, which the GPU hands back between parts.
  const loadStart = performance.now();
  let loadWait = 0;
  while (call(module, 'websd_load', 'number') === 1) {
    const waitStart = performance.now();
    await bridge.uploadRoom();
    loadWait += performance.now() - waitStart;
  }
  const loaded = performance.now();
  const parts = { prepare: [], step: [], decode: [] };
  for (;;) {
    const partStart = performance.now();
    const state = call(module, 'websd_advance', 'number');
    if (state === 0) break;
    if (state === 1) {
      const part = module.ccall('websd_part', 'string', [], []);
      await bridge.drained();  // its results delivered; pipelines no run needed yet may still compile
      parts[part]?.push({ start: partStart, end: performance.now() });
      continue;
    }
    const image = JSON.parse(module.ccall('websd_image_json', 'string', [], []));
    if (mode === 'generate') {
      const pointer = module.ccall('websd_image_rgb', 'number', [], []);
      const bytes = module.ccall('websd_image_rgb_bytes', 'number', [], []);
      const file = join(outDir, `image-${image.index}.rgb`);
      writeFileSync(file, module.HEAPU8.subarray(pointer, pointer + bytes));
      const latents = join(outDir, `image-${image.index}.latents.f32`);
      const at = module.ccall('websd_image_latents', 'number', [], []);
      writeFileSync(latents, module.HEAPU8.subarray(at, at + image.latents_shape.reduce((a, b) => a * b, 4)));
      process.stdout.write(JSON.stringify({ image: { ...image, rgb: file, latents } }) + '\n');
    }
  }
  if (mode === 'profile') {
    const ops = profileOps(module);
    process.stdout.write(JSON.stringify({ profile: { adapter: bridge.adapterName, ops } }) + '\n');
  }
  if (mode === 'bench') {
    // Each part's time runs from its submit to the GPU's completion, as the page would see it.
    const seconds = (list) => list.map(({ start, end }) => (end - start) / 1000);
    process.stdout.write(JSON.stringify({ bench: {
      adapter: bridge.adapterName,
      tier: bridge.tier,
      open_s: (opened - started) / 1000,
      // open_s in parts: the GPU device, the WebAssembly module, websd_open (of which the bridge's
      // synchronous share of making kernels: WGSL parsed and checked on this thread).
      open: { device_s: (bridged - started) / 1000, runtime_s: (instantiated - bridged) / 1000,
              websd_open_s: (opened - instantiated) / 1000, kernel_calls_s: bridge.kernelCallSeconds },
      // load_s in parts: waiting for upload room (the GPU copying and handing slots back).
      load_wait_s: loadWait / 1000,
      load_s: (loaded - loadStart) / 1000,
      prepare_s: seconds(parts.prepare),
      step_s: seconds(parts.step),
      decode_s: seconds(parts.decode),
      peak_gpu_bytes: bridge.peakBytes ?? null,
      // The cold start's parts: the runtime's shard reads, checks and weight imports, and the wall
      // time while pipelines compiled (overlapping the rest).
      load: { ...JSON.parse(module.ccall('websd_load_json', 'string', [], []) ?? '{}'), pipelines_s: bridge.compileSeconds },
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    } }) + '\n');
  }
  module.ccall('websd_close', null, [], []);
  bridge.destroy();
}

const args = process.argv.slice(2);
const [mode, artifact, requestPath, outDir] = args;
const usable = mode === 'network' ? args.length >= 6 && (args.length - 2) % 4 === 0 : ['generate', 'bench', 'profile', 'function'].includes(mode) && artifact &&
    requestPath && (mode !== 'generate' || outDir);
if (!usable) {
  process.stderr.write('usage: node websd_node.mjs generate ART REQUEST.json OUT_DIR | bench|profile|function ART REQUEST.json |\n' +
                       '       network ART NAME INPUTS.safetensors TIMESTEP OUT.f32 [NAME INPUTS TIMESTEP OUT ...]\n');
  process.exit(2);
}
try {
  if (mode === 'network') await runNetworks(artifact, args.slice(2));
  else if (mode === 'function') await runFunction(artifact, requestPath);
  else await run(mode, artifact, requestPath, outDir);
  process.exit(0);
} catch (error) {
  process.stderr.write(`websd: ${error.message.replace(/^webgpu: /, 'webgpu: ')}\n`);
  process.exit(1);
}
