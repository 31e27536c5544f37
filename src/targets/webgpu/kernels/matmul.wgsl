// matmul: out[b, m, n] = act(sum_k x[b, m, k] * w[b, n, k] + bias[n]) + residual[b, m, n]
// (linear: x [M, K] with leading batch dims folded into M, w [N, K] as torch stores it; batched
// form: batch > 1 with per-batch strides, e.g. attention-like a @ bT^T).
//
// Constants (prepended by the compiler as `const NAME: TYPE = VALUE;`), defaults in brackets:
//   BM: u32 [64]  BN: u32 [64]  rows / columns of the output tile of one workgroup
//   BK: u32 [16]  depth of one K step through workgroup memory
//   TM: u32 [4]   TN: u32 [4]   outputs per thread (rows, columns); multiples of 4
//   HAS_BIAS: bool [false]  HAS_RESIDUAL: bool [false]
//   ACTIVATION: u32 [0]     0 none, 1 SiLU, 2 GELU (exact, erf), applied after bias, before residual
//   SPLIT_K: u32 [1]        splits of K (split-K, for outputs too small to fill the GPU; out must
//                           then be dense: ldo = N, stride_o = M * N)
//   Workgroup size (BN/TN) x (BM/TM) <= 256; (BM*BK) and (BN*BK) multiples of the thread count,
//   the thread count a multiple of BK; workgroup memory 4*BK*(BM+BN+8) bytes <= 16384.
// Bindings (@group(0)):
//   0 x: read, 1 w: read, 2 bias: read [N], 3 residual: read (laid out like out), 4 out: read_write,
//   5 workspace: read_write [SPLIT_K * batch * M * N] (the splits' partial sums; with SPLIT_K = 1
//   the compiler drops this binding and renumbers params), 6 params: uniform Params. bias /
//   residual are always bound: when their flag is false bind any buffer that is not written by this
//   launch (e.g. x again); it is not read.
// Params (all 4-byte fields, in this order): M, N, K, lda (row stride of x), ldw (row stride of w),
//   ldo (row stride of out and residual), tiles_m (= ceil(M / BM)), batch, stride_x, stride_w,
//   stride_o (batch strides in elements; stride_w = 0 shares one weight).
// Dispatch: entry matmul, x = ceil(N / BN); T = tiles_m * batch * SPLIT_K tile rows (split s
//   takes rows [s * tiles_m * batch, ...) and depths [s * D, (s + 1) * D), D = ceil(ceil(K /
//   SPLIT_K) / BK) * BK) are folded into (y, z): T <= 65535: (T, 1), else z = ceil(T / 65535),
//   y = ceil(T / z); the kernel recovers t = wg.y + wg.z * num_workgroups.y and skips t >= T.
//   SPLIT_K > 1 writes the partial sums to the workspace; then entry splitk_reduce (workgroup 256,
//   fold1d(ceil(batch * M * N / 256))) adds them and applies bias, activation and residual.

alias WeightOperand = f32;
// requires: matmul_kernel (common/matmul_kernel.wgsl: the bindings, tiles and entry point matmul)
