// The WGSL kernel templates (src/targets/webgpu/kernels/<family>.wgsl) as the compiler will
// specialize and launch them: the constants prepended as `const NAME: TYPE = VALUE;` lines, the
// uniform block `Params` packed field by field (4 bytes each, in the order of the table below), the
// storage bindings in operand order and the dispatch grid, folded under 65535 workgroups per
// dimension. The C++ side (src/targets/webgpu/codegen) reproduces exactly this; the kernel tests and
// web/bench/kernels.mjs use it. Each family's header comment in its .wgsl file says the same.
//
//   const kernel = prepare('matmul', { M, N, K, hasBias: true });
//   kernel.code, kernel.bindings ([name, 'read' | 'read_write']), kernel.uniforms (Uint8Array),
//   kernel.launches ([{ entry, dispatch: [x, y, z] }]), kernel.workspaceBytes, kernel.sizes,
//   kernel.f16Bindings (bindings the kernel reads as f16: write them with toF16Bits; all others f32/i32).

export const kMaxWorkgroupsPerDimension = 65535;
export const kMaxStorageBuffersPerStage = 8;

const u = 'u32', i = 'i32', f = 'f32', b = 'bool';
const ceilDiv = (a, d) => Math.ceil(a / d);

// A 1-D grid of `groups` workgroups as (x, y, 1); the kernel's linear workgroup index is
// wg.x + wg.y * num_workgroups.x and indices >= groups do nothing.
export function fold1d(groups) {
  if (groups <= kMaxWorkgroupsPerDimension) return [Math.max(groups, 1), 1, 1];
  const y = ceilDiv(groups, kMaxWorkgroupsPerDimension);
  if (y > kMaxWorkgroupsPerDimension) throw new Error(`wgsl: ${groups} workgroups do not fit a folded grid`);
  return [ceilDiv(groups, y), y, 1];
}

// `groups` rows of workgroups folded into (y, z) beside an x extent: linear index wg.y + wg.z * num_workgroups.y.
export function foldYz(x, groups) {
  if (x > kMaxWorkgroupsPerDimension) throw new Error(`wgsl: ${x} workgroups in x`);
  const [y, z] = fold1d(groups);
  return [x, y, z];
}

// Elementwise families: one thread per element, 256 per workgroup.
const kElementwise = 256;
const elementwise = (entry, total) => [{ entry, dispatch: fold1d(ceilDiv(total, kElementwise)) }];
const prod = (dims) => dims.reduce((a, d) => a * d, 1);

// Shape ops of rank <= 6 are padded to rank 6 with leading 1s.
function pad6(dims, fill = 1) {
  if (dims.length > 6) throw new Error(`wgsl: rank ${dims.length} > 6`);
  return [...Array(6 - dims.length).fill(fill), ...dims];
}
const stridesOf = (dims) => dims.map((_, a) => prod(dims.slice(a + 1)));
const fields6 = (name, type) => Array.from({ length: 6 }, (_, a) => [`${name}${a}`, type]);
const values6 = (name, values) => Object.fromEntries(values.map((v, a) => [`${name}${a}`, v]));

// What an adapter must offer for the subgroup-matrix families: f16 operands into f32 results.
export const kSubgroupMatrixFeatures = ['shader-f16', 'subgroups', 'chromium-experimental-subgroup-matrix'];

