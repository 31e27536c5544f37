// pad with constant zero, rank <= 6 (padded with leading axes of 1, before = 0): out dims
// od_a = id_a + before_a + after_a; out[c] = x[c - before] where every axis is inside the input, else 0.
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 x: read, 1 out: read_write, 2 params: uniform Params.
// Params (4-byte fields, in order): total (output elements), od0..od5 (output dims),
//   id0..id5 (input dims), b0..b5 (elements before, per axis).
// Dispatch: fold(ceil(total / 256)) (see permute.wgsl).

struct Params {
  total: u32,
  od0: u32, od1: u32, od2: u32, od3: u32, od4: u32, od5: u32,
  id0: u32, id1: u32, id2: u32, id3: u32, id4: u32, id5: u32,
  b0: u32, b1: u32, b2: u32, b3: u32, b4: u32, b5: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn pad(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  if (idx >= params.total) { return; }
  let od = array<u32, 6>(params.od0, params.od1, params.od2, params.od3, params.od4, params.od5);
  let id = array<u32, 6>(params.id0, params.id1, params.id2, params.id3, params.id4, params.id5);
  let bf = array<u32, 6>(params.b0, params.b1, params.b2, params.b3, params.b4, params.b5);
  var rest = idx;
  var src = 0u;
  var stride = 1u;
  var inside = true;
  for (var a = 5i; a >= 0i; a--) {
    let c = rest % od[a];
    rest /= od[a];
    let ci = i32(c) - i32(bf[a]);
    inside = inside && ci >= 0i && ci < i32(id[a]);
    src += u32(max(ci, 0i)) * stride;
    stride *= id[a];
  }
  var v = 0.0;
  if (inside) { v = x[src]; }
  out[idx] = v;
}
