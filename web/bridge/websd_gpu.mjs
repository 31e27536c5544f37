// The JavaScript side of websd's WebGPU device: owns the GPUDevice and everything made on it, and
// hands the WebAssembly runtime (src/targets/webgpu/runtime) integer handles instead of objects.
// The same module serves the Node runner (npm `webgpu`, Dawn) and the browser page: it touches
// nothing but the WebGPU API it is given.
//
//   const gpu = await GpuBridge.create(navigator.gpu, { requiredLimits, requiredFeatures });
//   const a = gpu.createBuffer(bytes);                 // handles are small integers
//   gpu.writeBuffer(a, 0, data);                       // copied now: `data` may change afterwards
//   const k = gpu.createKernel(wgsl, 'main', ['read', 'write'], 16);
//   const p = gpu.createProgram([{ kernel: k, bindings: [...], uniforms, dispatch: [x, y, z] }]);
//   gpu.runProgram(p);                                 // every dispatch in one compute pass
//   gpu.readBuffer(b, 0, bytes, (view) => ...);        // delivered once the work is done
//   gpu.flush();                                       // submits the command encoder
//   await gpu.drained();                               // reads delivered (or: while (!gpu.poll()) yield)
//   await gpu.settled();                               // and every kernel compiled
//
// Ordering: writes, copies, runs and reads take effect in the order they are called, as the
// runtime's Device interface promises (src/runtime/device.h). Commands are gathered in one command
// encoder per flush (one per UNet step, not one per dispatch); a write flushes what was gathered
// first, since queue.writeBuffer would otherwise overtake it. Errors (validation, out of memory,
// shader compilation, device loss) are kept and thrown by the next poll() or settled(), with the
// operation that caused them. Kernels compile in the background: a run of a program whose kernels
// are still compiling is queued, with every write, copy, read, run and release called after it,
// and replayed in order once they are (the runtime may submit right after preparing). Single-
// threaded, like everything on one GPUDevice.

const kStorageUsage = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
const kWriteSubmitBytes = 64 * 1024 * 1024;  // see writeBuffer
// Upload staging (see writeBuffer): slots of MAP_WRITE buffers reused once the GPU has copied them
// out. On an H100 under Dawn, 2 GiB of weights took 0.51 s through four 64 MiB slots against 1.81 s
// through queue.writeBuffer (web/bench/gpu_upload.mjs), whose staging is new memory every time.
const kUploadSlotBytes = 32 * 1024 * 1024;
const kUploadSlots = 4;

// The message for an adapter that lacks what the artifact needs (null when it has all of it).
export function missingCapability(adapter, requiredLimits = {}, requiredFeatures = []) {
  for (const feature of requiredFeatures) {
    if (!adapter.features.has(feature)) return `the adapter lacks feature '${feature}'`;
  }
  for (const [name, needed] of Object.entries(requiredLimits)) {
    const offered = adapter.limits[name];
    if (offered === undefined) return `the adapter does not report limit '${name}'`;
    // Alignments are better when smaller; every other limit when larger.
    const enough = name.startsWith('min') ? offered <= needed : offered >= needed;
    if (!enough) return `limit ${name}: the artifact needs ${needed}, the adapter offers ${offered}`;
  }
  return null;
}

// What the adapter lacks of a tier's subgroup needs (its subgroup size, a subgroup-matrix
// configuration), or null.
function missingSubgroupShape(adapter, requirements) {
  const info = adapter.info ?? {};
  const size = requirements.subgroup_size;
  if (size !== undefined && !(info.subgroupMinSize === size && info.subgroupMaxSize === size)) {
    return `its subgroups are not all ${size} wide (${info.subgroupMinSize ?? '?'} to ${info.subgroupMaxSize ?? '?'})`;
  }
  const want = requirements.subgroup_matrix;
  if (want && !(info.subgroupMatrixConfigs ?? []).some((c) => c.componentType === want.componentType &&
      c.resultComponentType === want.resultComponentType && c.M === want.M && c.N === want.N && c.K === want.K)) {
    return `it offers no ${want.componentType} -> ${want.resultComponentType} ${want.M}x${want.N}x${want.K} subgroup matrices`;
  }
  return null;
}