export const FAMILIES = {
  matmul: {
    constants: () => ({ BM: [u, 64], BN: [u, 64], BK: [u, 16], TM: [u, 4], TN: [u, 4], SPLIT_K: [u, 1],
                        HAS_BIAS: [b, false], HAS_RESIDUAL: [b, false], ACTIVATION: [u, 0] }),
    bindings: [['x', 'read'], ['w', 'read'], ['bias', 'read'], ['residual', 'read'], ['out', 'read_write'],
               ['workspace', 'read_write']],
    params: [['M', u], ['N', u], ['K', u], ['lda', u], ['ldw', u], ['ldo', u], ['tiles_m', u], ['batch', u],
             ['stride_x', u], ['stride_w', u], ['stride_o', u]],
    // { M, N, K, batch = 1, sharedWeight = true }
    plan(s, c) {
      const batch = s.batch ?? 1;
      const tiles_m = ceilDiv(s.M, c.BM);
      const params = { M: s.M, N: s.N, K: s.K, lda: s.K, ldw: s.K, ldo: s.N, tiles_m, batch,
                       stride_x: s.M * s.K, stride_w: s.sharedWeight === false ? s.N * s.K : 0, stride_o: s.M * s.N };
      return { params, ...gemmLaunches('matmul', c, ceilDiv(s.N, c.BN), tiles_m * batch, batch * s.M * s.N) };
    },
    check(c) {
      const threads = (c.BN / c.TN) * (c.BM / c.TM);
      checkTiling(threads, c);
      return threads;
    },
  },

  conv2d_nhwc: {
    constants: () => ({ BM: [u, 64], BN: [u, 64], BK: [u, 16], TM: [u, 4], TN: [u, 4], SPLIT_K: [u, 1],
                        HAS_BIAS: [b, true], HAS_RESIDUAL: [b, false], ACTIVATION: [u, 0] }),
    bindings: [['input', 'read'], ['weight', 'read'], ['bias', 'read'], ['residual', 'read'], ['out', 'read_write'],
               ['workspace', 'read_write']],
    params: [['N', u], ['H', u], ['W', u], ['C', u], ['OH', u], ['OW', u], ['O', u], ['KH', u], ['KW', u],
             ['stride', u], ['pad', u], ['M', u], ['K', u], ['tiles_m', u]],
    // { N, H, W, C, O, KH, KW = KH, stride = 1, pad = 0 }
    plan(s, c) {
      const KW = s.KW ?? s.KH, stride = s.stride ?? 1, pad = s.pad ?? 0;
      const OH = Math.floor((s.H + 2 * pad - s.KH) / stride) + 1;
      const OW = conv2dOutputWidth(s);
      const M = s.N * OH * OW, tiles_m = ceilDiv(M, c.BM);
      const params = { N: s.N, H: s.H, W: s.W, C: s.C, OH, OW, O: s.O, KH: s.KH, KW, stride, pad, M,
                       K: s.KH * KW * s.C, tiles_m };
      return { params, ...gemmLaunches('conv2d_nhwc', c, ceilDiv(s.O, c.BN), tiles_m, M * s.O) };
    },
    check(c) {
      const threads = (c.BN / c.TN) * (c.BM / c.TM);
      checkTiling(threads, c);
      return threads;
    },
  },

  // The f16 tier's GEMMs: matmul's and conv2d_nhwc's kernels with the weight stored in f16.
  matmul_f16: f16WeightFamily('matmul', 'w'),
  conv2d_nhwc_f16: f16WeightFamily('conv2d_nhwc', 'weight'),

  // The tensor-core tier's GEMMs: matmul's and conv2d_nhwc's contracts (params, plan, bindings)
  // on subgroup matrices (f16 operands staged in workgroup memory, f32 accumulation); the weight
  // (w, weight) is stored f16, as the tier holds every weight its GEMMs read.
  matmul_sgmat: sgmatFamily('matmul', false),
  conv2d_nhwc_sgmat: sgmatFamily('conv2d_nhwc', true),
  // The same with the activations in f16 (x; the convolution's input zero-padded too), both
  // operands' fragments straight from storage.
  matmul_sgmat_a16: sgmatFamily('matmul', false, true),
  conv2d_nhwc_sgmat_a16: sgmatFamily('conv2d_nhwc', true, true),

  attention: {
    constants: (s) => {
      const D = s.D ?? 40, Dv = s.Dv ?? D;
      const TPR = D <= 48 ? 1 : D <= 96 ? 2 : 4;
      const BQ = TPR === 1 ? 128 : TPR === 2 ? 64 : 32;  // H200: D=40 BQ 128 13.7 TFLOP/s vs 64 9.5
      // H100 (2026-12-07): D=40 over 4096 tokens BKV 8 22.4 TFLOP/s, 16 14.7, 32 13.2.
      const BKV = [TPR === 1 ? 8 : 16, 8, 4].find((bkv) => attentionSharedBytes(D, Dv, TPR, BQ, bkv) <= 16384);
      return { HEAD_DIM: [u, D], HEAD_DIM_V: [u, Dv], TPR: [u, TPR], BQ: [u, BQ], BKV: [u, BKV], RPT: [u, 1],
               CAUSAL: [b, !!s.causal] };
    },
    bindings: [['q', 'read'], ['k', 'read'], ['v', 'read'], ['out', 'read_write']],
    params: [['H', u], ['Sq', u], ['Skv', u], ['scale', f],
             ...['q', 'k', 'v', 'o'].flatMap((t) => [[`${t}_off`, u], [`${t}_sb`, u], [`${t}_sh`, u], [`${t}_ss`, u]]),
             ['bh', u]],
    // { B, H, Sq, Skv, D, Dv = D, scale = 1/sqrt(D), causal, layout: { q|k|v|o: { off, sb, sh, ss } } }
    // (default layout [B, H, S, D] contiguous).
    plan(s, c) {
      const Dv = s.Dv ?? s.D;
      const dense = (S, d) => ({ off: 0, sb: s.H * S * d, sh: S * d, ss: d });
      const layout = { q: dense(s.Sq, s.D), k: dense(s.Skv, s.D), v: dense(s.Skv, Dv), o: dense(s.Sq, Dv), ...s.layout };
      const params = { H: s.H, Sq: s.Sq, Skv: s.Skv, scale: s.scale ?? 1 / Math.sqrt(s.D), bh: s.B * s.H };
      for (const t of ['q', 'k', 'v', 'o']) for (const f of ['off', 'sb', 'sh', 'ss']) params[`${t}_${f}`] = layout[t][f];
      return { params, launches: [{ entry: 'attention', dispatch: foldYz(ceilDiv(s.Sq, c.BQ), s.B * s.H) }],
               sizes: { out: s.outElements ?? s.B * s.H * s.Sq * Dv } };
    },
    check(c, s) {
      if (c.BQ % c.RPT) throw new Error('wgsl: attention RPT must divide BQ');
      const threads = c.BQ * c.TPR / c.RPT;
      if (threads > 256) throw new Error(`wgsl: attention with ${threads} threads`);
      if (c.HEAD_DIM !== s.D || c.HEAD_DIM_V !== (s.Dv ?? s.D)) throw new Error('wgsl: attention HEAD_DIM differs from the shape');
      if ((c.HEAD_DIM / c.TPR) % 4 || (c.HEAD_DIM_V / c.TPR) % 4) throw new Error('wgsl: D/TPR and Dv/TPR must be multiples of 4');
      const bytes = attentionSharedBytes(c.HEAD_DIM, c.HEAD_DIM_V, c.TPR, c.BQ, c.BKV);
      if (bytes > 16384) throw new Error(`wgsl: attention needs ${bytes} bytes of workgroup memory`);
      return threads;
    },
  },

  // attention's contract as flash attention on subgroup matrices, for head dimensions up to 64.
  // Correct on an H100 (relative L2 about 4e-4) but a fifth of attention's speed there (4.7 vs 21.9
  // TFLOP/s over 4096 tokens, 2026-12-07): the compiler does not emit it; kept, with its tests and
  // bench cases, as the starting point of a faster one.
  attention_sgmat: {
    features: kSubgroupMatrixFeatures,
    limits: { maxComputeWorkgroupStorageSize: 32768 },
    // SGQ 4 (64 query rows a workgroup) where the rows fill an H100's 132 multiprocessors twice over
    // and the tiles fit 32 KiB.
    constants: (s) => {
      const D = s.D ?? 40, Dv = s.Dv ?? D;
      const wide = ceilDiv(s.Sq ?? 4096, 64) * (s.B ?? 2) * (s.H ?? 8) >= 264 && sgmatAttentionBytes(D, Dv, 4) <= 32768;
      return { HEAD_DIM: [u, D], HEAD_DIM_V: [u, Dv], SGQ: [u, wide ? 4 : 2], CAUSAL: [b, !!s.causal] };
    },
    get bindings() { return FAMILIES.attention.bindings; },
    get params() { return FAMILIES.attention.params; },
    plan: (s, c) => FAMILIES.attention.plan(s, { ...c, BQ: 16 * c.SGQ }),
    check(c, s) {
      if (c.HEAD_DIM !== s.D || c.HEAD_DIM_V !== (s.Dv ?? s.D)) throw new Error('wgsl: attention HEAD_DIM differs from the shape');
      if (c.HEAD_DIM > 64 || c.HEAD_DIM_V > 64) throw new Error('wgsl: attention_sgmat takes head dimensions up to 64');
      const bytes = sgmatAttentionBytes(c.HEAD_DIM, c.HEAD_DIM_V, c.SGQ);
      if (bytes > 32768) throw new Error(`wgsl: attention_sgmat needs ${bytes} bytes of workgroup memory`);
      return 32 * c.SGQ;
    },
  },

  group_norm_nhwc: {
    constants: () => ({ SILU: [b, false] }),
    bindings: [['x', 'read'], ['gamma', 'read'], ['beta', 'read'], ['out', 'read_write'], ['workspace', 'read_write']],
    params: [['N', u], ['HW', u], ['C', u], ['G', u], ['Cg', u], ['chunk_pixels', u], ['n_chunks', u], ['eps', f],
             ['total', u], ['stats_off', u]],
    // { N, H, W, C, G, eps = 1e-5 }
    plan(s) {
      const HW = s.H * s.W, Cg = s.C / s.G;
      if (!Number.isInteger(Cg)) throw new Error(`wgsl: C = ${s.C} is not a multiple of G = ${s.G}`);
      const chunk_pixels = s.chunkPixels ?? Math.max(ceilDiv(2048, Cg), ceilDiv(HW, kMaxWorkgroupsPerDimension));
      const n_chunks = ceilDiv(HW, chunk_pixels);
      const total = s.N * HW * s.C, stats_off = 2 * s.N * s.G * n_chunks;
      const params = { N: s.N, HW, C: s.C, G: s.G, Cg, chunk_pixels, n_chunks, eps: s.eps ?? 1e-5, total, stats_off };
      return { params,
               launches: [{ entry: 'gn_partial', dispatch: [n_chunks, s.G, s.N] },
                          { entry: 'gn_reduce', dispatch: fold1d(s.N * s.G) },
                          { entry: 'gn_apply', dispatch: fold1d(ceilDiv(total, kElementwise)) }],
               sizes: { out: total, workspace: stats_off + 2 * s.N * s.G } };
    },
  },

  layer_norm: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['gamma', 'read'], ['beta', 'read'], ['out', 'read_write']],
    params: [['rows', u], ['D', u], ['eps', f]],
    // { rows, D, eps = 1e-5 }
    plan: (s) => ({ params: { rows: s.rows, D: s.D, eps: s.eps ?? 1e-5 },
                    launches: [{ entry: 'layer_norm', dispatch: fold1d(s.rows) }], sizes: { out: s.rows * s.D } }),
  },

  softmax: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['out', 'read_write']],
    params: [['rows', u], ['D', u]],
    // { rows, D }
    plan: (s) => ({ params: { rows: s.rows, D: s.D }, launches: [{ entry: 'softmax', dispatch: fold1d(s.rows) }],
                    sizes: { out: s.rows * s.D } }),
  },

  geglu: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['out', 'read_write']],
    params: [['total', u], ['F', u]],
    // { rows, F } (x is [rows, 2F])
    plan: (s) => ({ params: { total: s.rows * s.F, F: s.F }, launches: elementwise('geglu', s.rows * s.F),
                    sizes: { out: s.rows * s.F } }),
  },

  permute: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['out', 'read_write']],
    params: [['total', u], ...fields6('d', u), ...fields6('s', u)],
    // { dims (input), perm } (out.dims[a] = dims[perm[a]])
    plan(s) {
      const inStrides = stridesOf(s.dims);
      const outDims = s.perm.map((a) => s.dims[a]);
      const total = prod(s.dims);
      const params = { total, ...values6('d', pad6(outDims)), ...values6('s', pad6(s.perm.map((a) => inStrides[a]), 0)) };
      return { params, launches: elementwise('permute', total), sizes: { out: total } };
    },
  },

  slice: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['out', 'read_write']],
    params: [['total', u], ['inner', u], ['len_out', u], ['len_in', u], ['start', u]],
    // { dims, axis, start, end }
    plan(s) {
      const inner = prod(s.dims.slice(s.axis + 1)), outer = prod(s.dims.slice(0, s.axis));
      const len_out = s.end - s.start, total = outer * len_out * inner;
      return { params: { total, inner, len_out, len_in: s.dims[s.axis], start: s.start },
               launches: elementwise('slice', total), sizes: { out: total } };
    },
  },

  concat: {
    constants: () => ({}),
    bindings: [['a', 'read'], ['b', 'read'], ['out', 'read_write']],
    params: [['total', u], ['inner', u], ['len_a', u], ['len_b', u]],
    // { dimsA, dimsB, axis } (equal but on `axis`)
    plan(s) {
      const inner = prod(s.dimsA.slice(s.axis + 1)), outer = prod(s.dimsA.slice(0, s.axis));
      const len_a = s.dimsA[s.axis], len_b = s.dimsB[s.axis], total = outer * (len_a + len_b) * inner;
      return { params: { total, inner, len_a, len_b }, launches: elementwise('concat', total), sizes: { out: total } };
    },
  },

  pad: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['out', 'read_write']],
    params: [['total', u], ...fields6('od', u), ...fields6('id', u), ...fields6('b', u)],
    // { dims, before, after } (per axis)
    plan(s) {
      const outDims = s.dims.map((d, a) => d + s.before[a] + s.after[a]);
      const total = prod(outDims);
      const params = { total, ...values6('od', pad6(outDims)), ...values6('id', pad6(s.dims)), ...values6('b', pad6(s.before, 0)) };
      return { params, launches: elementwise('pad', total), sizes: { out: total } };
    },
  },

  // The subgroup-matrix tier's _a16 operands: f32 NHWC to f16, zero-padded on H and W.
  pad_to_f16: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['out', 'read_write']],
    params: [['N', u], ['H', u], ['W', u], ['C', u], ['pad', u], ['total', u]],
    // { N, H, W, C, pad }; sizes.out counts u32 words (two f16 each)
    plan(s) {
      if (s.C % 2) throw new Error('wgsl: pad_to_f16 needs an even C');
      const total = (s.N * (s.H + 2 * s.pad) * (s.W + 2 * s.pad) * s.C) / 2;
      return { params: { ...s, total }, launches: elementwise('pad_to_f16', total), sizes: { out: total } };
    },
  },

  upsample_nearest_nhwc: {
    constants: () => ({}),
    bindings: [['x', 'read'], ['out', 'read_write']],
    params: [['total', u], ['H', u], ['W', u], ['C', u], ['scale', u]],
    // { N, H, W, C, scale = 2 }
    plan(s) {
      const scale = s.scale ?? 2, total = s.N * s.H * scale * s.W * scale * s.C;
      return { params: { total, H: s.H, W: s.W, C: s.C, scale },
               launches: elementwise('upsample_nearest_nhwc', total), sizes: { out: total } };
    },
  },

  gather_rows: {
    constants: () => ({}),
    bindings: [['table', 'read'], ['ids', 'read'], ['out', 'read_write']],
    params: [['total', u], ['D', u], ['row_begin', u], ['rows', u]],
    // { n, D, rows (in this block), rowBegin = 0 }
    plan: (s) => ({ params: { total: s.n * s.D, D: s.D, row_begin: s.rowBegin ?? 0, rows: s.rows },
                    launches: elementwise('gather_rows', s.n * s.D), sizes: { out: s.n * s.D } }),
  },

  image_to_rgba: {
    constants: () => ({}),
    bindings: [['image', 'read'], ['out', 'read_write']],
    params: [['H', u], ['W', u]],
    // { H, W }
    plan: (s) => ({ params: { H: s.H, W: s.W }, launches: elementwise('image_to_rgba', s.H * s.W * 4),
                    sizes: { out: s.H * s.W * 4 } }),
  },
};

