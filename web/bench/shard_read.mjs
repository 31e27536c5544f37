// Times delivering a webgpu artifact's weight shards as the Node runner does (web/node/websd_node.mjs
// readInto: read, SHA-256), on the main thread alone and with the worker read-ahead
// (web/node/shard_prefetch.mjs), each followed per shard by a stand-in for the upload (a copy of
// the shard, then `--upload-ms-per-gb` of busy time: about 1000 for Dawn's writeBuffer on an H100
// machine), in one process, alternating, after a pass that brings the files into the page cache.
//
//   node bench/shard_read.mjs ARTIFACT [--reps N] [--upload-ms-per-gb MS]
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

import { ShardPrefetch, readFully } from '../node/shard_prefetch.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const root = resolve(args[0] ?? '');
const reps = option('--reps', 3);
const uploadMsPerGb = option('--upload-ms-per-gb', 1000);
const shards = JSON.parse(readFileSync(join(root, 'weights', 'index.json'), 'utf8')).shards
  .map((s) => ({ path: `weights/${s.file}`, bytes: s.bytes }));
const total = shards.reduce((sum, s) => sum + s.bytes, 0);
const target = new Uint8Array(Math.max(...shards.map((s) => s.bytes)));
const device = new Uint8Array(target.length);
const inside = (path) => join(root, path);

function upload(view) {
  device.set(view);
  const until = performance.now() + (uploadMsPerGb * view.length) / 1e9;
  while (performance.now() < until);
}

function deliverAll(prefetch) {
  const start = performance.now();
  let waited = 0;
  for (const { path, bytes } of shards) {
    const view = target.subarray(0, bytes);
    const t = performance.now();
    const ahead = prefetch?.readInto(path, view);
    if (!ahead) createHash('sha256').update(view.subarray(0, readFully(inside(path), view))).digest();
    waited += performance.now() - t;
    upload(view);
  }
  prefetch?.stop();
  return { s: (performance.now() - start) / 1000, readS: waited / 1000 };
}

deliverAll(null);  // the page cache
console.log(`# ${shards.length} shards, ${(total / 2 ** 30).toFixed(2)} GiB; upload stand-in ${uploadMsPerGb} ms/GB`);
for (let rep = 0; rep < reps; rep++) {
  const alone = deliverAll(null);
  const ahead = deliverAll(ShardPrefetch.start(root, inside));
  console.log(`main thread alone ${alone.s.toFixed(3)} s (reads ${alone.readS.toFixed(3)} s)   ` +
              `read ahead ${ahead.s.toFixed(3)} s (waits ${ahead.readS.toFixed(3)} s)   ratio ${(alone.s / ahead.s).toFixed(2)}`);
}