// The kernel tier to run an artifact (its parsed manifest.json) with on `adapter`: `asked` when
// given (an Error naming what the adapter lacks when it cannot), else the best tier the adapter
// can run among those the manifest lets a runtime pick by itself (not `automatic: false`): the manifest's `tiers` are written from the base (which runs on every adapter that meets
// its limits, the manifest's device_requirements) to the fastest. Artifacts from before tiers have
// one lowering: tier ''. Returns { name, requiredLimits, requiredFeatures }.
export function chooseTier(manifest, adapter, asked = '') {
  const base = manifest.sections?.device_requirements ?? {};
  const listed = manifest.sections?.tiers ?? [{ name: '' }];
  const tiers = listed.map((tier, index) => (index === 0 ? { ...tier, device_requirements: base } : tier));
  const needs = (tier) => ({ name: tier.name, requiredLimits: tier.device_requirements?.limits ?? {},
                             requiredFeatures: tier.device_requirements?.features ?? [] });
  const lacks = (tier) => {
    const { requiredLimits, requiredFeatures } = needs(tier);
    return missingCapability(adapter, requiredLimits, requiredFeatures) ??
           missingSubgroupShape(adapter, tier.device_requirements ?? {});
  };
  if (asked) {
    const tier = tiers.find((t) => t.name === asked);
    if (!tier) {
      throw new Error(`webgpu: the artifact has no tier '${asked}' (it holds ${tiers.map((t) => t.name || 'one lowering').join(', ')})`);
    }
    const why = lacks(tier);
    if (why) throw new Error(`webgpu: ${describeAdapter(adapter)} cannot run tier '${asked}': ${why}`);
    return needs(tier);
  }
  // A tier marked `automatic: false` runs only when asked for.
  for (let i = tiers.length - 1; i > 0; --i) if (tiers[i].automatic !== false && !lacks(tiers[i])) return needs(tiers[i]);
  return needs(tiers[0]);
}

export class GpuBridge {
  // `gpu` is navigator.gpu, or npm webgpu's create([...toggles]) under Node. Throws an Error whose
  // message starts with "webgpu:" when there is no adapter or it lacks a limit or feature. With
  // `manifest` (an artifact's), the tier (chooseTier: `tier`, or the best the adapter runs) adds
  // its limits and features to those given, and `bridge.tier` names it.
  static async create(gpu, { requiredLimits = {}, requiredFeatures = [], powerPreference = 'high-performance',
                             manifest = null, tier = '' } = {}) {
    if (!gpu) throw new Error('webgpu: this environment has no WebGPU (navigator.gpu is missing)');
    const adapter = await gpu.requestAdapter({ powerPreference });
    if (!adapter) {
      throw new Error('webgpu: no GPU adapter was found (in a browser: WebGPU may be disabled; under Node: ' +
                      'set VK_ICD_FILENAMES to a Vulkan driver, e.g. SwiftShader\'s)');
    }
    let chosen = null;
    if (manifest) {
      chosen = chooseTier(manifest, adapter, tier);
      requiredLimits = { ...chosen.requiredLimits, ...requiredLimits };
      requiredFeatures = [...new Set([...chosen.requiredFeatures, ...requiredFeatures])];
    }
    const missing = missingCapability(adapter, requiredLimits, requiredFeatures);
    if (missing) throw new Error(`webgpu: ${describeAdapter(adapter)}: ${missing}`);
    const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
    const bridge = new GpuBridge(gpu, adapter, device);
    bridge.tier = chosen?.name ?? '';
    return bridge;
  }

  constructor(gpu, adapter, device) {
    this.gpu = gpu;  // held: Dawn under Node tears its instance down when this is collected
    this.adapter = adapter;
    this.device = device;
    this.adapterName = describeAdapter(adapter);
    this.objects = [null];  // handle -> buffer, kernel or program; 0 is never a handle
    this.freeHandles = [];
    this.encoder = null;
    this.afterFlush = [];   // reads to start once the copies they wait on are submitted
    this.pending = 0;       // reads and compilations not yet delivered
    this.writtenSinceSubmit = 0;  // bytes of queue.writeBuffer since the last submit
    this.compiling = 0;     // kernels whose pipelines are not made yet
    this.kernelsCreated = 0;  // kernels asked for so far (a page shows compiling progress against it)
    this.compileSeconds = 0;  // wall time while at least one pipeline was compiling
    this.compileStart = 0;
    this.kernelCallSeconds = 0;  // time spent in createKernel itself (the WGSL parsed and checked)
    this.deferred = null;   // commands queued behind a run that waits on compilation (see defer)
    this.waiters = [];      // settled() promises waiting for pending == 0
    this.error = null;
    this.stagingPool = new Map();  // bytes -> idle MAP_READ buffers
    this.uploadSlots = [];  // { buffer, view (mapped, else null), used, ready (mapAsync's promise) }
    this.reads = 0;         // reads not yet delivered (pending counts them too)
    this.blockedOn = null;  // the program whose kernels the deferred commands wait for
    this.liveBytes = 0;
    this.peakBytes = 0;
    device.addEventListener?.('uncapturederror', (event) => this.fail(gpuErrorMessage(event.error)));
    device.lost?.then((info) => {
      if (info.reason !== 'destroyed') this.fail(`the GPU device was lost: ${info.message}`);
    });
  }