function attentionSharedBytes(D, Dv, TPR, BQ, BKV) {
  return 4 * (BKV * (D + Dv) + (TPR > 1 ? BQ * TPR * (BKV + 1) : 1));
}

// The checkpoint's OIHW convolution weight repacked into the template's [O, KH, KW, C].
export function repackConvWeight(oihw, O, C, KH, KW) {
  const out = new Float32Array(O * KH * KW * C);
  for (let o = 0; o < O; o++) for (let c = 0; c < C; c++) for (let kh = 0; kh < KH; kh++) for (let kw = 0; kw < KW; kw++) {
    out[((o * KH + kh) * KW + kw) * C + c] = oihw[((o * C + c) * KH + kh) * KW + kw];
  }
  return out;
}


// `base`'s contract and tiles (its own template requires the same kernel) with binding `weight`
// stored in f16, for adapters with shader-f16.
function f16WeightFamily(base, weight) {
  return {
    features: ['shader-f16'],
    f16Bindings: [weight],
    constants: (s) => FAMILIES[base].constants(s),
    get bindings() { return FAMILIES[base].bindings; },
    get params() { return FAMILIES[base].params; },
    plan: (s, c) => FAMILIES[base].plan(s, c),
    check: (c, s) => FAMILIES[base].check(c, s),
  };
}

