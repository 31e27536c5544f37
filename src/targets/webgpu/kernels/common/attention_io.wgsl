// attention's uniform block and bindings (attention.wgsl states the contract), shared by attention
// and attention_sgmat.
struct Params {
  H: u32, Sq: u32, Skv: u32, scale: f32,
  q_off: u32, q_sb: u32, q_sh: u32, q_ss: u32,
  k_off: u32, k_sb: u32, k_sh: u32, k_ss: u32,
  v_off: u32, v_sb: u32, v_sh: u32, v_ss: u32,
  o_off: u32, o_sb: u32, o_sh: u32, o_ss: u32,
  bh: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;
@group(0) @binding(1) var<storage, read> k: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> params: Params;

// The keys the query rows [row0, row0 + rows) read: all of them, or with CAUSAL (a constant of the
// including template) those up to the last row's last visible one (query i sees keys
// j <= i + Skv - Sq).
fn keys_end(row0: u32, rows: u32) -> u32 {
  if (!CAUSAL) { return params.Skv; }
  let last = i32(min(row0 + rows, params.Sq)) - 1 + i32(params.Skv) - i32(params.Sq);
  return u32(clamp(last + 1, 0, i32(params.Skv)));
}
