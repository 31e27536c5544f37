// slice: one axis, start <= end, step 1. With the input viewed as [outer, len_in, inner] (inner =
// the product of the dims after the axis): out[o, i, r] = x[(o * len_in + start + i) * inner + r],
// out [outer, len_out = end - start, inner].
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 x: read, 1 out: read_write, 2 params: uniform Params.
// Params (4-byte fields, in order): total (= outer * len_out * inner), inner, len_out, len_in, start.
// Dispatch: fold(ceil(total / 256)) (see permute.wgsl).

struct Params { total: u32, inner: u32, len_out: u32, len_in: u32, start: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn slice(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  if (idx >= params.total) { return; }
  let r = idx % params.inner;
  let rest = idx / params.inner;
  let i = rest % params.len_out;
  let o = rest / params.len_out;
  out[idx] = x[(o * params.len_in + params.start + i) * params.inner + r];
}
