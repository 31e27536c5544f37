// Fixture parity checks on a machine without the C++ test suite (the GPU machine), against a
// float32 tensor of a safetensors file:
//   node fixture_check.mjs IMAGE.png REFERENCE.safetensors KEY      max abs of x / 255, <= 4e-3 + half a level
//   node fixture_check.mjs VALUES.f32 REFERENCE.safetensors KEY     relative L2 of raw float32 values, < 1e-4
//   node fixture_check.mjs IMAGE.png BASE.png                        a tier's image against the f32 tier's:
//                                                                    max and mean level difference, PSNR
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';

function readPngRgb(path) {
  const data = readFileSync(path);
  let offset = 8, width = 0, height = 0;
  const idat = [];
  while (offset < data.length) {
    const length = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[9] !== 2 || body[12] !== 0) throw new Error(`${path}: not 8-bit RGB, not interlaced`);
    }
    if (type === 'IDAT') idat.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * 3, out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x];
      const a = x >= 3 ? out[y * stride + x - 3] : 0, b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= 3 && y > 0 ? out[(y - 1) * stride + x - 3] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const predictor = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      out[y * stride + x] = (value + predictor) & 255;
    }
  }
  return out;
}

function readTensor(path, key) {
  const data = readFileSync(path);
  const headerLength = Number(data.readBigUInt64LE(0));
  const entry = JSON.parse(data.toString('utf8', 8, 8 + headerLength))[key];
  if (!entry || entry.dtype !== 'F32') throw new Error(`${path}: no F32 tensor '${key}'`);
  const [begin, end] = entry.data_offsets;
  const bytes = data.subarray(8 + headerLength + begin, 8 + headerLength + end);
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

const [image, reference, key] = process.argv.slice(2);
if (reference.endsWith('.png')) {
  const a = readPngRgb(image), b = readPngRgb(reference);
  if (a.length !== b.length) throw new Error(`sizes differ: ${a.length} vs ${b.length}`);
  let worst = 0, sum = 0, squares = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    worst = Math.max(worst, d);
    sum += d;
    squares += d * d;
  }
  const mse = squares / a.length;
  const psnr = mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
  console.log(`${image} against ${reference}: max ${worst} levels, mean ${(sum / a.length).toFixed(3)}, ` +
              `PSNR ${psnr === Infinity ? 'inf' : psnr.toFixed(1)} dB`);
  process.exit(0);
}
if (image.endsWith('.f32')) {
  const bytes = readFileSync(image);
  const actual = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const expected = readTensor(reference, key);
  if (actual.length !== expected.length) throw new Error(`sizes differ: ${actual.length} vs ${expected.length}`);
  let diff = 0, norm = 0;
  for (let i = 0; i < actual.length; i++) {
    diff += (actual[i] - expected[i]) ** 2;
    norm += expected[i] ** 2;
  }
  const error = Math.sqrt(diff / norm);
  console.log(`${key}: relative L2 ${error.toExponential(3)} (tolerance 1e-4)`);
  process.exit(error < 1e-4 ? 0 : 1);
}
const pixels = readPngRgb(image), expected = readTensor(reference, key);
if (pixels.length !== expected.length) throw new Error(`sizes differ: ${pixels.length} vs ${expected.length}`);
let worst = 0;
for (let i = 0; i < pixels.length; i++) worst = Math.max(worst, Math.abs(pixels[i] / 255 - expected[i]));
console.log(`${key}: max abs ${worst.toExponential(3)} (tolerance 4e-3 + half a level ${(4e-3 + 0.5 / 255).toExponential(3)})`);
process.exit(worst <= 4e-3 + 0.5 / 255 ? 0 : 1);