// conv2d_nhwc's output width for its shape { W, KH, KW = KH, stride = 1, pad = 0 }.
function conv2dOutputWidth(s) {
  return Math.floor((s.W + 2 * (s.pad ?? 0) - (s.KW ?? s.KH)) / (s.stride ?? 1)) + 1;
}

// A GEMM's launches and sizes: `entry` over its column tiles x row tiles, times SPLIT_K (each
// split's partial sums into the workspace), then with SPLIT_K > 1 splitk_reduce over the outputs.
function gemmLaunches(entry, c, columnTiles, rowTiles, outputs) {
  const launches = [{ entry, dispatch: foldYz(columnTiles, rowTiles * c.SPLIT_K) }];
  if (c.SPLIT_K > 1) launches.push({ entry: 'splitk_reduce', dispatch: fold1d(ceilDiv(outputs, kElementwise)) });
  return { launches, sizes: { out: outputs, workspace: c.SPLIT_K > 1 ? c.SPLIT_K * outputs : 1 } };
}

// A subgroup-matrix family over `base`'s contract: its Params, bindings and plan, other constants.
// a16: the activations (x, input) in f16 too, read as fragments from storage (the _a16 templates).
function sgmatFamily(base, bias, a16 = false) {
  const conv = base === 'conv2d_nhwc';
  return {
    features: kSubgroupMatrixFeatures,
    f16Bindings: conv ? ['weight', ...(a16 ? ['input'] : [])] : ['w', ...(a16 ? ['x'] : [])],
    // In the compiler's order (the contract test compares the modules' text).
    constants: () => ({ SGM: [u, 2], SGN: [u, 2], FM: [u, 2], FN: [u, 2], BM: [u, 64], BN: [u, 64], BK: [u, 32],
                        B_DIRECT: [b, a16], SG_SIZE: [u, 32], MMA_M: [u, 16], MMA_N: [u, 16], MMA_K: [u, 16],
                        SPLIT_K: [u, 1], HAS_BIAS: [b, bias], HAS_RESIDUAL: [b, false], ACTIVATION: [u, 0] }),
    get bindings() { return FAMILIES[base].bindings; },
    get params() { return FAMILIES[base].params; },
    plan: (s, c) => FAMILIES[base].plan(s, c),
    check(c, s) {
      const threads = c.SG_SIZE * c.SGM * c.SGN;
      if (threads > 256) throw new Error(`wgsl: ${threads} threads per workgroup`);
      if (!['1x1', '2x2', '4x2', '4x4'].includes(`${c.FM}x${c.FN}`)) throw new Error('wgsl: FM x FN must be 1x1, 2x2, 4x2 or 4x4');
      if (c.BM !== c.SGM * c.FM * c.MMA_M || c.BN !== c.SGN * c.FN * c.MMA_N || c.BK % c.MMA_K || c.BK % 4) {
        throw new Error('wgsl: BM, BN must be FM x FN fragments per subgroup, BK a multiple of MMA_K and 4');
      }
      const kv = c.BK / 4;
      if (threads % kv || (!a16 && (c.BM * kv) % threads) || (!c.B_DIRECT && (c.BN * kv) % threads)) {
        throw new Error('wgsl: tile loads do not divide among threads');
      }
      const [N, K] = base === 'matmul' ? [s.N, s.K] : [s.O, s.KH * (s.KW ?? s.KH) * s.C];
      if (a16) {
        if (!c.B_DIRECT || K % c.BK) throw new Error(`wgsl: ${base}_sgmat_a16 reads both operands directly: B_DIRECT, BK dividing K`);
        if (conv && (conv2dOutputWidth(s) % 16 || s.C % 16)) throw new Error('wgsl: conv2d_nhwc_sgmat_a16 needs OW and C multiples of 16');
        if (!conv && (s.M % 16 || s.K % 16)) throw new Error('wgsl: matmul_sgmat_a16 needs M and K multiples of 16');
      }
      if ((base === 'matmul' ? s.K : s.C) % 4) throw new Error(`wgsl: ${base}_sgmat reads four k at a time: K, C multiples of 4`);
      // Dawn sizes w's binding from the fragment loads: one fragment at least.
      if (N * K < c.MMA_N * c.MMA_K) throw new Error(`wgsl: ${base}_sgmat needs a weight of one fragment at least`);
      // Whole fragments inside w at subgroup-uniform, 16-byte aligned offsets.
      if (c.B_DIRECT && (N % c.BN || K % c.BK || K % 8)) throw new Error('wgsl: B_DIRECT needs BN to divide N and BK to divide K');
      const bytes = 2 * ((a16 ? c.MMA_M : c.BM) + (c.B_DIRECT ? c.MMA_N : c.BN)) * (c.BK + 8) + 4 * c.SGM * c.SGN * c.MMA_M * c.MMA_N;
      if (bytes > 16384) throw new Error(`wgsl: ${bytes} bytes of workgroup memory`);
      return threads;
    },
  };
}

