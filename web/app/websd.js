// The page's one JavaScript entry point, for the button and for tests alike:
//
//   await window.websd.ready;                       // files loaded (cached), GPU opened, kernels compiled
//   const image = await window.websd.generate({ prompt, negativePrompt, scheduler, steps, guidance,
//     seed, width, height, initImage, strength, onProgress, previewCanvas, onPreview });
//   // -> { width, height, rgba: Uint8ClampedArray, png: Blob, parameters, seed, timings }
//   // previewCanvas (optional): drawn after every step with what the step predicts, mapped to
//   // colours on the GPU (latent_preview.js); onPreview({ step }) follows each drawing, and
//   // window.websd.readPreview() gives the last one's pixels and latents.
//   window.websd.cancel();                          // a running generate() rejects with kind 'cancelled'
//
// The artifact is the folder this page was served from. The WebAssembly runtime
// (runtime/websd_web.{js,wasm}) runs the pipeline; the GPU bridge (runtime/bridge/websd_gpu.mjs)
// owns the GPUDevice; artifact_files.js fetches, verifies and caches the files. Errors are
// WebsdError with a `kind` the page turns into a sentence: 'no-webgpu', 'adapter', 'limits',
// 'download', 'checksum', 'quota', 'manifest', 'device-lost', 'out-of-memory', 'request', 'cancelled'.

import { GpuBridge } from '../runtime/bridge/websd_gpu.mjs';
import { LoadError, loadArtifactFiles } from './artifact_files.js';
import { LatentPreview } from './latent_preview.js';
import { pngWithParameters } from './png_text.js';

export class WebsdError extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

function classify(error) {
  if (error instanceof WebsdError) return error;
  if (error instanceof LoadError) return new WebsdError(error.kind, error.message);
  const message = String(error?.message ?? error);
  if (/device was lost/i.test(message)) return new WebsdError('device-lost', message);
  if (/out of memory|OutOfMemory|cannot allocate/i.test(message)) return new WebsdError('out-of-memory', message);
  if (/no GPU adapter/i.test(message)) return new WebsdError('adapter', message);
  if (/limit|maxStorage|maxBuffer|feature/i.test(message) && /adapter|offers|needs/i.test(message)) {
    return new WebsdError('limits', message);
  }
  return new WebsdError('request', message);
}

// Loads the classic script that defines createWebsd (emscripten's MODULARIZE output); the browser
// refuses it unless its bytes have the SHA-256 `sha256hex` (Subresource Integrity).
function loadScript(url, sha256hex) {
  const base64 = btoa(String.fromCharCode(...sha256hex.match(/../g).map((byte) => parseInt(byte, 16))));
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = url;
    script.integrity = `sha256-${base64}`;
    script.onload = resolve;
    // The browser does not say which: a failed connection or bytes that fail the integrity check.
    script.onerror = () => reject(new WebsdError('checksum',
      `${url} did not load: the connection failed or its bytes differ from the manifest's SHA-256`));
    document.head.append(script);
  });
}

// A decimal seed string: the given one, or a random 32-bit one as the CLI picks.
function seedText(seed) {
  if (seed === undefined || seed === null || seed === '') return String(crypto.getRandomValues(new Uint32Array(1))[0]);
  const text = String(seed).trim();
  if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) > 18446744073709551615n) {
    throw new WebsdError('request', `the seed '${text}' is not an integer from 0 to 18446744073709551615`);
  }
  return text;
}

// RGB bytes of `source` (a Blob, File, ImageBitmap or ImageData) drawn at width x height.
async function rgbOf(source, width, height) {
  const bitmap = source instanceof ImageData || source instanceof ImageBitmap ? source : await createImageBitmap(source);
  const w = width || bitmap.width;
  const h = height || bitmap.height;
  const canvas = new OffscreenCanvas(w, h);
  const context = canvas.getContext('2d');
  if (bitmap instanceof ImageData) context.putImageData(bitmap, 0, 0);
  else context.drawImage(bitmap, 0, 0, w, h);
  const rgba = context.getImageData(0, 0, w, h).data;
  const rgb = new Uint8Array(w * h * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
    rgb[j] = rgba[i];
    rgb[j + 1] = rgba[i + 1];
    rgb[j + 2] = rgba[i + 2];
  }
  return { rgb, width: w, height: h };
}

class WebsdPage extends EventTarget {
  // `tier`: the artifact's kernel tier to run (its manifest's `tiers`); empty: the best the adapter offers.
  constructor(base, { tier = '' } = {}) {
    super();
    this.base = base;
    this.requestedTier = tier;
    this.module = null;
    this.bridge = null;
    this.info = null;
    this.busy = false;
    this.cancelled = false;
    this.loadTimings = {};
    this.preview = null;  // { canvas, drawer: LatentPreview, latents, step } of the last preview drawn
    this.ready = this.load().catch((error) => {
      throw classify(error);
    });
  }

  progress(detail) {
    this.dispatchEvent(new CustomEvent('progress', { detail }));
  }

