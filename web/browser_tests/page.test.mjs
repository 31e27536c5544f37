// The page in headless Chromium (SwiftShader's WebGPU), served by `websd serve` from a webgpu
// artifact of the fixture model at 64x64: window.websd.generate gives the native CLI's image for
// two schedulers and for img2img, the button gives the same, a live preview follows every step, a
// reload downloads no file again, an updated artifact only the files that changed (no shard), a
// download that broke off resumes, and a browser without WebGPU, a damaged download, a stop, a
// lost device, a full quota and an adapter below the artifact's limits each get their sentence. A
// plain static file server serves the page too. Screenshots land in WEBSD_SCREENSHOTS.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { loadedByThePage } from '../app/artifact_files.js';
import { browser, decodePng, fixtures, runWebsd, screenshots, serve, temp, worstLevels } from './harness.mjs';

const model = `${fixtures}/tiny-sd15/model`;
const work = temp('work');
const artifact = `${work}/tiny.webgpu`;
let server;
let context;
let page;

// `websd generate --model` with `args`; the decoded PNG and its bytes.
function native(name, args) {
  const out = `${work}/${name}.png`;
  runWebsd(['generate', '--model', model, '--width', '64', '--height', '64', '--out', out, '--force', ...args]);
  const bytes = readFileSync(out);
  return { ...decodePng(bytes), bytes };
}

function rgbOfRgba(rgba) {
  const rgb = new Uint8Array((rgba.length / 4) * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) rgb.set(rgba.slice(i, i + 3), j);
  return rgb;
}

// window.websd.generate in the page; the image's RGB bytes, PNG bytes and the rest.
async function pageGenerate(options, initPng = null) {
  const result = await page.evaluate(async ({ options, init }) => {
    if (init) options.initImage = new Blob([new Uint8Array(init)], { type: 'image/png' });
    const image = await window.websd.generate(options);
    return { ...image, rgba: [...image.rgba], png: [...new Uint8Array(await image.png.arrayBuffer())] };
  }, { options, init: initPng ? [...initPng] : null });
  return { ...result, rgb: rgbOfRgba(result.rgba), png: Uint8Array.from(result.png) };
}

before(async () => {
  runWebsd(['build', '--model', model, '--target', 'webgpu', '--size', '64x64', '--out', artifact]);
  server = await serve(['--artifact', artifact]);
  context = await browser();
  page = context.pages()[0] ?? await context.newPage();
  page.on('pageerror', (error) => console.log(`page error: ${error.message}`));
  await page.goto(server.url);
  await page.screenshot({ path: `${screenshots}/desktop-loading.png` });
  await page.evaluate(() => window.websd.ready);
});

after(async () => {
  await context?.close();
  assert.equal(await server?.stop(), 0);
});

test('generate() gives the native image for two schedulers, with the same parameters text', async () => {
  for (const [scheduler, steps] of [['euler', 1], ['euler_a', 2]]) {
    const options = { prompt: 'a red cube', negativePrompt: 'blurry', scheduler, steps, guidance: 7.5, seed: 7, width: 64, height: 64 };
    const fromPage = await pageGenerate(options);
    const expected = native(`txt2img-${scheduler}`, ['--prompt', 'a red cube', '--negative-prompt', 'blurry', '--scheduler',
                                                     scheduler, '--steps', String(steps), '--seed', '7']);
    assert.equal(fromPage.width, 64);
    assert.ok(worstLevels(fromPage.rgb, expected.rgb) <= 2, `${scheduler}: ${worstLevels(fromPage.rgb, expected.rgb)} levels`);
    assert.deepEqual(decodePng(fromPage.png).rgb, fromPage.rgb, 'the PNG holds the image');
    assert.ok(Buffer.from(fromPage.png).includes(Buffer.from(`parameters\0${fromPage.parameters}`, 'latin1')));
    assert.match(fromPage.parameters, new RegExp(`Steps: ${steps}, Sampler: .*Seed: 7, Size: 64x64`));
    console.log(`# ${scheduler}: ${worstLevels(fromPage.rgb, expected.rgb)} levels from the CLI; step ${fromPage.timings.steps_s[0].toFixed(2)} s`);
  }
});