  // The adapter's limits, as a plain object (DeviceLimits on the C++ side).
  limits() {
    const limits = {};
    for (const name in this.device.limits) limits[name] = this.device.limits[name];
    return limits;
  }

  // Storage buffers held at once, in bytes: now (liveBytes) and at most (peakBytes), for benchmarks.
  createBuffer(bytes) {
    const size = alignUp(Math.max(bytes, 4), 4);
    const buffer = this.device.createBuffer({ size, usage: kStorageUsage() });
    this.liveBytes += size;
    this.peakBytes = Math.max(this.peakBytes, this.liveBytes);
    return this.hold({ kind: 'buffer', buffer, bytes });
  }

  // Frees the handle; the GPU keeps the memory until the work already submitted is done with it.
  release(handle) {
    const object = this.get(handle);
    if (this.defer(() => this.release(handle))) return;
    if (this.encoder) this.flush();  // the gathered commands (an upload's copy, a run) may use it
    if (object.kind === 'buffer') {
      object.buffer.destroy();
      this.liveBytes -= object.buffer.size;
    }
    if (object.kind === 'program') object.uniformBuffer?.destroy();
    this.objects[handle] = null;
    this.freeHandles.push(handle);
  }

  // Copies `data` (a typed array or ArrayBuffer view) into the buffer at `offset` now.
  writeBuffer(handle, offset, data) {
    const { buffer } = this.getBuffer(handle, offset, data.byteLength, 'write');
    if (this.deferred) {  // `data` may change once this returns: queue a copy
      const copy = new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
      this.defer(() => this.writeBuffer(handle, offset, copy));
      return;
    }
    // Writes go through the mapped upload slots, split where one fills, and copies in the current
    // encoder, which keep them in order with the runs and copies around them; when the slots lack
    // the room (or the write is not in whole 4-byte words), queue.writeBuffer, which must flush
    // first. Small writes too: a model's biases and norms come between its large weights, and a
    // flush for each handed the slots back to the GPU half-used (SD 1.5's imports ran at 1.2 GB/s
    // that way on an H100).
    if (data.byteLength % 4 === 0 && offset % 4 === 0 && this.uploadRoomNow() >= data.byteLength) {
      const encoder = this.commandEncoder();
      for (let done = 0; done < data.byteLength;) {
        const slot = this.uploadSlot();
        const bytes = Math.min(kUploadSlotBytes - slot.used, data.byteLength - done);
        slot.view.set(new Uint8Array(data.buffer, data.byteOffset + done, bytes), slot.used);
        encoder.copyBufferToBuffer(slot.buffer, slot.used, buffer, offset + done, bytes);
        slot.used += bytes;
        done += bytes;
      }
      return;
    }
    this.flush();
    // queue.writeBuffer wants a multiple of 4 bytes: pad a short tail with zeros.
    if (data.byteLength % 4 === 0) {
      this.device.queue.writeBuffer(buffer, offset, data.buffer, data.byteOffset, data.byteLength);
    } else {
      const padded = new Uint8Array(alignUp(data.byteLength, 4));
      padded.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      this.device.queue.writeBuffer(buffer, offset, padded);
    }
    // Each write's bytes wait in a staging copy until a submit carries them to the GPU: while
    // weights stream in (gigabytes before the first run), an empty submit every 64 MiB lets Dawn
    // recycle those copies instead of holding all of them at once.
    this.writtenSinceSubmit += data.byteLength;
    if (this.writtenSinceSubmit >= kWriteSubmitBytes) {
      this.device.queue.submit([]);
      this.writtenSinceSubmit = 0;
    }
  }

