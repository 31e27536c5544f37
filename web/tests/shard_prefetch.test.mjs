// The Node runner's shard read-ahead (web/node/shard_prefetch.mjs): whatever order the shards are
// asked for in, each delivery is the file's bytes with their SHA-256, or null where the caller must
// read the file itself; never another file's bytes, never more than the caller asked for.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { test } from 'node:test';

import { ShardPrefetch, readFully } from '../node/shard_prefetch.mjs';

// An artifact folder with `sizes.length` shards of distinct bytes, listed in weights/index.json.
function folder(sizes, { listed = sizes } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'websd-prefetch-'));
  mkdirSync(join(root, 'weights'));
  const bytes = sizes.map((size, s) => Uint8Array.from({ length: size }, (_, i) => (i * 31 + s * 7) & 255));
  bytes.forEach((b, s) => writeFileSync(join(root, 'weights', `shard-${s}.bin`), b));
  const shards = listed.map((size, s) => ({ file: `shard-${s}.bin`, bytes: size, sha256: '' }));
  writeFileSync(join(root, 'weights', 'index.json'), JSON.stringify({ shards, tensors: [] }));
  const inside = (path) => {
    const full = resolve(root, path);
    if (!full.startsWith(root + sep)) throw new Error(`${path}: outside`);
    return full;
  };
  return { root, bytes, inside, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

const sha256 = (b) => createHash('sha256').update(b).digest();

// Until the workers have read `count` shards ahead (a loaded machine starts them late), at most 20 s.
async function readAhead(prefetch, count) {
  const deadline = Date.now() + 20000;
  while (prefetch.readyCount() < count && Date.now() < deadline) await new Promise((done) => setTimeout(done, 5));
  assert.ok(prefetch.readyCount() >= count, `only ${prefetch.readyCount()} shards read ahead in 20 s`);
}

// The shard as the runner delivers it: read ahead where the prefetch has it, else read here.
function deliver(prefetch, inside, path, length) {
  const target = new Uint8Array(length);
  const ahead = prefetch.readInto(path, target);
  if (ahead) return { target, ...ahead, ahead: true };
  const bytes = readFully(inside(path), target);
  return { target, bytes, digest: sha256(target.subarray(0, bytes)), ahead: false };
}

test('shards asked for in the index order, in reverse and twice are each their bytes and digest', async () => {
  const sizes = [70000, 1, 123457, 65536, 9000, 300000];
  const { root, bytes, inside, cleanup } = folder(sizes);
  try {
    for (const order of [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 0, 2, 5, 1, 3, 4, 0]]) {
      const prefetch = ShardPrefetch.start(root, inside);
      assert.ok(prefetch, 'a folder of six shards is read ahead');
      await readAhead(prefetch, 1);
      let ahead = 0;
      for (const s of order) {
        const got = deliver(prefetch, inside, `weights/shard-${s}.bin`, sizes[s]);
        assert.equal(got.bytes, sizes[s]);
        assert.deepEqual(got.target, bytes[s], `shard ${s}`);
        assert.deepEqual(got.digest, sha256(bytes[s]), `shard ${s}'s digest`);
        ahead += got.ahead ? 1 : 0;
      }
      assert.ok(ahead > 0, `order ${order}: nothing was read ahead`);
      prefetch.stop();
    }
  } finally {
    cleanup();
  }
});

test('a length other than the index says, a file not in it and a missing shard are left to the caller', async () => {
  const sizes = [4000, 5000, 6000];
  const { root, bytes, inside, cleanup } = folder(sizes, { listed: [4000, 5000, 6000, 7000] });
  try {
    const prefetch = ShardPrefetch.start(root, inside);
    await readAhead(prefetch, 1);
    assert.equal(prefetch.readInto('weights/shard-0.bin', new Uint8Array(3999)), null);
    assert.equal(prefetch.readInto('weights/other.bin', new Uint8Array(10)), null);
    assert.equal(prefetch.readInto('weights/shard-3.bin', new Uint8Array(7000)), null);  // no such file
    const got = deliver(prefetch, inside, 'weights/shard-2.bin', 6000);
    assert.deepEqual(got.target, bytes[2]);
    prefetch.stop();
  } finally {
    cleanup();
  }
});

test('no index, one shard or a path outside the folder: nothing is read ahead', () => {
  const one = folder([100]);
  try {
    assert.equal(ShardPrefetch.start(one.root, one.inside), null);
    assert.equal(ShardPrefetch.start(join(one.root, 'absent'), one.inside), null);
    writeFileSync(join(one.root, 'weights', 'index.json'),
                  JSON.stringify({ shards: [{ file: '../../x', bytes: 1 }, { file: 'a', bytes: 1 }] }));
    assert.equal(ShardPrefetch.start(one.root, one.inside), null);
  } finally {
    one.cleanup();
  }
});