  call(name, returns = 'number', types = [], args = []) {
    const result = this.module.ccall(name, returns, types, args);
    if (result === -1 || (returns === 'string' && result === null) || (name.startsWith('websd_stage') && result === 0)) {
      throw classify(new Error(this.module.ccall('websd_error', 'string', [], [])));
    }
    return result;
  }

  async load() {
    const started = performance.now();
    if (!navigator.gpu) throw new WebsdError('no-webgpu', 'navigator.gpu is missing');
    const { files, digests, manifest, downloaded, resumed } = await loadArtifactFiles(this.base, (p) => this.progress({ stage: p.stage, ...p }));
    this.downloaded = downloaded;
    this.resumed = resumed;
    // The runtime's script before the GPU: a download that fails here can still be retried.
    if (!globalThis.createWebsd) {
      const script = (manifest.sections?.files ?? []).find(({ path }) => path === 'runtime/websd_web.js');
      if (!script?.sha256) throw new WebsdError('manifest', 'the manifest lists no runtime/websd_web.js with its SHA-256');
      await loadScript(new URL('runtime/websd_web.js', this.base).href, script.sha256);
    }
    const filesLoaded = performance.now();
    this.progress({ stage: 'gpu' });
    const listed = new Map((manifest.sections?.files ?? []).map(({ path, bytes }) => [path, bytes]));
    this.bridge = await GpuBridge.create(navigator.gpu, { manifest, tier: this.requestedTier });
    this.bridge.device.lost.then((info) => {
      this.lost = info;
    });
    const stderr = [];
    this.module = await globalThis.createWebsd({
      websdGpu: this.bridge,
      wasmBinary: files.get('runtime/websd_web.wasm'),
      websdFiles: {
        describe: this.base,
        // Listed files the page does not load (the Node runner's) exist with their listed sizes.
        size: (path) => files.get(path)?.length ?? listed.get(path) ?? null,
        read: (path) => {
          if (!files.has(path)) throw new Error(`${path} is not loaded by the page`);
          return files.get(path);
        },
        // Checked once, when the file entered the page's cache (artifact_files.js): the runtime
        // compares this with the index instead of hashing every shard again at each load.
        digest: (path) => digests.get(path) ?? null,
      },
      websdStderr: (text) => {
        stderr.push(text);
        if (text.endsWith('\n')) console.info(`websd: ${stderr.splice(0).join('').trimEnd()}`);
      },
    });
    this.progress({ stage: 'verifying' });
    // Seal, manifest and kernel files checked; the launch lists of the bridge's tier.
    this.call('websd_open', 'number', ['number', 'string'], [0, this.bridge.tier]);
    // The weights a default txt2img calls, a part at a time through the bridge's upload staging,
    // while the pipelines compile in the background: the first image then waits for neither.
    this.progress({ stage: 'weights' });
    while (this.call('websd_load', 'number') === 1) await this.bridge.uploadRoom();
    // Every pipeline compiled: reported as they finish.
    const kernels = () => this.progress({
      stage: 'kernels', done: this.bridge.kernelsCreated - this.bridge.compiling, total: this.bridge.kernelsCreated });
    kernels();
    const ticker = setInterval(kernels, 250);
    try {
      await this.bridge.settled();
    } finally {
      clearInterval(ticker);
    }
    this.info = JSON.parse(this.call('websd_info_json', 'string'));
    this.adapterName = this.bridge.adapterName;
    this.tier = `${this.bridge.tier || 'f32'} WGSL (${manifest.sections?.model?.storage_dtype ?? 'f32'} weights)`;
    this.loadTimings = { files_s: (filesLoaded - started) / 1000, total_s: (performance.now() - started) / 1000 };
    this.progress({ stage: 'ready' });
    return this.info;
  }

  // Draws the x0 of the step finished last (its shape: run.preview_shape) into `canvas`.
  drawPreview(canvas, run, onPreview) {
    const [, channels, height, width] = run.preview_shape;
    if (channels !== 4 || this.preview?.step === run.step) return;
    if (this.preview?.canvas !== canvas) {
      const old = this.preview;
      old?.drawn?.finally(() => old.drawer.destroy());
      if (old && !old.drawn) old.drawer.destroy();
      this.preview = { canvas, drawer: new LatentPreview(this.bridge.device, canvas) };
    }
    const pointer = this.call('websd_preview_latents');
    if (!pointer) return;
    const latents = new Float32Array(this.module.HEAPU8.buffer.slice(pointer, pointer + 4 * channels * height * width));
    const preview = this.preview;
    Object.assign(preview, { latents, step: run.step });
    // One after another: they share the drawer's buffers.
    preview.drawn = (preview.drawn ?? Promise.resolve()).then(() => preview.drawer.draw(latents, height, width)).then(
      () => onPreview({ step: run.step }), (error) => console.warn(`websd: the preview failed: ${error.message}`));
  }

  // The last preview: its step, the latents drawn and the RGBA the GPU made of them.
  readPreview() {
    if (!this.preview?.latents) return null;
    const { step, latents, drawer } = this.preview;
    return { step, latents, ...drawer.last };
  }