// Workgroup memory of attention_sgmat's tiles (its header's formula).
function sgmatAttentionBytes(D, Dv, sgq) {
  const dp = 16 * ceilDiv(D, 16), dpv = 16 * ceilDiv(Dv, 16), bq = 16 * sgq;
  return 2 * bq * (dp + 8) + 2 * 32 * (dp + dpv + 16) + 4 * bq * Math.max(32, dpv) + 2 * bq * 40;
}

function checkTiling(threads, c) {
  if (threads > 256) throw new Error(`wgsl: ${threads} threads per workgroup`);
  if (c.TM % 4 || c.TN % 4 || c.BM % c.TM || c.BN % c.TN) throw new Error('wgsl: TM, TN must be multiples of 4 dividing BM, BN');
  if ((c.BM * c.BK) % threads || (c.BN * c.BK) % threads || threads % c.BK) throw new Error('wgsl: tile loads do not divide among threads');
  const bytes = 4 * c.BK * (c.BM + c.BN + 8);
  if (bytes > 16384) throw new Error(`wgsl: ${bytes} bytes of workgroup memory`);
}

// IEEE binary16 bits of each value (round to nearest even; overflow to infinity, NaN kept), for
// the bindings a kernel reads as f16.
export function toF16Bits(values) {
  const out = new Uint16Array(values.length);
  const f32 = new Float32Array(1);
  const bits = new Uint32Array(f32.buffer);
  for (let k = 0; k < values.length; k++) {
    f32[0] = values[k];
    const x = bits[0];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) {  // infinity or NaN (kept quiet)
      out[k] = sign | 0x7c00 | (mant ? 0x200 : 0);
      continue;
    }
    const e = exp - 127 + 15;
    if (e >= 0x1f) {
      out[k] = sign | 0x7c00;
      continue;
    }
    if (e <= 0) {  // subnormal or zero: shift the implicit 1 in, round to nearest even
      if (e < -10) {
        out[k] = sign;
        continue;
      }
      mant |= 0x800000;
      const shift = 14 - e;
      const half = 1 << (shift - 1);
      const rest = mant & ((1 << shift) - 1);
      let h = mant >>> shift;
      if (rest > half || (rest === half && (h & 1))) h += 1;
      out[k] = sign | h;
      continue;
    }
    let h = (e << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h += 1;  // may carry into the exponent: still right
    out[k] = sign | h;
  }
  return out;
}

