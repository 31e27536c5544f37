// The GEMM epilogues' activation, chosen by the constant ACTIVATION: 0 none, 1 SiLU, 2 GELU (exact,
// through erf_f32: templates using it also require `erf`).
fn activate(v: f32) -> f32 {
  if (ACTIVATION == 1u) { return v / (1.0 + exp(-v)); }
  if (ACTIVATION == 2u) { return 0.5 * v * (1.0 + erf_f32(v * 0.70710678118654752)); }
  return v;
}