  // After a load that failed before the GPU was opened (a download broke off): loads again,
  // resuming that download; what was verified and cached is not fetched again. The new `ready`.
  retry() {
    if (this.module || this.bridge) return Promise.reject(new WebsdError('request', 'only a failed download can be retried; reload the page'));
    this.ready = this.load().catch((error) => {
      throw classify(error);
    });
    return this.ready;
  }

  cancel() {
    if (this.busy) this.cancelled = true;
  }

  // Unset steps, guidance and strength take the runtime's defaults (websd_info_json), as the CLI's.
  async generate({ prompt = '', negativePrompt = '', scheduler = '', steps, guidance, seed, width = 0,
                   height = 0, initImage = null, strength, onProgress = () => {}, previewCanvas = null,
                   onPreview = () => {} } = {}) {
    await this.ready;
    const defaults = this.info.defaults;
    steps ??= defaults.steps;
    guidance ??= defaults.guidance_scale;
    strength ??= defaults.strength;
    if (this.busy) throw new WebsdError('request', 'an image is being made already');
    this.busy = true;
    this.cancelled = false;
    if (this.preview) this.preview.step = null;
    const started = performance.now();
    const timings = { prepare_s: 0, steps_s: [], decode_s: 0 };
    try {
      const request = {
        prompt: String(prompt), negative_prompt: String(negativePrompt), steps: Number(steps),
        guidance_scale: Number(guidance), seed: seedText(seed), width: Number(width) || 0, height: Number(height) || 0,
        batch_count: 1, strength: initImage ? Number(strength) : 1, vae_tiling: 'auto', vae_tile_size: 512,
        scheduler: String(scheduler ?? ''), scheduler_config: null,
      };
      if (!Number.isInteger(request.steps) || request.steps < 1) throw new WebsdError('request', `steps must be a positive integer, not ${steps}`);
      if (initImage) {
        const { rgb, width: w, height: h } = await rgbOf(initImage, request.width, request.height);
        request.width = w;
        request.height = h;
        this.module.HEAPU8.set(rgb, this.call('websd_stage_init_image', 'number', ['number', 'number'], [w, h]));
      }
      this.call('websd_begin', 'number', ['string'], [JSON.stringify(request)]);
      let result = null;
      for (;;) {
        if (this.cancelled) throw new WebsdError('cancelled', 'stopped before the image was finished');
        const partStart = performance.now();
        const state = this.call('websd_advance');
        if (state === 0) break;
        if (state === 2) {
          result = JSON.parse(this.call('websd_image_json', 'string'));
          const pointer = this.call('websd_image_rgb');
          const rgb = this.module.HEAPU8.subarray(pointer, pointer + result.width * result.height * 3);
          const rgba = new Uint8ClampedArray(result.width * result.height * 4);
          for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
            rgba[i] = rgb[j];
            rgba[i + 1] = rgb[j + 1];
            rgba[i + 2] = rgb[j + 2];
            rgba[i + 3] = 255;
          }
          result.rgba = rgba;
          continue;
        }
        const part = this.call('websd_part', 'string');
        const run = JSON.parse(this.call('websd_progress_json', 'string'));
        // Not awaited: its read-back waits for the part just submitted, and the progress should not.
        if (previewCanvas && run.preview_shape) this.drawPreview(previewCanvas, run, onPreview);
        if (part === 'prepare') onProgress({ stage: initImage ? 'encoding the prompt and the image' : 'encoding the prompt' });
        if (part === 'decode') onProgress({ stage: 'decoding', step: run.steps, steps: run.steps });
        await this.bridge.settled();
        const seconds = (performance.now() - partStart) / 1000;
        if (part === 'prepare') timings.prepare_s += seconds;
        if (part === 'decode') timings.decode_s += seconds;
        if (part === 'step') {
          timings.steps_s.push(seconds);
          const perStep = timings.steps_s.reduce((a, b) => a + b, 0) / timings.steps_s.length;
          const done = timings.steps_s.length;
          onProgress({ stage: 'step', step: done, steps: run.steps, secondsPerStep: perStep, etaSeconds: perStep * (run.steps - done) });
        }
      }
      await this.preview?.drawn;
      timings.total_s = (performance.now() - started) / 1000;
      const png = await pngWithParameters(result.rgba, result.width, result.height, result.parameters);
      return { width: result.width, height: result.height, rgba: result.rgba, png, parameters: result.parameters,
               seed: result.seed, timings };
    } catch (error) {
      // Whatever a call on a lost device says, the loss is the story.
      if (this.lost) throw new WebsdError('device-lost', `the GPU device was lost: ${String(this.lost.message || this.lost.reason).replace(/\.$/, '')}`);
      throw classify(error);
    } finally {
      this.busy = false;
      this.cancelled = false;
    }
  }
}

// The artifact is the folder of this page.
// The page's address may name the tier: index.html?tier=f32.
window.websd = new WebsdPage(new URL('./', document.baseURI).href,
                             { tier: new URLSearchParams(location.search).get('tier') ?? '' });