  // Resolves once upload slots of `bytes` or more are mapped and empty (flushing first), so that
  // the writes of that many bytes that follow take the fast path: a loop uploading weights awaits
  // it between parts (websd_load).
  async uploadRoom(bytes = kUploadSlotBytes * kUploadSlots / 2) {
    this.flush();
    while (this.uploadRoomNow() < Math.min(bytes, kUploadSlotBytes * kUploadSlots)) {
      await Promise.race(this.uploadSlots.filter((s) => !s.view).map((s) => s.ready));
      this.throwError();  // a slot that failed to map stays unmapped
    }
  }

  copyBuffer(from, fromOffset, to, toOffset, bytes) {
    const source = this.getBuffer(from, fromOffset, bytes, 'copy from').buffer;
    const target = this.getBuffer(to, toOffset, bytes, 'copy to').buffer;
    if (this.defer(() => this.copyBuffer(from, fromOffset, to, toOffset, bytes))) return;
    this.commandEncoder().copyBufferToBuffer(source, fromOffset, target, toOffset, bytes);
  }

  // Enqueues a read of `bytes` at `offset`; after the next flush, once the GPU is done, `deliver`
  // gets a Uint8Array that is valid only during the call (copy out what you keep).
  readBuffer(handle, offset, bytes, deliver) {
    const source = this.getBuffer(handle, offset, bytes, 'read').buffer;
    if (this.defer(() => this.readBuffer(handle, offset, bytes, deliver))) return;
    const size = alignUp(Math.max(bytes, 4), 4);
    const staging = this.takeStaging(size);
    this.commandEncoder().copyBufferToBuffer(source, offset, staging, 0, size);
    this.pending += 1;
    this.reads += 1;
    this.afterFlush.push(() => staging.mapAsync(GPUMapMode.READ).then(
        () => {
          try {
            deliver(new Uint8Array(staging.getMappedRange(0, size), 0, bytes));
          } finally {
            staging.unmap();
            this.returnStaging(size, staging);
          }
        },
        (error) => this.fail(`reading ${bytes} bytes back: ${error.message}`)).finally(() => this.done(true)));
  }

