// upsample_nearest_nhwc: x [N, H, W, C] -> out [N, H*S, W*S, C], out[n, oh, ow, c] = x[n, oh / S, ow / S, c]
// (integer scale S; SD's decoder and UNet use S = 2).
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 x: read, 1 out: read_write, 2 params: uniform Params.
// Params (4-byte fields, in order): total (= N*H*S*W*S*C), H, W, C, scale.
// Dispatch: fold(ceil(total / 256)) (see permute.wgsl).

struct Params { total: u32, H: u32, W: u32, C: u32, scale: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn upsample_nearest_nhwc(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                         @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  if (idx >= params.total) { return; }
  let C = params.C;
  let OW = params.W * params.scale;
  let OH = params.H * params.scale;
  let c = idx % C;
  let p = idx / C;
  let ow = p % OW;
  let rest = p / OW;
  let oh = rest % OH;
  let n = rest / OH;
  out[idx] = x[((n * params.H + oh / params.scale) * params.W + ow / params.scale) * C + c];
}
