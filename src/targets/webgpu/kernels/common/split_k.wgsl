// Split-K, shared by every GEMM template (matmul and conv2d_nhwc, each tier's form): where an
// output has too few tiles to fill the GPU (8x8 and 16x16 latents of 1280 channels, the time
// embedding's two rows), SPLIT_K workgroups share each tile, each summing one range of depths
// into its own slice of `workspace`; a second launch (the including io snippet's splitk_reduce)
// adds a tile's slices and applies the epilogue. SPLIT_K = 1: one launch, the epilogue in place
// (the compiler then drops the workspace binding).
// The including template defines BK (each split's depth is whole BK steps, so a step never
// straddles two splits) and binds `workspace: array<f32>` (SPLIT_K outputs per output).

var<private> split: u32;  // this workgroup's split (store_out's slice of the workspace)

// The depths [x, y) of split `part`: ceil(K / SPLIT_K) rounded up to whole steps of BK each, the
// last cut at K. From the entry point's lets, not from the private `split`: reads of private
// variables count as non-uniform, and the GEMM loop over the range holds barriers.
fn split_range(part: u32, K: u32) -> vec2<u32> {
  let depth = ((K + SPLIT_K - 1u) / SPLIT_K + BK - 1u) / BK * BK;
  let begin = min(part * depth, K);
  return vec2<u32>(begin, min(begin + depth, K));
}

// The output splitk_reduce's invocation adds: 256 per workgroup over a folded grid.
fn reduce_index(wg: vec3<u32>, nwg: vec3<u32>, lane: u32) -> u32 {
  return (wg.x + wg.y * nwg.x) * 256u + lane;
}

// Output i's partial sums (of `total` outputs per split) added over the splits.
fn split_sum(i: u32, total: u32) -> f32 {
  var sum = 0.0;
  for (var s = 0u; s < SPLIT_K; s++) { sum += workspace[s * total + i]; }
  return sum;
}
