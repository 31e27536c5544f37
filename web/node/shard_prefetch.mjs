// Read-ahead of an artifact's weight shards for the Node runner: worker threads read the shards in
// the order weights/index.json lists them (the order the runtime loads its functions' weights) and
// hash them natively, into a few shared slots, while the main thread uploads the shards before
// them to the GPU. Reading and hashing SD 1.5's 2 GB of shards took about as long as uploading them
// (2.1 s and 1.9 s on an H100 machine, one after the other); overlapped, the main thread mostly
// copies each shard from its slot into the runtime's memory.
//
// What the runtime sees does not change: readInto(path, target) delivers the file's first
// target.length bytes and digest(path) the SHA-256 of exactly those bytes, whoever read them (the
// runtime compares that digest with its own verified index; the index read here only says what to
// read ahead). A shard asked for before a worker took it, or of another length than the index says,
// is read and hashed on the main thread as before; a slot is freed as soon as its shard is
// delivered, so host memory stays within the slots (at most kWindowBytes, or two shards).
//
//   const prefetch = ShardPrefetch.start(root, inside);   // null when there is nothing to read ahead
//   prefetch?.readInto(path, target) -> { bytes, digest } or null (not prefetched: read it yourself)
//   prefetch?.readyCount() -> shards read ahead and waiting
//   prefetch?.stop()
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker, isMainThread, workerData } from 'node:worker_threads';

const kWindowBytes = 256 << 20;
// Per shard (Int32 states): pending -> claimed by a worker -> ready in a slot, or taken by the main
// thread before a worker claimed it, or failed (the main thread reads it itself).
const kPending = 0, kClaimed = 1, kReady = 2, kTaken = 3, kFailed = 4;
const kSlotFree = 0, kSlotBusy = 1;

// The file's first view.length bytes (fewer if it is shorter) read into `view`: the count read.
export function readFully(path, view) {
  const fd = openSync(path, 'r');
  try {
    let done = 0;
    while (done < view.length) {
      const got = readSync(fd, view, done, view.length - done, done);
      if (got === 0) break;
      done += got;
    }
    return done;
  } finally {
    closeSync(fd);
  }
}

export class ShardPrefetch {
  // Starts the workers for the shards weights/index.json names under `root`; `inside(path)` is the
  // runner's resolution of a path within the artifact (refusing others).
  static start(root, inside) {
    let shards;
    try {
      shards = JSON.parse(readFileSync(join(root, 'weights', 'index.json'), 'utf8')).shards
        .map((s) => ({ path: `weights/${s.file}`, bytes: s.bytes }))
        .filter((s) => Number.isSafeInteger(s.bytes) && s.bytes > 0);
      for (const s of shards) inside(s.path);
    } catch {
      return null;  // no index to go by (or one the runtime will refuse): read on demand
    }
    if (shards.length < 2) return null;
    return new ShardPrefetch(shards.map((s) => ({ ...s, full: inside(s.path) })));
  }

  constructor(shards) {
    const largest = Math.max(...shards.map((s) => s.bytes));
    const slots = Math.max(2, Math.min(8, Math.floor(kWindowBytes / largest)));
    this.shards = shards;
    this.byPath = new Map(shards.map((s, i) => [s.path, i]));
    this.slotBytes = largest;
    this.data = new SharedArrayBuffer(slots * largest);
    // states[i]: shard i's state; slotOf[i]: its slot once ready; lengths[i]: bytes read;
    // digests: 32 bytes per shard; slotStates: one per slot; freed: slots freed so far (workers
    // waiting for a slot wait on it).
    this.control = new SharedArrayBuffer(4 * (3 * shards.length + slots + 1));
    ({ states: this.states, slotOf: this.slotOf, lengths: this.lengths, slotStates: this.slotStates,
       freed: this.freed } = views(this.control, shards.length, slots));
    this.digests = new SharedArrayBuffer(32 * shards.length);
    const count = Math.max(1, Math.min(4, availableParallelism() - 1, slots - 1));
    this.workers = Array.from({ length: count }, () => {
      const worker = new Worker(new URL(import.meta.url), {
        workerData: { shards: shards.map(({ full, bytes }) => ({ full, bytes })), slotBytes: largest,
                      data: this.data, control: this.control, digests: this.digests, slots },
      });
      worker.unref();  // never keeps the process alive
      worker.on('error', () => {});  // a failed worker's claims are marked failed (see work())
      return worker;
    });
  }

