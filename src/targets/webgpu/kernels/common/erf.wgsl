// Shared by the templates that name it (`// requires: erf`): erf of an f32, which WGSL lacks.
// erf to about 1e-7 absolute in f32 (N. Juffa's minimax erff, max error about 1 ulp).
fn erf_f32(a: f32) -> f32 {
  let t = abs(a);
  let s = a * a;
  if (t > 0.927734375) {
    var r = fma(-1.72853470e-5, t, 3.83197126e-4);
    let u = fma(-3.88396438e-3, t, 2.42546219e-2);
    r = fma(r, s, u);
    r = fma(r, t, -1.06777877e-1);
    r = fma(r, t, -6.34846687e-1);
    r = fma(r, t, -1.28717512e-1);
    r = fma(r, t, -t);
    r = 1.0 - exp(max(r, -88.0));
    return select(r, -r, a < 0.0);
  }
  var r = -5.96761703e-4;
  r = fma(r, s, 4.99119423e-3);
  r = fma(r, s, -2.67681349e-2);
  r = fma(r, s, 1.12819925e-1);
  r = fma(r, s, -3.76125336e-1);
  r = fma(r, s, 1.28379166e-1);
  return fma(r, a, a);
}