test('img2img through generate() gives the native image', async () => {
  const init = native('init', ['--prompt', 'a blue ball', '--scheduler', 'euler', '--steps', '1', '--seed', '3']);
  const fromPage = await pageGenerate({ prompt: 'a green tree', scheduler: 'euler', steps: 2, strength: 0.5, seed: 9 }, init.bytes);
  writeFileSync(`${work}/init.png`, init.bytes);
  const expected = native('img2img', ['--prompt', 'a green tree', '--scheduler', 'euler', '--steps', '2', '--strength', '0.5',
                                      '--seed', '9', '--init-image', `${work}/init.png`]);
  assert.ok(worstLevels(fromPage.rgb, expected.rgb) <= 2, `${worstLevels(fromPage.rgb, expected.rgb)} levels`);
});

// The float32 tensor `name` of a safetensors file.
function safetensorsTensor(bytes, name) {
  const headerBytes = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerBytes).toString('utf8'));
  const [begin, end] = header[name].data_offsets;
  const data = bytes.subarray(8 + headerBytes + begin, 8 + headerBytes + end);
  return new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
}

test('a live preview after every step: the GPU maps what the step predicts to colours', async () => {
  const steps = 2;
  const seen = await page.evaluate(async (steps) => {
    const canvas = document.getElementById('preview');
    const drawn = [];
    await window.websd.generate({ prompt: 'a red cube', scheduler: 'euler', steps, seed: 11, width: 64, height: 64, previewCanvas: canvas,
                                  onPreview: ({ step }) => drawn.push(step) });
    const { step, latents, width, height, rgba } = await window.websd.readPreview();
    const { latentPreviewOnCpu } = await import('./app/latent_preview.js');
    return { drawn, step, width, height, latents: [...latents], rgba: [...rgba], cpu: [...latentPreviewOnCpu(latents, height, width)] };
  }, steps);
  assert.deepEqual(seen.drawn, [1, 2], 'one preview per step');
  assert.equal(seen.step, steps, 'the last preview is of the last step');
  assert.deepEqual([seen.width, seen.height], [8, 8], 'one preview pixel per latent pixel');
  let worst = 0;
  for (let i = 0; i < seen.rgba.length; ++i) worst = Math.max(worst, Math.abs(seen.rgba[i] - seen.cpu[i]));
  assert.ok(worst <= 1, `the GPU's preview is ${worst} levels from the same mapping on the CPU`);
  assert.ok(new Set(seen.rgba).size > 4, 'the preview is not flat');
  // Euler's last step lands on the x0 it predicts: the last preview shows the final latents.
  const out = `${work}/preview.png`;
  const saved = `${work}/preview-latents.safetensors`;
  runWebsd(['generate', '--model', model, '--width', '64', '--height', '64', '--prompt', 'a red cube', '--scheduler', 'euler',
            '--steps', String(steps), '--seed', '11', '--out', out, '--save-latents', saved, '--force']);
  const final = safetensorsTensor(readFileSync(saved), 'latents');
  let far = 0;
  for (let i = 0; i < final.length; ++i) far = Math.max(far, Math.abs(final[i] - seen.latents[i]));
  assert.ok(far < 2e-2, `the last preview's latents are ${far} from the CLI's final latents`);
  console.log(`# preview: ${seen.drawn.length} drawn, GPU vs CPU mapping ${worst} levels, last x0 vs CLI latents ${far.toExponential(2)}`);
});

