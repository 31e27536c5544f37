// float64 references shared by the kernel tests.

// erf in float64 to about 1e-15: the Maclaurin series for |x| < 3, erfc's continued fraction beyond.
export function erf64(x) {
  const ax = Math.abs(x);
  if (ax < 3) {
    let term = x, sum = x;
    const x2 = x * x;
    for (let n = 1; n < 200; n++) {
      term *= -x2 / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
  let fraction = ax;
  for (let n = 60; n >= 1; n--) fraction = ax + (n / 2) / fraction;
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / fraction;
  return Math.sign(x) * (1 - erfc);
}

export const gelu64 = (x) => 0.5 * x * (1 + erf64(x / Math.SQRT2));