// The template's text. Under Node it is read from src/targets/webgpu/kernels; elsewhere pass `source`.
const sources = new Map();
// A template with each `// requires: NAME` line replaced by the shared snippet common/NAME.wgsl,
// itself expanded (WGSL has no includes; module-scope declarations may come in any order).
export async function loadTemplate(family) {
  if (!sources.has(family)) {
    const { readFileSync } = await import('node:fs');
    const read = (path) => readFileSync(new URL(`../../src/targets/webgpu/kernels/${path}.wgsl`, import.meta.url), 'utf8');
    // The whole line, its end included, becomes the snippet (which ends with its own), as in the compiler.
    const expand = (text, depth) => {
      if (depth > 8) throw new Error(`wgsl: ${family}'s snippets require each other more than 8 deep`);
      return text.replace(/^\/\/ requires: (\w+).*\n/gm, (_, name) => expand(read(`common/${name}`), depth + 1));
    };
    sources.set(family, expand(read(family), 0));
  }
  return sources.get(family);
}

// A template's directives (`enable`, `requires`, `diagnostic`) must precede every declaration:
// the constants go after them, before the rest.
const kDirective = /^(enable|requires|diagnostic)\b.*;\s*$/;
export function specialize(constants, template) {
  const lines = template.split('\n');
  const directives = lines.filter((line) => kDirective.test(line));
  const rest = lines.filter((line) => !kDirective.test(line));
  return (directives.length ? directives.join('\n') + '\n' : '') + constants + rest.join('\n');
}

