// The artifact's files for the wasm runtime, fetched once and kept in Cache Storage under keys that
// name their SHA-256 (`<url>?sha256=<hex>`, the server's immutable form too): a reload or a second
// visit downloads nothing, and an updated artifact downloads only the files whose content changed.
// Every download is verified against the manifest's (or the weight index's) SHA-256 before it is
// kept. The runtime reads the files synchronously (src/web_runtime/web_host_library.js), so they
// are all in memory before it opens the artifact.

export const CACHE_NAME = 'websd-artifact-files-v1';

// Bytes received of downloads that broke off, by URL: a retry asks for the rest with a Range
// request (a server that answers 200 instead of 206 sends the whole file again).
const partialDownloads = new Map();

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

function unhex(text) {
  return new Uint8Array(text.match(/../g).map((byte) => parseInt(byte, 16)));
}

async function fetchJson(url) {
  const response = await fetch(url, { cache: 'no-cache' });
  if (!response.ok) throw new LoadError('manifest', `${url}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { bytes, json: JSON.parse(new TextDecoder().decode(bytes)) };
}

// What the browser loads as the page's own code, not through this cache: the page, the GPU
// bridge it imports, and the runtime's script (websd.js loads it with the manifest's SHA-256 as
// its Subresource Integrity).
export function loadedByThePage(path) {
  return path.startsWith('app/') || path === 'index.html' || path.startsWith('runtime/bridge/') ||
    path === 'runtime/websd_web.js';
}

// The files the browser runtime reads: the manifest's list without what only Node or the page
// itself uses, and every weight shard.
function neededFiles(manifest, index) {
  const files = (manifest.sections?.files ?? []).filter(({ path }) =>
    !path.startsWith('runtime/node/') && !loadedByThePage(path));
  const shards = (index.shards ?? []).map((shard) => ({ path: `weights/${shard.file}`, bytes: shard.bytes, sha256: shard.sha256 }));
  return [...files, ...shards];
}

// Sizes as the page shows them: one decimal below 10 MB.
export function megabytes(bytes) {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

function concatenate(chunks) {
  const bytes = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

// Downloads `url` (`bytes` long), resuming a download of it that broke off; reports bytes as they
// arrive. A connection that fails or ends early keeps what came for the next try. A server that
// cannot serve the rest (416, or a 206 starting elsewhere) gets the whole file asked for again.
async function download(url, path, bytes, onBytes) {
  const partial = partialDownloads.get(url) ?? { chunks: [], received: 0 };
  partialDownloads.delete(url);
  const restart = () => download(url, path, bytes, onBytes);
  let response;
  try {
    const headers = partial.received > 0 ? { Range: `bytes=${partial.received}-` } : {};
    response = await fetch(url, { cache: 'no-store', headers });
  } catch (error) {
    partialDownloads.set(url, partial);
    throw new LoadError('download', `downloading ${path} failed: ${error.message}`, { path });
  }
  if (partial.received > 0 && response.status === 416) return restart();
  if (!response.ok) {
    partialDownloads.set(url, partial);
    throw new LoadError('download', `downloading ${path} failed: HTTP ${response.status}`, { path });
  }
  if (response.status === 206 && !(response.headers.get('Content-Range') ?? '').startsWith(`bytes ${partial.received}-`)) {
    response.body?.cancel();
    return restart();
  }
  const resumed = response.status === 206 && partial.received > 0;
  const chunks = resumed ? partial.chunks : [];
  let received = resumed ? partial.received : 0;
  if (resumed) onBytes(0, received);
  const keep = () => partialDownloads.set(url, { chunks, received });
  try {
    if (!response.body) {
      const all = new Uint8Array(await response.arrayBuffer());
      chunks.push(all);
      received += all.length;
      onBytes(all.length, received);
    } else {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        received += value.length;
        onBytes(value.length, received);
        if (received > bytes) {
          reader.cancel();
          break;
        }
      }
    }
  } catch (error) {
    // Every byte came before the connection failed: the checksum judges them.
    if (received !== bytes) {
      keep();
      throw new LoadError('download', `downloading ${path} broke off after ${megabytes(received)} of ${megabytes(bytes)}: ${error.message}`, { path });
    }
  }
  if (received > bytes) {
    throw new LoadError('download', `${path} is larger than the ${megabytes(bytes)} the artifact lists (the server sent ${megabytes(received)} or more)`, { path });
  }
  if (received < bytes) {
    keep();
    throw new LoadError('download', `downloading ${path} broke off after ${megabytes(received)} of ${megabytes(bytes)}`, { path });
  }
  return { data: concatenate(chunks), resumedAt: resumed ? partial.received : 0 };
}

// Loads the artifact at `base` (a URL ending in '/'). onProgress({stage, done, total, bytesDone,
// bytesTotal, bytesPerSecond}) reports downloads ('downloading') and cache reads ('cached').
// Returns { files: Map(path -> Uint8Array), digests: Map(path -> 32-byte SHA-256 of the bytes in
// files, checked on download or read from the cache entry keyed by it), manifest, downloaded
// (count of files fetched), resumed (of those, how many continued a download that broke off) }. A failed download throws
// LoadError 'download'; calling again resumes it.
export async function loadArtifactFiles(base, onProgress = () => {}) {
  const manifestFile = await fetchJson(new URL('manifest.json', base));
  const manifest = manifestFile.json;
  if (manifest.target !== 'webgpu') {
    throw new LoadError('manifest', `this artifact was built for '${manifest.target}', not for browsers (webgpu)`);
  }
  const seal = await fetchJson(new URL('seal.json', base));
  const index = await fetchJson(new URL('weights/index.json', base));
  const files = new Map([['manifest.json', manifestFile.bytes], ['seal.json', seal.bytes], ['weights/index.json', index.bytes]]);
  const digests = new Map();
  const needed = neededFiles(manifest, index.json);
  const cache = 'caches' in globalThis ? await caches.open(CACHE_NAME) : null;
  const bytesTotal = needed.reduce((sum, file) => sum + file.bytes, 0);
  let bytesDone = 0;
  let downloaded = 0;
  let resumed = 0;
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
        digests.set(path, unhex(sha256));  // the cache holds only what was checked when it entered
        bytesDone += bytes;
        report('cached', i + 1);
        continue;
      }
      await cache.delete(key);  // damaged: fetched again below
    }
    const fileStart = bytesDone;
    const { data, resumedAt } = await download(key, path, bytes, (n, received) => {
      bytesDone = fileStart + received;
      report('downloading', i);
    });
    if (resumedAt) resumed += 1;
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
          throw new LoadError('quota', `keeping ${path}: the model needs ${megabytes(bytesTotal)} of storage`, { path, bytesTotal });
        }
        throw error;
      }
    }
    files.set(path, data);
    digests.set(path, unhex(sha256));
    downloaded += 1;
    report('downloading', i + 1);
  }
  return { files, digests, manifest, downloaded, resumed };
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