test('the Generate button gives the same image, with progress, the gallery and timings', async () => {
  // The form starts from the runtime's defaults, the CLI's (generate --help: steps 20, strength 0.8).
  assert.equal(await page.inputValue('#steps'), '20');
  assert.equal(await page.inputValue('#guidance'), '7.5');
  assert.equal(await page.inputValue('#strength'), '0.8');
  await page.fill('#prompt', 'a red cube');
  await page.fill('#negative-prompt', 'blurry');
  await page.selectOption('#scheduler', 'euler');
  await page.fill('#steps', '1');
  await page.fill('#guidance', '7.5');
  await page.fill('#seed', '7');
  await page.click('#generate');
  await page.waitForFunction(() => document.querySelector('#progress').textContent.includes('decoding') ||
                                   document.querySelector('#progress').textContent === 'done');
  await page.screenshot({ path: `${screenshots}/desktop-during.png` });
  await page.waitForSelector('#output img', { timeout: 150000 });
  await page.waitForFunction(() => document.querySelector('#progress').textContent === 'done');
  await page.screenshot({ path: `${screenshots}/desktop-after.png` });
  const rgba = await page.evaluate(async () => {
    const img = document.querySelector('#output img');
    await img.decode();
    const bitmap = await createImageBitmap(img);
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    canvas.getContext('2d').drawImage(bitmap, 0, 0);
    return [...canvas.getContext('2d').getImageData(0, 0, bitmap.width, bitmap.height).data];
  });
  const expected = decodePng(readFileSync(`${work}/txt2img-euler.png`));
  assert.ok(worstLevels(rgbOfRgba(rgba), expected.rgb) <= 2);
  assert.ok((await page.locator('#gallery li').count()) >= 1);
  assert.match(await page.textContent('#timings'), /64x64, seed 7: .* s\/step/);
  assert.match(await page.textContent('#adapter'), /swiftshader/i);
  assert.match(await page.textContent('#tier'), /f32 WGSL/);
  // A gallery image restores the parameters it was made with.
  await page.fill('#seed', '999');
  await page.fill('#prompt', 'something else');
  await page.click('#gallery li:first-child button');
  assert.equal(await page.inputValue('#seed'), '7');
  assert.equal(await page.inputValue('#prompt'), 'a red cube');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${screenshots}/phone-after.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('a reload reads every file from the browser cache: nothing is downloaded again', async () => {
  const fetched = [];
  const listener = (request) => fetched.push(new URL(request.url()).pathname);
  page.on('request', listener);
  const started = Date.now();
  await page.reload();
  await page.evaluate(() => window.websd.ready);
  const seconds = (Date.now() - started) / 1000;
  page.off('request', listener);
  const again = fetched.filter((path) => path.includes('/weights/shard') || path.includes('/kernels/') || path.endsWith('.wasm'));
  assert.deepEqual(again, [], `downloaded again: ${again.join(', ')}`);
  assert.equal(await page.inputValue('#prompt'), 'a red cube', 'the settings are kept across the reload');
  assert.equal(await page.inputValue('#scheduler'), 'euler');
  console.log(`# cached reload ready in ${seconds.toFixed(1)} s; requests: ${fetched.length}`);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${screenshots}/phone-ready.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
});

test('Stop cancels between steps and says so', async () => {
  await page.fill('#steps', '4');
  await page.keyboard.press('Control+Enter');  // the shortcut starts it
  // The preview of step 1 shows while later steps run.
  await page.waitForSelector('#preview:not([hidden])', { timeout: 150000 });
  await page.screenshot({ path: `${screenshots}/desktop-during-preview.png` });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${screenshots}/phone-during.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.equal(await page.textContent('#generate'), 'Stop');
  await page.click('#generate');
  await page.waitForSelector('#message:not([hidden])', { timeout: 150000 });
  assert.match(await page.textContent('#message'), /Stopped/);
  assert.equal(await page.textContent('#generate'), 'Generate');
});

test('a damaged file is refused with a sentence and not kept', async () => {
  // websd serve never sends bytes that differ from their SHA-256 (it refuses such an artifact at
  // start: tests/serve), so the damage is done in flight, as a broken proxy or cache would.
  const damage = async (tab, path, at) => {
    await tab.route(`**/${path}*`, async (route) => {
      const response = await route.fetch();
      const body = Buffer.from(await response.body());
      body[at(body.length)] ^= 0x20;  // same size: only the SHA-256 check can catch it
      await route.fulfill({ response, body });
    });
  };
  const kernel = JSON.parse(readFileSync(`${artifact}/manifest.json`, 'utf8')).sections.files.find((f) => f.path.startsWith('kernels/'));
  const fresh = await browser();
  const tab = fresh.pages()[0] ?? await fresh.newPage();
  await damage(tab, kernel.path, () => 0);
  await tab.goto(server.url);
  await tab.waitForSelector('#message:not([hidden])', { timeout: 120000 });
  assert.match(await tab.textContent('#message'), /damaged or from another version/);
  await tab.screenshot({ path: `${screenshots}/desktop-damaged.png` });
  await fresh.close();
  // The runtime's script is loaded by the browser itself, under the manifest's SHA-256.
  const again = await browser();
  const second = again.pages()[0] ?? await again.newPage();
  await damage(second, 'runtime/websd_web.js', (length) => length - 2);
  await second.goto(server.url);
  await second.waitForSelector('#message:not([hidden])', { timeout: 120000 });
  assert.match(await second.textContent('#message'),
               /damaged or from another version .*runtime\/websd_web\.js did not load: .* differ from the manifest's SHA-256/);
  await second.screenshot({ path: `${screenshots}/desktop-damaged-script.png` });
  await again.close();
});

test('a download that broke off resumes where it stopped', async () => {
  const fresh = await browser();
  const tab = fresh.pages()[0] ?? await fresh.newPage();
  let cut = null;
  // The first weight shard arrives half-way, as when a connection drops.
  await tab.route('**/weights/shard*', async (route) => {
    const response = await route.fetch();
    const body = await response.body();
    cut = { url: route.request().url(), sent: Math.floor(body.length / 2), bytes: body.length };
    await route.fulfill({ status: 200, contentType: 'application/octet-stream', body: body.subarray(0, cut.sent) });
    await tab.unroute('**/weights/shard*');
  });
  await tab.goto(server.url);
  await tab.waitForSelector('#message:not([hidden])', { timeout: 120000 });
  assert.match(await tab.textContent('#message'), /A download failed \(downloading weights\/shard.* broke off after [\d.]+ MB of [\d.]+ MB\)/);
  await tab.screenshot({ path: `${screenshots}/desktop-download-failed.png` });
  const ranges = [];
  tab.on('request', (request) => {
    if (request.url() === cut.url) ranges.push(request.headers().range ?? 'none');
  });
  await tab.click('#message button');
  await tab.waitForFunction(() => document.querySelector('#progress').textContent.startsWith('ready'), null, { timeout: 120000 });
  assert.deepEqual(ranges, [`bytes=${cut.sent}-`], 'the rest of the shard, and only it, was asked for');
  assert.equal(await tab.evaluate(() => window.websd.resumed), 1);
  console.log(`# resumed ${cut.url.split('/').pop().split('?')[0]} at byte ${cut.sent} of ${cut.bytes}`);
  await fresh.close();
});

test('a lost GPU device and a full storage quota each get their sentence', async () => {
  const fresh = await browser();
  // Every cache write fails as when the site's storage quota is used up.
  await fresh.addInitScript(() => {
    Cache.prototype.put = () => Promise.reject(new DOMException('the quota has been exceeded', 'QuotaExceededError'));
  });
  const tab = fresh.pages()[0] ?? await fresh.newPage();
  await tab.goto(server.url);
  await tab.waitForSelector('#message:not([hidden])', { timeout: 120000 });
  assert.match(await tab.textContent('#message'), /no room left to keep the model \(keeping .*: the model needs [\d.]+ MB of storage\)\. Free space: clear this page's cache/);
  await tab.screenshot({ path: `${screenshots}/desktop-quota.png` });
  await fresh.close();

  const other = await browser();
  const second = other.pages()[0] ?? await other.newPage();
  await second.goto(server.url);
  await second.evaluate(() => window.websd.ready);
  await second.evaluate(() => window.websd.bridge.device.destroy());
  await second.fill('#steps', '1');
  await second.click('#generate');
  await second.waitForSelector('#message:not([hidden])', { timeout: 120000 });
  const text = await second.textContent('#message');
  assert.match(text, /The GPU ran out of memory or was reset \(the GPU device was lost/);
  assert.match(text, /Reload the model/);
  await second.screenshot({ path: `${screenshots}/desktop-device-lost.png` });
  await other.close();
});

test('without WebGPU the page says so', async () => {
  const plain = await browser({ webgpu: false });
  const tab = plain.pages()[0] ?? await plain.newPage();
  await tab.goto(server.url);
  await tab.waitForSelector('#message:not([hidden])', { timeout: 120000 });
  assert.match(await tab.textContent('#message'), /has no WebGPU/);
  await tab.screenshot({ path: `${screenshots}/desktop-no-webgpu.png` });
  await plain.close();
});

// `python3 -m http.server` in `folder` on a free port while `body(url)` runs.
async function withStaticServer(folder, body) {
  const port = 20000 + Math.floor(Math.random() * 10000);
  const python = spawn('python3', ['-m', 'http.server', String(port), '--bind', '127.0.0.1', '--directory', folder],
                       { stdio: 'ignore' });
  try {
    await new Promise((done) => setTimeout(done, 1000));
    await body(`http://127.0.0.1:${port}/index.html`);
  } finally {
    python.kill();
  }
}

test('a plain static file server serves the artifact and its page, in dark mode too', async () => {
  await withStaticServer(artifact, async (url) => {
    const fresh = await browser();
    const tab = fresh.pages()[0] ?? await fresh.newPage();
    await tab.emulateMedia({ colorScheme: 'dark' });
    await tab.goto(url);
    // A first visit: downloads, then the kernels compile with a count.
    await tab.waitForFunction(() => /preparing the GPU kernels: \d+\/\d+/.test(document.querySelector('#progress').textContent),
                              null, { timeout: 120000, polling: 50 });
    const info = await tab.evaluate(() => window.websd.ready);
    assert.deepEqual(info.sizes, [{ width: 64, height: 64 }]);
    await tab.waitForFunction(() => document.querySelector('#progress').textContent.startsWith('ready'));
    await tab.screenshot({ path: `${screenshots}/desktop-dark-ready.png` });
    // The cache holds the model; Clear empties it.
    await tab.waitForFunction(() => /^[1-9][0-9.]* MB/.test(document.querySelector('#cache-size').textContent));
    await tab.click('#clear-cache');
    await tab.waitForFunction(() => document.querySelector('#cache-size').textContent.startsWith('0.0 MB'));
    await fresh.close();
  });
});

// The SHA-256 of every file of the artifact at `dir` that the page fetches into its cache
// (artifact_files.js's list: not Node's, not what the browser loads as the page's own code).
function pageFileHashes(dir) {
  const manifest = JSON.parse(readFileSync(`${dir}/manifest.json`, 'utf8'));
  return new Map(manifest.sections.files
    .filter(({ path }) => !path.startsWith('runtime/node/') && !loadedByThePage(path))
    .map(({ path, sha256 }) => [path, sha256]));
}

test('an updated artifact downloads only the files that changed', async () => {
  const site = `${work}/site`;
  mkdirSync(site);
  runWebsd(['build', '--model', model, '--target', 'webgpu', '--size', '64x64', '--out', `${site}/m`]);
  const original = pageFileHashes(`${site}/m`);
  await withStaticServer(site, async (root) => {
    const url = root.replace(/index\.html$/, 'm/index.html');
    const fresh = await browser();
    const tab = fresh.pages()[0] ?? await fresh.newPage();
    await tab.goto(url);
    await tab.evaluate(() => window.websd.ready);
    // The same model rebuilt with a second size: new kernels and manifest, the same weight shards.
    runWebsd(['build', '--model', model, '--target', 'webgpu', '--size', '64x64', '--size', '128x128', '--out', `${site}/m`,
              '--force']);
    const updated = pageFileHashes(`${site}/m`);
    const changed = [...updated].filter(([path, sha]) => original.get(path) !== sha).map(([path]) => path).sort();
    const fetched = [];
    const listener = (request) => fetched.push(new URL(request.url()).pathname);
    tab.on('request', listener);
    await tab.reload();
    const info = await tab.evaluate(() => window.websd.ready);
    tab.off('request', listener);
    assert.equal(info.sizes.length, 2, 'the page runs the updated artifact');
    assert.deepEqual(fetched.filter((path) => path.includes('/weights/shard')), [], 'no weight shard downloaded again');
    const fetchedFiles = fetched.filter((path) => path.startsWith('/m/')).map((path) => path.slice(3))
      .filter((path) => updated.has(path)).sort();
    assert.ok(changed.length > 0, 'the rebuild changed some files (new kernels)');
    assert.deepEqual(fetchedFiles, changed, 'exactly the files whose SHA-256 changed were downloaded');
    assert.equal(await tab.evaluate(() => window.websd.downloaded), changed.length);
    console.log(`# updated artifact: the ${changed.length} changed files downloaded, of ${updated.size}; no shard`);
    await fresh.close();
  });
});

test('an adapter below the artifact\'s limits is named with the limit', async () => {
  const demanding = `${work}/demanding.webgpu`;
  cpSync(artifact, demanding, { recursive: true });
  const manifest = JSON.parse(readFileSync(`${demanding}/manifest.json`, 'utf8'));
  manifest.sections.device_requirements = { limits: { maxStorageBufferBindingSize: 2 ** 40 }, features: [] };
  writeFileSync(`${demanding}/manifest.json`, JSON.stringify(manifest));
  await withStaticServer(demanding, async (url) => {
    const fresh = await browser();
    const tab = fresh.pages()[0] ?? await fresh.newPage();
    await tab.goto(url);
    await tab.waitForSelector('#message:not([hidden])', { timeout: 120000 });
    const text = await tab.textContent('#message');
    assert.match(text, /below what the model needs/);
    assert.match(text, /maxStorageBufferBindingSize/);
    await tab.screenshot({ path: `${screenshots}/desktop-limits.png` });
    await fresh.close();
  });
});