// The constants' lines the compiler prepends.
export function constantLines(constants) {
  if (Object.keys(constants).length === 0) return '';
  return Object.entries(constants).map(([name, [type, value]]) => {
    let text;
    if (type === b) text = value ? 'true' : 'false';
    else if (type === u) text = `${value >>> 0}u`;
    else if (type === i) text = `${value | 0}i`;
    else if (type === f) text = Number.isInteger(value) ? `${value}.0` : `${value}`;
    else throw new Error(`wgsl: constant type ${type}`);
    return `const ${name}: ${type} = ${text};`;
  }).join('\n') + '\n';
}

// Params packed as the uniform block: every field is 4 bytes, laid out in order (no padding is
// needed between scalars); the block is padded to a multiple of 16 bytes.
export function packParams(fields, values) {
  const bytes = new ArrayBuffer(Math.ceil((fields.length * 4) / 16) * 16);
  const view = new DataView(bytes);
  fields.forEach(([name, type], index) => {
    const value = values[name];
    if (value === undefined) throw new Error(`wgsl: Params field '${name}' has no value`);
    if (type === u) {
      if (!(value >= 0 && value <= 0xffffffff)) throw new Error(`wgsl: Params.${name} = ${value} is not a u32`);
      view.setUint32(index * 4, value, true);
    } else if (type === i) view.setInt32(index * 4, value, true);
    else view.setFloat32(index * 4, value, true);
  });
  return new Uint8Array(bytes);
}

