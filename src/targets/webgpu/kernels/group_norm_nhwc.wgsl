// group_norm_nhwc: out[n, p, c] = (x[n, p, c] - mean[n, g]) * rstd[n, g] * gamma[c] + beta[c],
// then SiLU when SILU, for x [N, H, W, C] (p = h * W + w, HW = H * W pixels), g = c / Cg, Cg = C / G;
// mean and the biased variance over the HW * Cg elements of (n, g); rstd = 1 / sqrt(var + eps).
// Statistics in f32 without E[x^2] - E[x]^2: each chunk of a group takes its own mean, then the
// sum of squared deviations from it (two passes over the chunk, the second from cache), and the
// chunks' (count, mean, M2) merge with Chan's parallel formula. Three launches per node, in order:
//   1. gn_partial: one workgroup per (chunk, g, n): workspace[((n*G + g)*n_chunks + chunk)*2 + {0,1}]
//      = (mean, M2) of the chunk's pixels [chunk*chunk_pixels, ...) x its Cg channels.
//   2. gn_reduce: one workgroup per (n, g): merges its n_chunks partials;
//      workspace[stats_off + (n*G + g)*2 + {0,1}] = (mean, rstd).
//   3. gn_apply: one thread per element: normalizes, scales, shifts (and SiLU).
//
// Constants (prepended as `const NAME: TYPE = VALUE;`), defaults in brackets: SILU: bool [false].
//   256 threads per workgroup in every launch.
// Bindings (@group(0)): 0 x: read, 1 gamma: read [C], 2 beta: read [C], 3 out: read_write,
//   4 workspace: read_write (stats_off + 2*N*G floats), 5 params: uniform Params. Every launch binds
//   the same five buffers.
// Params (4-byte fields, in order): N, HW, C, G, Cg, chunk_pixels, n_chunks, eps (f32),
//   total (= N*HW*C), stats_off (= 2*N*G*n_chunks).
//   chunk_pixels = max(ceil(2048 / Cg), ceil(HW / 65535)), n_chunks = ceil(HW / chunk_pixels).
// Dispatch: gn_partial (n_chunks, G, N); gn_reduce fold(N*G); gn_apply fold(ceil(total / 256)),
//   where fold(g) = (g, 1, 1) when g <= 65535, else (ceil(g / y), y, 1) with y = ceil(g / 65535);
//   the kernel's linear workgroup index is wg.x + wg.y * num_workgroups.x.

struct Params {
  N: u32, HW: u32, C: u32, G: u32,
  Cg: u32, chunk_pixels: u32, n_chunks: u32, eps: f32,
  total: u32, stats_off: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> gamma: array<f32>;
@group(0) @binding(2) var<storage, read> beta: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read_write> workspace: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;

const WG: u32 = 256u;
var<workgroup> red_n: array<f32, WG>;
var<workgroup> red_mean: array<f32, WG>;
var<workgroup> red_m2: array<f32, WG>;

// The workgroup's sum of `v` (every thread gets it).
fn workgroup_sum(t: u32, v: f32) -> f32 {
  red_mean[t] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) { red_mean[t] += red_mean[t + s]; }
    workgroupBarrier();
  }
  let total = red_mean[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(WG)
fn gn_partial(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let chunk = wg.x;
  let g = wg.y;
  let n = wg.z;
  let p0 = chunk * params.chunk_pixels;
  let pixels = min(params.chunk_pixels, params.HW - p0);
  let Cg = params.Cg;
  let count = pixels * Cg;
  let base = (n * params.HW + p0) * params.C + g * Cg;
  var s = 0.0;
  for (var e = t; e < count; e += WG) { s += x[base + (e / Cg) * params.C + e % Cg]; }
  let mean = workgroup_sum(t, s) / f32(count);
  var s2 = 0.0;
  for (var e = t; e < count; e += WG) {
    let d = x[base + (e / Cg) * params.C + e % Cg] - mean;
    s2 = fma(d, d, s2);
  }
  let m2 = workgroup_sum(t, s2);
  if (t == 0u) {
    let o = ((n * params.G + g) * params.n_chunks + chunk) * 2u;
    workspace[o] = mean;
    workspace[o + 1u] = m2;
  }
}

// Chan et al.: (na, ma, qa) + (nb, mb, qb) -> (n, m, q), counts as f32 (exact below 2^24).
fn merge(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
  let n = a.x + b.x;
  if (n == 0.0) { return a; }
  let delta = b.y - a.y;
  let f = b.x / n;
  return vec3<f32>(n, a.y + delta * f, a.z + b.z + delta * delta * a.x * f);
}

@compute @workgroup_size(WG)
fn gn_reduce(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) t: u32) {
  let pair = wg.x + wg.y * nwg.x;
  if (pair >= params.N * params.G) { return; }
  var acc = vec3<f32>(0.0);
  for (var chunk = t; chunk < params.n_chunks; chunk += WG) {
    let o = (pair * params.n_chunks + chunk) * 2u;
    let pixels = min(params.chunk_pixels, params.HW - chunk * params.chunk_pixels);
    acc = merge(acc, vec3<f32>(f32(pixels * params.Cg), workspace[o], workspace[o + 1u]));
  }
  red_n[t] = acc.x;
  red_mean[t] = acc.y;
  red_m2[t] = acc.z;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) {
      let m = merge(vec3<f32>(red_n[t], red_mean[t], red_m2[t]),
                    vec3<f32>(red_n[t + s], red_mean[t + s], red_m2[t + s]));
      red_n[t] = m.x;
      red_mean[t] = m.y;
      red_m2[t] = m.z;
    }
    workgroupBarrier();
  }
  if (t == 0u) {
    let o = params.stats_off + pair * 2u;
    workspace[o] = red_mean[0];
    workspace[o + 1u] = inverseSqrt(red_m2[0] / red_n[0] + params.eps);
  }
}

@compute @workgroup_size(WG)
fn gn_apply(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * WG + t;
  if (idx >= params.total) { return; }
  let c = idx % params.C;
  let n = idx / (params.HW * params.C);
  let o = params.stats_off + (n * params.G + c / params.Cg) * 2u;
  var y = (x[idx] - workspace[o]) * workspace[o + 1u] * gamma[c] + beta[c];
  if (SILU) { y = y / (1.0 + exp(-y)); }
  out[idx] = y;
}