  // The prefetched shard `path` copied into `target` with its digest, or null when the main thread
  // must read it itself (not in the index, another length, taken before any worker, or failed).
  readInto(path, target) {
    const i = this.byPath.get(path);
    if (i === undefined || this.shards[i].bytes !== target.length) return null;
    // Take it unless a worker already has it; then wait for the worker, which holds a slot for it.
    if (Atomics.compareExchange(this.states, i, kPending, kTaken) === kPending) return null;
    // A claimed shard is read within seconds; one claimed far longer (a worker that died) is read here.
    const deadline = Date.now() + 60000;
    while (Atomics.load(this.states, i) === kClaimed && Date.now() < deadline) {
      Atomics.wait(this.states, i, kClaimed, 1000);
    }
    if (Atomics.load(this.states, i) !== kReady) return null;
    const slot = this.slotOf[i], bytes = this.lengths[i];
    target.set(new Uint8Array(this.data, slot * this.slotBytes, bytes));
    const digest = Buffer.from(new Uint8Array(this.digests, 32 * i, 32));
    Atomics.store(this.states, i, kTaken);
    Atomics.store(this.slotStates, slot, kSlotFree);
    Atomics.add(this.freed, 0, 1);
    Atomics.notify(this.freed, 0);
    return { bytes, digest };
  }

  // How many shards the workers have read and not yet delivered or had taken (for tests and
  // diagnostics: the read-ahead's progress).
  readyCount() {
    return this.states.filter((state) => state === kReady).length;
  }

  stop() {
    for (const worker of this.workers) worker.terminate();
  }
}

// The shared control block's arrays (see the constructor).
function views(control, n, slots) {
  return { states: new Int32Array(control, 0, n), slotOf: new Int32Array(control, 4 * n, n),
           lengths: new Int32Array(control, 8 * n, n), slotStates: new Int32Array(control, 12 * n, slots),
           freed: new Int32Array(control, 4 * (3 * n + slots), 1) };
}

// A worker: takes a free slot, claims the next pending shard, reads and hashes it into the slot;
// until no shard is pending.
function work({ shards, slotBytes, data, control, digests, slots }) {
  const n = shards.length;
  const { states, slotOf, lengths, slotStates, freed } = views(control, n, slots);
  let next = 0;
  for (;;) {
    // A slot first, so that a claimed shard always has one (the main thread waits on claims).
    let slot = -1;
    while (slot < 0) {
      const seen = Atomics.load(freed, 0);
      for (let s = 0; s < slots && slot < 0; s++) {
        if (Atomics.compareExchange(slotStates, s, kSlotFree, kSlotBusy) === kSlotFree) slot = s;
      }
      if (slot < 0) {
        if (!states.some((state) => state === kPending)) return;
        Atomics.wait(freed, 0, seen);
      }
    }
    while (next < n && Atomics.compareExchange(states, next, kPending, kClaimed) !== kPending) next++;
    if (next >= n) {
      Atomics.store(slotStates, slot, kSlotFree);
      Atomics.add(freed, 0, 1);
      Atomics.notify(freed, 0);
      return;
    }
    const i = next++;
    try {
      const view = new Uint8Array(data, slot * slotBytes, shards[i].bytes);
      const bytes = readFully(shards[i].full, view);
      new Uint8Array(digests, 32 * i, 32).set(createHash('sha256').update(view.subarray(0, bytes)).digest());
      lengths[i] = bytes;
      slotOf[i] = slot;
      Atomics.store(states, i, kReady);
    } catch {
      Atomics.store(slotStates, slot, kSlotFree);
      Atomics.add(freed, 0, 1);
      Atomics.notify(freed, 0);
      Atomics.store(states, i, kFailed);
    }
    Atomics.notify(states, i);
  }
}

if (!isMainThread && workerData?.shards) work(workerData);