  // A compute kernel: WGSL `code`'s entry point `entry`, with one storage binding per entry of
  // `bindings` ('read', 'write' or 'readwrite') at @group(0) @binding(i), then, when
  // `uniformBytes` > 0, a uniform block at @binding(bindings.length). Compiles in the background;
  // its errors name it by `label` (the launch list's kernel name, which is unique where entry
  // points such as 'main' may repeat).
  createKernel(code, entry, bindings, uniformBytes = 0, label = entry) {
    const called = performance.now();
    const entries = bindings.map((access, binding) => ({
      binding,
      visibility: GPUShaderStage.COMPUTE,
      buffer: { type: access === 'read' ? 'read-only-storage' : 'storage' },
    }));
    if (uniformBytes > 0) {
      entries.push({ binding: bindings.length, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } });
    }
    const layout = this.device.createBindGroupLayout({ entries });
    const kernel = { kind: 'kernel', name: label, layout, bindingCount: bindings.length, uniformBytes, pipeline: null };
    const handle = this.hold(kernel);
    this.pending += 1;
    if (this.compiling === 0) this.compileStart = performance.now();
    this.compiling += 1;
    this.kernelsCreated += 1;
    // A WGSL error surfaces in this scope (not as an uncaptured error), so it can name the kernel.
    this.device.pushErrorScope('validation');
    const module = this.device.createShaderModule({ code, label });
    const pipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [layout] });
    const pipeline = this.device.createComputePipelineAsync({ layout: pipelineLayout, compute: { module, entryPoint: entry } });
    const scope = this.device.popErrorScope();
    Promise.allSettled([scope, pipeline]).then(async ([scoped, made]) => {
      const error = scoped.value ?? (made.status === 'rejected' ? made.reason : null);
      if (error) this.fail(`kernel '${label}': ${await compileMessages(module, error)}`);
      else kernel.pipeline = made.value;
    }).finally(() => {
      this.compiling -= 1;
      if (this.compiling === 0) this.compileSeconds += (performance.now() - this.compileStart) / 1000;
      this.done();
    });
    this.kernelCallSeconds += (performance.now() - called) / 1000;
    return handle;
  }

  // A program: launches recorded once, run many times. Each launch is { kernel, bindings:
  // [{ buffer, offset, bytes }], uniforms (Uint8Array, its kernel's uniformBytes), dispatch: [x, y, z] }.
  // Bind groups and one uniform buffer holding every launch's uniforms are made here, not per run.
  createProgram(launches) {
    const alignment = this.device.limits.minUniformBufferOffsetAlignment;
    let uniformTotal = 0;
    const uniformOffsets = launches.map((launch) => {
      const kernel = this.getKernel(launch.kernel);
      if (kernel.uniformBytes === 0) return -1;
      const offset = uniformTotal;
      uniformTotal += alignUp(kernel.uniformBytes, alignment);
      return offset;
    });
    const uniformBuffer = uniformTotal > 0 ? this.device.createBuffer({
      size: uniformTotal, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST, mappedAtCreation: true }) : null;
    const steps = launches.map((launch, index) => {
      const kernel = this.getKernel(launch.kernel);
      if (launch.bindings.length !== kernel.bindingCount) {
        throw new Error(`webgpu: launch ${index} ('${kernel.name}') binds ${launch.bindings.length} buffers, ` +
                        `its kernel takes ${kernel.bindingCount}`);
      }
      const entries = launch.bindings.map((binding, slot) => ({
        binding: slot,
        resource: {
          buffer: this.getBuffer(binding.buffer, binding.offset, binding.bytes, `bind launch ${index} slot ${slot}`).buffer,
          offset: binding.offset,
          size: alignUp(binding.bytes, 4),
        },
      }));
      if (kernel.uniformBytes > 0) {
        if (launch.uniforms.byteLength !== kernel.uniformBytes) {
          throw new Error(`webgpu: launch ${index} ('${kernel.name}') has ${launch.uniforms.byteLength} ` +
                          `uniform bytes, its kernel takes ${kernel.uniformBytes}`);
        }
        new Uint8Array(uniformBuffer.getMappedRange(uniformOffsets[index], alignUp(kernel.uniformBytes, alignment)))
            .set(new Uint8Array(launch.uniforms.buffer, launch.uniforms.byteOffset, launch.uniforms.byteLength));
        entries.push({ binding: kernel.bindingCount,
                       resource: { buffer: uniformBuffer, offset: uniformOffsets[index], size: kernel.uniformBytes } });
      }
      const bindGroup = this.device.createBindGroup({ layout: kernel.layout, entries });
      return { kernel, bindGroup, dispatch: launch.dispatch };
    });
    uniformBuffer?.unmap();
    return this.hold({ kind: 'program', steps, uniformBuffer });
  }

  // Encodes every launch of the program, in order, in one compute pass of the current encoder.
  // While one of its kernels is compiling, the run (and every command after it) is queued instead.
  runProgram(handle, deliverTimes = null) {
    const program = this.get(handle);
    if (program.kind !== 'program') throw new Error(`webgpu: handle ${handle} is not a program`);
    if (this.defer(() => this.runProgram(handle, deliverTimes))) return;
    const waiting = program.steps.find((step) => !step.kernel.pipeline);
    if (waiting && this.compiling > 0) {
      this.deferred = [() => this.runProgram(handle, deliverTimes)];
      this.blockedOn = program;
      return;
    }
    if (waiting) {
      throw new Error(`webgpu: kernel '${waiting.kernel.name}' did not compile (poll or settled reported why)`);
    }
    if (deliverTimes) {
      this.runTimed(program, deliverTimes);
      return;
    }
    const pass = this.commandEncoder().beginComputePass();
    for (const step of program.steps) {
      pass.setPipeline(step.kernel.pipeline);
      pass.setBindGroup(0, step.bindGroup);
      pass.dispatchWorkgroups(step.dispatch[0], step.dispatch[1], step.dispatch[2]);
    }
    pass.end();
  }

  // Whether runProgram can time each launch (the device has 'timestamp-query').
  canTime() {
    return this.device.features.has('timestamp-query');
  }

  // Each launch in its own compute pass between two GPU timestamps (profiling: passes cost a
  // little more than one pass of many dispatches); `deliver` gets the seconds of each launch once
  // the GPU is done, like a read.
  runTimed(program, deliver) {
    if (!this.canTime()) throw new Error("webgpu: the device has no 'timestamp-query': launches cannot be timed");
    const count = program.steps.length * 2;
    const querySet = this.device.createQuerySet({ type: 'timestamp', count });
    const resolved = this.device.createBuffer({ size: count * 8, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    const encoder = this.commandEncoder();
    program.steps.forEach((step, index) => {
      const pass = encoder.beginComputePass({
        timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * index, endOfPassWriteIndex: 2 * index + 1 },
      });
      pass.setPipeline(step.kernel.pipeline);
      pass.setBindGroup(0, step.bindGroup);
      pass.dispatchWorkgroups(step.dispatch[0], step.dispatch[1], step.dispatch[2]);
      pass.end();
    });
    encoder.resolveQuerySet(querySet, 0, count, resolved, 0);
    const staging = this.takeStaging(count * 8);
    encoder.copyBufferToBuffer(resolved, 0, staging, 0, count * 8);
    this.pending += 1;
    this.reads += 1;
    this.afterFlush.push(() => staging.mapAsync(GPUMapMode.READ).then(
        () => {
          try {
            const ticks = new BigInt64Array(staging.getMappedRange(0, count * 8).slice(0));
            const seconds = [];
            for (let i = 0; i < count; i += 2) seconds.push(Math.max(0, Number(ticks[i + 1] - ticks[i])) * 1e-9);
            deliver(seconds);
          } finally {
            staging.unmap();
            this.returnStaging(count * 8, staging);
            querySet.destroy();
            resolved.destroy();
          }
        },
        (error) => this.fail(`reading launch times back: ${error.message}`)).finally(() => this.done(true)));
  }

  // Submits what was gathered since the last flush, then starts the reads that wait on it.
  // Commands queued behind compilation are flushed when they are replayed.
  flush() {
    if (this.deferred) return;
    if (this.encoder) {
      // The upload slots this encoder copies from go to the GPU unmapped, and come back mapped.
      const sent = this.uploadSlots.filter((slot) => slot.view && slot.used > 0);
      for (const slot of sent) {
        slot.buffer.unmap();
        slot.view = null;
      }
      this.device.queue.submit([this.encoder.finish()]);
      this.encoder = null;
      for (const slot of sent) {
        slot.ready = slot.buffer.mapAsync(GPUMapMode.WRITE).then(() => {
          slot.view = new Uint8Array(slot.buffer.getMappedRange());
          slot.used = 0;
        }, (error) => this.fail(`mapping an upload buffer: ${error.message}`));
      }
    }
    const started = this.afterFlush;
    this.afterFlush = [];
    for (const start of started) start();
  }

  // True when every read enqueued so far has been delivered and no command waits on compilation
  // (flush first); kernels no run has needed yet may still compile (settled() waits for them).
  // Throws the first GPU error seen, once.
  poll() {
    this.throwError();
    return this.reads === 0 && this.afterFlush.length === 0 && !this.deferred;
  }

  // Flushes, then resolves when poll() would return true (rejects with the first GPU error).
  async settled() {
    this.flush();
    while (this.pending > 0) await new Promise((resolve) => this.waiters.push(resolve));
    this.throwError();
  }

  // Flushes, then resolves once every read enqueued so far is delivered and no command waits on
  // compilation: what a caller that waits for its results needs, while kernels that no run has
  // needed yet may still compile (a first image's UNet steps start before the VAE's pipelines).
  async drained() {
    this.flush();
    while (!this.poll()) await new Promise((resolve) => this.waiters.push(resolve));
  }

  // settled(), then until the GPU has finished all the work submitted (settled() alone returns at
  // once when nothing is read back): for timing work whose outputs stay on the GPU.
  async idle() {
    await this.settled();
    await this.device.queue.onSubmittedWorkDone();
    this.throwError();
  }

  destroy() {
    this.device.destroy();
  }

  // Internals.
  commandEncoder() {
    return this.encoder ??= this.device.createCommandEncoder();
  }

  hold(object) {
    const handle = this.freeHandles.pop() ?? this.objects.length;
    this.objects[handle] = object;
    return handle;
  }

  get(handle) {
    const object = this.objects[handle];
    if (!object) throw new Error(`webgpu: ${handle} is not a live handle`);
    return object;
  }

  getBuffer(handle, offset, bytes, what) {
    const object = this.get(handle);
    if (object.kind !== 'buffer') throw new Error(`webgpu: ${what}: handle ${handle} is not a buffer`);
    if (offset % 4 !== 0) throw new Error(`webgpu: ${what}: offset ${offset} is not a multiple of 4`);
    if (offset < 0 || bytes < 0 || offset + bytes > object.bytes) {
      throw new Error(`webgpu: ${what}: bytes [${offset}, ${offset + bytes}) lie outside a buffer of ${object.bytes}`);
    }
    return object;
  }

  getKernel(handle) {
    const object = this.get(handle);
    if (object.kind !== 'kernel') throw new Error(`webgpu: handle ${handle} is not a kernel`);
    return object;
  }

  // The bytes the upload slots take now: what the mapped ones have left, and those not made yet.
  uploadRoomNow() {
    const left = this.uploadSlots.reduce((sum, slot) => sum + (slot.view ? kUploadSlotBytes - slot.used : 0), 0);
    return left + (kUploadSlots - this.uploadSlots.length) * kUploadSlotBytes;
  }

  // A mapped upload slot with room left, made while fewer than kUploadSlots exist (uploadRoomNow
  // said there is one).
  uploadSlot() {
    const open = this.uploadSlots.find((slot) => slot.view && slot.used < kUploadSlotBytes);
    if (open) return open;
    const buffer = this.device.createBuffer({ size: kUploadSlotBytes, usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
                                              mappedAtCreation: true, label: 'websd upload staging' });
    const slot = { buffer, view: new Uint8Array(buffer.getMappedRange()), used: 0, ready: null };
    this.uploadSlots.push(slot);
    return slot;
  }

  takeStaging(size) {
    const idle = this.stagingPool.get(size);
    if (idle?.length) return idle.pop();
    return this.device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  returnStaging(size, buffer) {
    if (!this.stagingPool.has(size)) this.stagingPool.set(size, []);
    this.stagingPool.get(size).push(buffer);
  }

  // Queues `command` when commands wait on compilation (true), else leaves it to the caller (false).
  defer(command) {
    if (!this.deferred) return false;
    this.deferred.push(command);
    return true;
  }

  // Runs the queued commands in their order once every kernel has compiled (or failed to: a run of a
  // failed kernel is then an error kept for poll), and submits them.
  replay() {
    const commands = this.deferred;
    this.deferred = null;
    for (const command of commands) {
      try {
        command();
      } catch (error) {
        this.fail(error.message.replace(/^webgpu: /, ''));
      }
    }
    this.flush();
  }

  // A read delivered (`read`) or a compilation finished. The queued commands replay once the run
  // they wait behind has all its kernels (or nothing compiles any more: a failed kernel's run then
  // reports it); a later run whose kernels still compile queues again. Waiters re-check.
  done(read = false) {
    this.pending -= 1;
    if (read) this.reads -= 1;
    if (this.deferred && (this.compiling === 0 || this.blockedOn.steps.every((step) => step.kernel.pipeline))) {
      this.blockedOn = null;
      this.replay();
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  fail(message) {
    this.error ??= new Error(`webgpu: ${this.adapterName}: ${message}`);
  }

  throwError() {
    if (!this.error) return;
    const error = this.error;
    this.error = null;
    throw error;
  }
}

// An uncaptured GPU error as the bridge reports it: running out of memory is named so (a page
// offers a smaller size for it), anything else is a GPU error with the device's message.
export function gpuErrorMessage(error) {
  if (error?.constructor?.name === 'GPUOutOfMemoryError') return `the GPU is out of memory: ${error.message}`;
  return `GPU error: ${error?.message}`;
}

function alignUp(value, alignment) {
  return Math.ceil(value / alignment) * alignment;
}

function describeAdapter(adapter) {
  const info = adapter.info ?? {};
  return info.description || [info.vendor, info.architecture, info.device].filter(Boolean).join(' ') || 'adapter';
}

// The compiler's messages for a shader that failed to build (line:column: message), else the error's.
async function compileMessages(module, error) {
  const info = await module.getCompilationInfo?.();
  const errors = (info?.messages ?? []).filter((m) => m.type === 'error');
  if (errors.length === 0) return error.message;
  return errors.map((m) => `${m.lineNum}:${m.linePos}: ${m.message}`).join('; ');
}
