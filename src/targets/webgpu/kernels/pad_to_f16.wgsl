// pad_to_f16: an NHWC activation (f32) as f16, zero-padded by `pad` pixels on each side of H and W:
// out [N, H + 2 pad, W + 2 pad, C], the operand the subgroup-matrix tier's _a16 GEMMs read as whole
// fragments (a convolution's input; with pad 0 and N = H = 1 a matmul's x of W rows of C). Values
// past f16's range are clamped to its largest finite one (WGSL leaves their conversion undefined:
// SwiftShader wrote NaNs).
//
// Constants: none (256 threads per workgroup, one pair of channels per thread).
// Bindings (@group(0)): 0 x: read, 1 out: read_write (u32: two f16 each), 2 params: uniform Params.
// Params (4-byte fields, in order): N, H, W, C (even), pad, total (output pairs, N (H + 2 pad)
//   (W + 2 pad) C / 2).
// Dispatch: fold(ceil(total / 256)) (see permute.wgsl).

struct Params {
  N: u32, H: u32, W: u32, C: u32,
  pad: u32, total: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn pad_to_f16(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) t: u32) {
  let i = (wg.x + wg.y * nwg.x) * 256u + t;
  if (i >= params.total) { return; }
  let e = 2u * i;  // C is even: a pair never straddles two pixels
  let c = e % params.C;
  let pixel = e / params.C;
  let wp = params.W + 2u * params.pad;
  let hp = params.H + 2u * params.pad;
  let w = pixel % wp;
  let h = (pixel / wp) % hp;
  let n = pixel / (wp * hp);
  var v = vec2<f32>(0.0);
  if (w >= params.pad && w < params.W + params.pad && h >= params.pad && h < params.H + params.pad) {
    let src = ((n * params.H + h - params.pad) * params.W + w - params.pad) * params.C + c;
    v = clamp(vec2<f32>(x[src], x[src + 1u]), vec2<f32>(-65504.0), vec2<f32>(65504.0));
  }
  out[i] = pack2x16float(v);
}
