// geglu: x [rows, 2F] -> out[r, f] = x[r, f] * gelu(x[r, F + f]), GELU exact (erf form, as torch's
// default): gelu(g) = 0.5 * g * (1 + erf(g / sqrt(2))), erf to about 1e-7 absolute in f32.
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 x: read [rows, 2F], 1 out: read_write [rows, F], 2 params: uniform Params.
// Params (4-byte fields, in order): total (= rows * F), F.
// Dispatch: fold(ceil(total / 256)): (g, 1, 1) when g <= 65535, else (ceil(g / y), y, 1) with
//   y = ceil(g / 65535); element = (wg.x + wg.y * num_workgroups.x) * 256 + local index.

struct Params { total: u32, F: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

// requires: erf (common/erf.wgsl: fn erf_f32, to about 1e-7 absolute)

@compute @workgroup_size(256)
fn geglu(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  if (idx >= params.total) { return; }
  let F = params.F;
  let r = idx / F;
  let f = idx % F;
  let a = x[r * 2u * F + f];
  let g = x[r * 2u * F + F + f];
  out[idx] = a * (0.5 * g * (1.0 + erf_f32(g * 0.70710678118654752)));
}
