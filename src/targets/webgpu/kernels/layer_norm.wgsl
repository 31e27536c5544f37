// layer_norm: out[r, :] = (x[r, :] - mean_r) / sqrt(var_r + eps) * gamma + beta over the last axis
// (rows = the product of the leading dims, D = the last). Two passes in f32: the mean, then the
// mean of squared deviations from it (biased variance, as torch), each a workgroup tree sum.
//
// Constants: none (256 threads per workgroup; one workgroup per row).
// Bindings (@group(0)): 0 x: read [rows, D], 1 gamma: read [D], 2 beta: read [D],
//   3 out: read_write [rows, D], 4 params: uniform Params.
// Params (4-byte fields, in order): rows, D, eps (f32).
// Dispatch: fold(rows): (rows, 1, 1) when rows <= 65535, else (ceil(rows / y), y, 1) with
//   y = ceil(rows / 65535); row = wg.x + wg.y * num_workgroups.x.

struct Params { rows: u32, D: u32, eps: f32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

const WG: u32 = 256u;
var<workgroup> red: array<f32, WG>;

fn workgroup_sum(t: u32, v: f32) -> f32 {
  red[t] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) { red[t] += red[t + s]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(WG)
fn layer_norm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
  let r = wg.x + wg.y * nwg.x;
  if (r >= params.rows) { return; }
  let D = params.D;
  let base = r * D;
  var s = 0.0;
  for (var d = t; d < D; d += WG) { s += x[base + d]; }
  let mean = workgroup_sum(t, s) / f32(D);
  var s2 = 0.0;
  for (var d = t; d < D; d += WG) {
    let v = x[base + d] - mean;
    s2 = fma(v, v, s2);
  }
  let rstd = inverseSqrt(workgroup_sum(t, s2) / f32(D) + params.eps);
  for (var d = t; d < D; d += WG) { out[base + d] = (x[base + d] - mean) * rstd * gamma[d] + beta[d]; }
}
