// image_to_rgba: the VAE's image [1, 3, H, W] in [-1, 1] -> out [H, W, 4] f32 pixel values:
// out[y, x, ch] = 255 * clamp(image[ch, y, x] / 2 + 0.5, 0, 1) for ch < 3, out[y, x, 3] = 255.
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 image: read, 1 out: read_write, 2 params: uniform Params.
// Params (4-byte fields, in order): H, W.
// Dispatch: fold(ceil(H * W * 4 / 256)) (see permute.wgsl).

struct Params { H: u32, W: u32 }

@group(0) @binding(0) var<storage, read> image: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn image_to_rgba(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                 @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  let HW = params.H * params.W;
  if (idx >= HW * 4u) { return; }
  let ch = idx % 4u;
  let p = idx / 4u;
  var v = 255.0;
  if (ch < 3u) { v = 255.0 * clamp(image[ch * HW + p] * 0.5 + 0.5, 0.0, 1.0); }
  out[idx] = v;
}