// Everything needed to run a family on a shape: { code, constants, bindings, uniforms, launches,
// workspaceBytes, sizes (element counts of outputs and workspace), threads }.
export async function prepare(family, shape, overrides = {}) {
  const spec = FAMILIES[family];
  if (!spec) throw new Error(`wgsl: no family '${family}'`);
  const constants = spec.constants(shape);
  for (const [name, value] of Object.entries(overrides)) {
    if (!(name in constants)) throw new Error(`wgsl: ${family} has no constant '${name}'`);
    constants[name] = [constants[name][0], value];
  }
  const c = Object.fromEntries(Object.entries(constants).map(([name, [, value]]) => [name, value]));
  const threads = spec.check ? spec.check(c, shape) : kElementwise;
  const planned = spec.plan(shape, c);
  const bindings = typeof spec.bindings === 'function' ? spec.bindings(c) : spec.bindings;
  if (bindings.length > kMaxStorageBuffersPerStage) throw new Error(`wgsl: ${family} binds ${bindings.length} storage buffers`);
  for (const launch of planned.launches) {
    if (launch.dispatch.some((d) => d > kMaxWorkgroupsPerDimension || d < 1)) {
      throw new Error(`wgsl: ${family} dispatch ${launch.dispatch} exceeds the limits`);
    }
  }
  return {
    family,
    features: spec.features ?? [],
    limits: spec.limits ?? {},
    f16Bindings: spec.f16Bindings ?? [],
    code: specialize(constantLines(constants), await loadTemplate(family)),
    constants: c,
    bindings,
    params: spec.params,
    paramValues: planned.params,
    uniforms: packParams(spec.params, planned.params),
    launches: planned.launches,
    sizes: planned.sizes,
    workspaceBytes: 4 * (planned.sizes.workspace ?? 0),
    threads,
  };
}
