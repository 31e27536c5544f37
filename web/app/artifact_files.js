// The artifact's files for the wasm runtime, fetched once and kept in Cache Storage under keys that
// name their SHA-256 (`<url>?sha256=<hex>`, the server's immutable form too): a reload or a second
// visit downloads nothing, and an updated artifact downloads only the files whose content changed.
// Every download is verified against the manifest's (or the weight index's) SHA-256 before it is
// kept. The runtime reads the files synchronously (src/web_runtime/web_host_library.js), so they
// are all in memory before it opens the artifact.

export const CACHE_NAME = 'websd-artifact-files-v1';

// What a failed step of loading says to the page: `kind` picks the message the page shows.
export class LoadError extends Error {
  constructor(kind, message, details = {}) {
    super(message);
    this.kind = kind;  // 'download' | 'checksum' | 'quota' | 'manifest'
    this.details = details;
  }
}

function hex(buffer) {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

async function fetchJson(url) {
  const response = await fetch(url, { cache: 'no-cache' });
  if (!response.ok) throw new LoadError('manifest', `${url}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { bytes, json: JSON.parse(new TextDecoder().decode(bytes)) };
}

// The files the browser runtime reads: the manifest's list without what only Node or the page
// itself uses, and every weight shard.
function neededFiles(manifest, index) {
  const files = (manifest.sections?.files ?? []).filter(({ path }) =>
    !path.startsWith('runtime/node/') && !path.startsWith('app/') && path !== 'index.html');
  const shards = (index.shards ?? []).map((shard) => ({ path: `weights/${shard.file}`, bytes: shard.bytes, sha256: shard.sha256 }));
  return [...files, ...shards];
}

// Reads `response`'s body, reporting bytes as they arrive.
async function readWithProgress(response, onBytes) {
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const chunks = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    received += value.length;
    onBytes(value.length);
  }
  const bytes = new Uint8Array(received);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

// Loads the artifact at `base` (a URL ending in '/'). onProgress({stage, done, total, bytesDone,
// bytesTotal, bytesPerSecond}) reports downloads ('downloading') and cache reads ('cached').
// Returns { files: Map(path -> Uint8Array), manifest, downloaded (count of files fetched) }.
export async function loadArtifactFiles(base, onProgress = () => {}) {
  const manifestFile = await fetchJson(new URL('manifest.json', base));
  const manifest = manifestFile.json;
  if (manifest.target !== 'webgpu') {
    throw new LoadError('manifest', `this artifact was built for '${manifest.target}', not for browsers (webgpu)`);
  }
  const seal = await fetchJson(new URL('seal.json', base));
  const index = await fetchJson(new URL('weights/index.json', base));
  const files = new Map([['manifest.json', manifestFile.bytes], ['seal.json', seal.bytes], ['weights/index.json', index.bytes]]);
  const needed = neededFiles(manifest, index.json);
  const cache = 'caches' in globalThis ? await caches.open(CACHE_NAME) : null;
  const bytesTotal = needed.reduce((sum, file) => sum + file.bytes, 0);
  let bytesDone = 0;
  let downloaded = 0;
  const started = performance.now();
  const report = (stage, done) => onProgress({
    stage, done, total: needed.length, bytesDone, bytesTotal,
    bytesPerSecond: bytesDone / Math.max(1e-3, (performance.now() - started) / 1000),
  });
  for (let i = 0; i < needed.length; ++i) {
    const { path, bytes, sha256 } = needed[i];
    const key = new URL(`${path}?sha256=${sha256}`, base).href;
    const hit = cache ? await cache.match(key) : undefined;
    if (hit) {
      const data = new Uint8Array(await hit.arrayBuffer());
      if (data.length === bytes) {
        files.set(path, data);
        bytesDone += bytes;
        report('cached', i + 1);
        continue;
      }
      await cache.delete(key);  // damaged: fetched again below
    }
    let response;
    try {
      response = await fetch(key, { cache: 'no-store' });
    } catch (error) {
      throw new LoadError('download', `downloading ${path} failed: ${error.message}`, { path });
    }
    if (!response.ok) throw new LoadError('download', `downloading ${path} failed: HTTP ${response.status}`, { path });
    const data = await readWithProgress(response, (n) => {
      bytesDone += n;
      report('downloading', i);
    });
    const digest = hex(await crypto.subtle.digest('SHA-256', data));
    if (data.length !== bytes || digest !== sha256) {
      throw new LoadError('checksum', `${path} does not match the artifact's manifest (its SHA-256 is ${digest}, ` +
                                      `expected ${sha256}): the download was damaged or the server holds another version`, { path });
    }
    if (cache) {
      try {
        await cache.put(key, new Response(data, { headers: { 'Content-Type': 'application/octet-stream' } }));
      } catch (error) {
        if (error.name === 'QuotaExceededError') {
          throw new LoadError('quota', `the browser's storage quota is exceeded while keeping ${path}`, { path, bytesTotal });
        }
        throw error;
      }
    }
    files.set(path, data);
    downloaded += 1;
    report('downloading', i + 1);
  }
  return { files, manifest, downloaded };
}

// Bytes kept by this page's file cache, and the storage estimate (usage, quota) where offered.
export async function cacheSize() {
  if (!('caches' in globalThis)) return { bytes: 0 };
  const cache = await caches.open(CACHE_NAME);
  let bytes = 0;
  for (const request of await cache.keys()) {
    const response = await cache.match(request);
    bytes += Number(response.headers.get('Content-Length')) || (await response.clone().arrayBuffer()).byteLength;
  }
  const estimate = navigator.storage?.estimate ? await navigator.storage.estimate() : {};
  return { bytes, usage: estimate.usage, quota: estimate.quota };
}

export async function clearCache() {
  if ('caches' in globalThis) await caches.delete(CACHE_NAME);
}
