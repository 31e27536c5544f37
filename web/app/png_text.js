// PNG files that carry the generation's parameters as the native CLI writes them: a tEXt chunk
// with keyword "parameters" (A1111's convention) after IHDR. The browser encodes the pixels
// (canvas.toBlob); this inserts the chunk. tEXt is Latin-1: other characters become iTXt (UTF-8).

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; ++n) {
    let c = n;
    for (let k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// One chunk: length, type, data, CRC of type and data.
function chunk(type, data) {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function textChunk(keyword, text) {
  const latin1 = [...text].every((ch) => ch.charCodeAt(0) < 256);
  const key = new TextEncoder().encode(keyword);
  if (latin1) {
    const data = new Uint8Array(key.length + 1 + text.length);
    data.set(key, 0);
    for (let i = 0; i < text.length; ++i) data[key.length + 1 + i] = text.charCodeAt(i);
    return chunk('tEXt', data);
  }
  const utf8 = new TextEncoder().encode(text);
  // keyword, 0, compression flag 0, method 0, empty language tag, 0, empty translated keyword, 0, text
  const data = new Uint8Array(key.length + 5 + utf8.length);
  data.set(key, 0);
  data.set(utf8, key.length + 5);
  return chunk('iTXt', data);
}

// `png` (a PNG's bytes) with a text chunk `keyword` = `text` after its IHDR.
export function withTextChunk(png, keyword, text) {
  const ihdrEnd = 8 + 12 + new DataView(png.buffer, png.byteOffset).getUint32(8);
  const extra = textChunk(keyword, text);
  const out = new Uint8Array(png.length + extra.length);
  out.set(png.subarray(0, ihdrEnd), 0);
  out.set(extra, ihdrEnd);
  out.set(png.subarray(ihdrEnd), ihdrEnd + extra.length);
  return out;
}

// A PNG Blob of RGBA pixels with the parameters text.
export async function pngWithParameters(rgba, width, height, parameters) {
  const canvas = new OffscreenCanvas(width, height);
  canvas.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(rgba), width, height), 0, 0);
  const blob = await canvas.convertToBlob({ type: 'image/png' });
  const bytes = withTextChunk(new Uint8Array(await blob.arrayBuffer()), 'parameters', parameters);
  return new Blob([bytes], { type: 'image/png' });
}
