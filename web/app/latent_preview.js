// The live preview of a running generation: after every step the runtime gives the clean latents
// that step predicts (websd_preview_latents: x0, [1, 4, h, w], scaled as the UNet's), and the GPU
// maps each latent pixel to a colour with the cheap linear approximation of Stable Diffusion's VAE
// decoder (a 4x3 matrix, then [-1, 1] -> [0, 1]) into RGBA8, read back (64x64 pixels for a
// 512x512 image: 16 KB) and put into a 2D canvas of the latent size that CSS scales up. One latent
// pixel is 8x8 image pixels: a preview costs one tiny dispatch, not a VAE decode. (A 'webgpu'
// canvas would skip the read-back, but headless Chromium on SwiftShader loses the whole device
// when one is configured, and a lost device would end the generation itself.)

// The SD 1.x/2.x (kl-f8, 4 channel) latent-to-RGB factors that previews commonly use (an empirical
// least-squares fit published with ComfyUI's latent formats): row c gives channel c's weight in
// R, G and B.
export const KL_F8_LATENT_RGB = [
  [0.3512, 0.2297, 0.3227],
  [0.325, 0.4974, 0.235],
  [-0.2829, 0.1762, 0.2721],
  [-0.212, -0.2616, -0.7177],
];

const SHADER = /* wgsl */ `
struct Params { width: u32, height: u32, plane: u32, unused: u32 }
@group(0) @binding(0) var<storage, read> latents: array<f32>;
@group(0) @binding(1) var<storage, read_write> pixels: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
// Rows R, G, B: the weights of latent channels 0..3.
@group(0) @binding(3) var<uniform> factors: array<vec4<f32>, 3>;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  if (id.x >= params.width || id.y >= params.height) { return; }
  let at = id.y * params.width + id.x;
  let l = vec4<f32>(latents[at], latents[params.plane + at], latents[2u * params.plane + at],
                    latents[3u * params.plane + at]);
  let rgb = vec3<f32>(dot(factors[0], l), dot(factors[1], l), dot(factors[2], l));
  pixels[at] = pack4x8unorm(vec4<f32>(clamp((rgb + 1.0) * 0.5, vec3<f32>(0.0), vec3<f32>(1.0)), 1.0));
}`;

// The same mapping on the CPU (tests compare the GPU's pixels with it): RGBA bytes, row-major.
export function latentPreviewOnCpu(latents, height, width, factors = KL_F8_LATENT_RGB) {
  const plane = height * width;
  const rgba = new Uint8ClampedArray(plane * 4);
  for (let at = 0; at < plane; ++at) {
    for (let c = 0; c < 3; ++c) {
      let value = 0;
      for (let k = 0; k < 4; ++k) value += factors[k][c] * latents[k * plane + at];
      rgba[at * 4 + c] = Math.round(Math.min(1, Math.max(0, (value + 1) * 0.5)) * 255);
    }
    rgba[at * 4 + 3] = 255;
  }
  return rgba;
}

export class LatentPreview {
  // `canvas`: an HTMLCanvasElement or OffscreenCanvas shown to the user.
  constructor(device, canvas, factors = KL_F8_LATENT_RGB) {
    this.device = device;
    this.canvas = canvas;
    this.context = canvas.getContext('2d');
    this.pipeline = device.createComputePipeline({
      label: 'latent preview', layout: 'auto',
      compute: { module: device.createShaderModule({ code: SHADER, label: 'latent preview' }), entryPoint: 'main' },
    });
    const rows = new Float32Array(12);
    for (let c = 0; c < 3; ++c) for (let k = 0; k < 4; ++k) rows[c * 4 + k] = factors[k][c];
    this.factors = device.createBuffer({ size: rows.byteLength, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(this.factors, 0, rows);
    this.params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    this.size = null;  // { width, height } of the buffers held
    this.last = null;  // the RGBA of the last draw
  }

  // Latent-sized buffers, made again when the size changes.
  buffers(width, height) {
    if (this.size?.width === width && this.size?.height === height) return;
    for (const buffer of [this.latents, this.pixels, this.staging]) buffer?.destroy();
    this.latents = this.device.createBuffer({ size: 16 * width * height, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    this.pixels = this.device.createBuffer({ size: 4 * width * height, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
    this.staging = this.device.createBuffer({ size: 4 * width * height, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    this.bindGroup = this.device.createBindGroup({
      layout: this.pipeline.getBindGroupLayout(0),
      entries: [this.latents, this.pixels, this.params, this.factors].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    this.canvas.width = width;
    this.canvas.height = height;
    this.size = { width, height };
  }

  // Draws `latents` (Float32Array of [1, 4, height, width]) into the canvas; resolves once shown.
  // Its commands go to the device's queue on their own (the runtime's are gathered until it flushes
  // them), so a preview does not wait for the next step. A GPU error of the preview's own commands
  // rejects the draw instead of reaching the device's error handler, which would fail the run.
  async draw(latents, height, width) {
    const { device } = this;
    // Scopes pushed and popped with no await between them hold only these commands' errors.
    device.pushErrorScope('validation');
    device.pushErrorScope('out-of-memory');
    this.record(latents, height, width);
    const errors = await Promise.all([device.popErrorScope(), device.popErrorScope()]);
    const error = errors.find((e) => e);
    if (error) throw new Error(error.message);
    await this.staging.mapAsync(GPUMapMode.READ);
    const rgba = new Uint8ClampedArray(this.staging.getMappedRange().slice(0));
    this.staging.unmap();
    this.context.putImageData(new ImageData(rgba, width, height), 0, 0);
    this.last = { width, height, rgba };
  }

  // Frees the GPU buffers (a drawer replaced by one for another canvas).
  destroy() {
    for (const buffer of [this.latents, this.pixels, this.staging, this.params, this.factors]) buffer?.destroy();
    this.size = null;
  }

  // Queues the upload, the dispatch and the copy into the read-back buffer.
  record(latents, height, width) {
    this.buffers(width, height);
    const { device } = this;
    device.queue.writeBuffer(this.latents, 0, latents.buffer, latents.byteOffset, 16 * width * height);
    device.queue.writeBuffer(this.params, 0, new Uint32Array([width, height, width * height, 0]));
    const encoder = device.createCommandEncoder({ label: 'latent preview' });
    const pass = encoder.beginComputePass();
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bindGroup);
    pass.dispatchWorkgroups(Math.ceil(width / 8), Math.ceil(height / 8));
    pass.end();
    encoder.copyBufferToBuffer(this.pixels, 0, this.staging, 0, 4 * width * height);
    device.queue.submit([encoder.finish()]);
  }
}
