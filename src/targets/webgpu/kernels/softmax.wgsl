// softmax over the last axis: out[r, j] = exp(x[r, j] - max_r) / sum_j exp(x[r, j] - max_r), in f32.
//
// Constants: none (256 threads per workgroup; one workgroup per row).
// Bindings (@group(0)): 0 x: read [rows, D], 1 out: read_write [rows, D], 2 params: uniform Params.
// Params (4-byte fields, in order): rows, D.
// Dispatch: fold(rows): (rows, 1, 1) when rows <= 65535, else (ceil(rows / y), y, 1) with
//   y = ceil(rows / 65535); row = wg.x + wg.y * num_workgroups.x.

struct Params { rows: u32, D: u32 }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

const WG: u32 = 256u;
var<workgroup> red: array<f32, WG>;

@compute @workgroup_size(WG)
fn softmax(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) t: u32) {
  let r = wg.x + wg.y * nwg.x;
  if (r >= params.rows) { return; }
  let D = params.D;
  let base = r * D;
  var m = -3.0e38;
  for (var d = t; d < D; d += WG) { m = max(m, x[base + d]); }
  red[t] = m;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) { red[t] = max(red[t], red[t + s]); }
    workgroupBarrier();
  }
  m = red[0];
  workgroupBarrier();
  var sum = 0.0;
  for (var d = t; d < D; d += WG) { sum += exp(x[base + d] - m); }
  red[t] = sum;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) { red[t] += red[t + s]; }
    workgroupBarrier();
  }
  let inv = 1.0 / red[0];
  for (var d = t; d < D; d += WG) { out[base + d] = exp(x[base + d] - m) * inv; }
}
