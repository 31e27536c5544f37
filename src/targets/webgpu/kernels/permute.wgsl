// permute: out = x.permute(perm) for rank <= 6 (padded with leading axes of 1):
// out[o0..o5] = x[sum_a o_a * s_a] with d_a the output's dims and s_a the input's stride of the
// axis that becomes output axis a (s_a = in_stride[perm[a]]).
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 x: read, 1 out: read_write, 2 params: uniform Params.
// Params (4-byte fields, in order): total, d0..d5 (output dims), s0..s5 (input strides per output axis).
// Dispatch: fold(ceil(total / 256)): (g, 1, 1) when g <= 65535, else (ceil(g / y), y, 1) with
//   y = ceil(g / 65535); element = (wg.x + wg.y * num_workgroups.x) * 256 + local index.

struct Params {
  total: u32,
  d0: u32, d1: u32, d2: u32, d3: u32, d4: u32, d5: u32,
  s0: u32, s1: u32, s2: u32, s3: u32, s4: u32, s5: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn permute(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  if (idx >= params.total) { return; }
  var rest = idx;
  var src = (rest % params.d5) * params.s5; rest /= params.d5;
  src += (rest % params.d4) * params.s4; rest /= params.d4;
  src += (rest % params.d3) * params.s3; rest /= params.d3;
  src += (rest % params.d2) * params.s2; rest /= params.d2;
  src += (rest % params.d1) * params.s1; rest /= params.d1;
  src += rest * params.s0;
  out[idx] = x[src];
}
