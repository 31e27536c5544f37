// What the page's browser tests share: the websd binary (WEBSD), `websd serve` on a free port,
// headless Chromium (Debian's, driven by playwright-core over a pipe; SwiftShader's WebGPU), and a
// folder for screenshots (WEBSD_SCREENSHOTS, kept as test output).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
      stop: () => new Promise((done) => {
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
  return chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    ignoreDefaultArgs: true,
    args,
    env: { ...process.env, XDG_RUNTIME_DIR: runtime },
    viewport: { width: 1280, height: 900 },
    timeout: 60000,
  });
}
