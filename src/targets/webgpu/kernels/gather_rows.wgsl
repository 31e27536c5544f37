// gather_rows (embedding): out[i, :] = table[ids[i], :], table [V, D], ids i32 [n], out [n, D].
// A table larger than one storage binding (128 MiB) is bound in row blocks, one launch per block:
// the launch binds rows [row_begin, row_begin + rows) and writes only the output rows whose id
// falls in them (the others keep their bytes). One block (row_begin 0, rows V) when it fits.
//
// Constants: none (256 threads per workgroup, one output element per thread).
// Bindings (@group(0)): 0 table: read [rows, D] (the block), 1 ids: read (i32), 2 out: read_write,
//   3 params: uniform Params.
// Params (4-byte fields, in order): total (= n * D), D, row_begin, rows.
// Dispatch: fold(ceil(total / 256)) (see permute.wgsl).

struct Params { total: u32, D: u32, row_begin: u32, rows: u32 }

@group(0) @binding(0) var<storage, read> table: array<f32>;
@group(0) @binding(1) var<storage, read> ids: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(256)
fn gather_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) t: u32) {
  let idx = (wg.x + wg.y * nwg.x) * 256u + t;
  if (idx >= params.total) { return; }
  let i = idx / params.D;
  let d = idx % params.D;
  let row = ids[i] - i32(params.row_begin);
  if (row >= 0i && row < i32(params.rows)) { out[idx] = table[u32(row) * params.D + d]; }
}
