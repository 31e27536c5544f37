// concat of two inputs along one axis: with a viewed as [outer, len_a, inner] and b as
// [outer, len_b, inner], out [outer, len_a + len_b, inner]:
// out[o, i, r] = i < len_a ? a[(o * len_a + i) * inner + r] : b[(o * len_b + i - len_a) * inner + r].
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 a: read, 1 b: read, 2 out: read_write, 3 params: uniform Params.
// Params (4-byte fields, in order): total (= outer * (len_a + len_b) * inner), inner, len_a, len_b.
// Dispatch: fold(ceil(total / 256)) (see permute.wgsl).

struct Params { total: u32, inner: u32, len_a: u32, len_b: u32 }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(256)
fn concat(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  if (idx >= params.total) { return; }
  let r = idx % params.inner;
  let rest = idx / params.inner;
  let len = params.len_a + params.len_b;
  let i = rest % len;
  let o = rest / len;
  if (i < params.len_a) {
    out[idx] = a[(o * params.len_a + i) * params.inner + r];
  } else {
    out[idx] = b[(o * params.len_b + i - params.len_a) * params.inner + r];
  }
}
