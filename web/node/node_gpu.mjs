// WebGPU under Node: the npm `webgpu` package (Dawn, the engine inside Chrome) with its globals
// (GPUBufferUsage, GPUMapMode, ...) installed, so web/bridge runs unchanged outside a browser.
//
// Without a GPU, Dawn runs on SwiftShader's Vulkan driver, which Debian's `chromium` package ships:
// it is used when VK_ICD_FILENAMES is unset and the driver is there (scripts/install-deps.sh --webgpu).
// Dawn toggles come from `toggles` or WEBSD_DAWN_TOGGLES ('enable-dawn-features=a,b;...'); by default
// those that let Dawn offer what the faster tiers need where the GPU has it: `shader-f16` on NVIDIA's
// Vulkan driver and the experimental subgroup matrices (tensor cores) both sit behind them, and
// Node, unlike a page, has no sandbox that the unsafe APIs' gate protects.
const kDefaultToggles = ['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia'];

const kSwiftShaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';

export async function nodeGpu(toggles = process.env.WEBSD_DAWN_TOGGLES === undefined ? kDefaultToggles
                                          : process.env.WEBSD_DAWN_TOGGLES.split(';').filter(Boolean)) {
  if (process.env.VK_ICD_FILENAMES === undefined) {
    const { existsSync } = await import('node:fs');
    if (existsSync(kSwiftShaderIcd)) process.env.VK_ICD_FILENAMES = kSwiftShaderIcd;
  }
  let webgpu;
  try {
    // WEBGPU_MODULE: the package's index.js where `webgpu` does not resolve from this file (an
    // artifact's runtime/ folder, a carried copy on the GPU machine).
    webgpu = await import(process.env.WEBGPU_MODULE ?? 'webgpu');
  } catch (error) {
    throw new Error(`webgpu: the npm package 'webgpu' is not installed (run scripts/install-deps.sh --webgpu): ${error.message}`);
  }
  Object.assign(globalThis, webgpu.globals);
  return webgpu.create(toggles);
}
