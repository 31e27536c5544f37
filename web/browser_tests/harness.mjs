// What the page's browser tests share: the websd binary (WEBSD), `websd serve` on a free port,
// headless Chromium (Debian's, driven by playwright-core over a pipe; SwiftShader's WebGPU), and a
// folder for screenshots (WEBSD_SCREENSHOTS, kept as test output).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { inflateSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

export const websd = resolve(process.env.WEBSD ?? '../build/src/app/websd');
export const fixtures = resolve(process.env.WEBSD_FIXTURES ?? '../../shared/fixtures');
export const screenshots = resolve(process.env.WEBSD_SCREENSHOTS ?? join(tmpdir(), 'websd-page-screenshots'));
mkdirSync(screenshots, { recursive: true });

export function temp(tag) {
  return mkdtempSync(join(tmpdir(), `websd-page-${tag}-`));
}

// Runs websd to completion; throws with its stderr when it fails.
export function runWebsd(args) {
  const result = spawnSync(websd, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`websd ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return result;
}

// `websd serve` on a free port of 20000-29999 (ports the system picks for 0 are not reachable in
// every sandbox). Resolves to { url, port, stop() }.
export async function serve(args) {
  for (let attempt = 0; attempt < 20; ++attempt) {
    const port = 20000 + Math.floor(Math.random() * 10000);
    const child = spawn(websd, ['serve', '--port', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const line = await new Promise((done) => {
      let text = '';
      child.stdout.on('data', (data) => {
        text += data;
        if (text.includes('\n')) done(text.split('\n')[0]);
      });
      child.on('exit', () => done(''));
    });
    if (!line.startsWith('serving ')) continue;
    return {
      url: line.split(' ')[1],
      port,
      // A server that already exited has its status now: waiting for an 'exit' event would hang.
      stop: () => new Promise((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done(child.exitCode);
        child.on('exit', (code) => done(code));
        child.kill('SIGINT');
      }),
    };
  }
  throw new Error('websd serve found no free port');
}

// Headless Chromium with a fresh profile; `webgpu: false` leaves WebGPU off (as a browser without it).
export async function browser({ webgpu = true } = {}) {
  const profile = temp('profile');
  const runtime = temp('xdg');
  const args = ['--headless=new', '--no-sandbox', '--disable-background-networking', '--disable-component-update',
                '--disable-sync', '--no-first-run', `--user-data-dir=${profile}`, '--remote-debugging-pipe',
                '--no-proxy-server'];
  if (webgpu) args.push('--enable-unsafe-webgpu');
  // The start page, as Playwright's own arguments give it: without one Chromium opens its new-tab
  // page, whose late navigation interrupts the test's first page.goto.
  args.push('about:blank');
  return chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    ignoreDefaultArgs: true,
    args,
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
    viewport: { width: 1280, height: 900 },
    timeout: 60000,
  });
}

// The RGB bytes of an 8-bit RGB or RGBA PNG (what websd writes), for comparing images.
export function decodePng(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 8;
  let width = 0, height = 0, type = 0;
  const data = [];
  while (at < bytes.length) {
    const length = view.getUint32(at);
    const name = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (name === 'IHDR') {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      if (body[8] !== 8) throw new Error('decodePng: 8-bit PNGs only');
      type = body[9];
    }
    if (name === 'IDAT') data.push(body);
    at += 12 + length;
  }
  const channels = { 2: 3, 6: 4 }[type];
  if (!channels) throw new Error(`decodePng: color type ${type}`);
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)];
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c;
      const paeth = Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c) ? a
        : Math.abs(p - b) <= Math.abs(p - c) ? b : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter];
      pixels[y * stride + x] = (row[x] + predictor) & 255;
    }
  }
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0, j = 0; i < pixels.length; i += channels, j += 3) rgb.set(pixels.subarray(i, i + 3), j);
  return { width, height, rgb };
}

// The worst difference between two RGB images of one size, in 8-bit levels.
export function worstLevels(a, b) {
  if (a.length !== b.length) return 255;
  let worst = 0;
  for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}
