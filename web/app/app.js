// The page's behaviour: controls, progress, messages, the gallery, settings kept across reloads.
// Every generation goes through window.websd (websd.js), which tests call too.
import './websd.js';
import { cacheSize, clearCache, megabytes } from './artifact_files.js';

const $ = (id) => document.getElementById(id);
const websd = window.websd;
const SETTINGS_KEY = 'websd-settings-v1';
const FIELDS = ['prompt', 'negative-prompt', 'scheduler', 'steps', 'guidance', 'seed', 'width', 'height', 'strength'];
let initImage = null;
let lastImage = null;
let running = false;

function setProgress(text, fraction = null) {
  $('progress').textContent = text;
  $('progress-bar').hidden = fraction === null;
  if (fraction !== null) $('progress-bar').value = fraction;
}

// A sentence for every state a user can reach, with what to do.
function explain(error) {
  const detail = error.message;
  switch (error.kind) {
    case 'no-webgpu':
      return { text: 'This browser has no WebGPU, so it cannot run the model on its GPU. Use a current Chrome, Edge or ' +
                     'another browser with WebGPU turned on.' };
    case 'adapter':
      return { text: 'This browser has no WebGPU it can use here: it found no usable GPU adapter (WebGPU may be turned ' +
                     'off in its settings or flags, or this GPU or its driver is blocked). Use a current Chrome or Edge ' +
                     'with WebGPU, on a supported GPU.' };
    case 'limits':
      return { text: `This GPU is below what the model needs: ${detail}. A GPU with more memory, or a smaller model, is needed.` };
    case 'download':
      return { text: `A download failed (${detail}). What was received is kept.`, retry: 'Resume the download', resume: true };
    case 'checksum':
      return { text: `A downloaded file is damaged or from another version of the model (${detail}). It was not kept.`,
               retry: 'Download it again' };
    case 'quota':
      return { text: `The browser has no room left to keep the model (${detail}). Free space: clear this page's cache below, or ` +
                     'other sites\' data in the browser settings, then retry.', retry: 'Retry' };
    case 'device-lost':
    case 'out-of-memory':
      return { text: `The GPU ran out of memory or was reset (${detail}). Try again at a smaller size.`, retry: 'Reload the model',
               smaller: true };
    case 'cancelled':
      return { text: 'Stopped. Nothing was kept from that image.' };
    default:
      return { text: detail };
  }
}

function showMessage(error) {
  const message = $('message');
  const { text, retry, resume, smaller } = explain(error);
  message.replaceChildren(text);
  if (retry) {
    const button = document.createElement('button');
    button.textContent = retry;
    button.addEventListener('click', () => {
      if (!resume) {
        location.reload();
        return;
      }
      message.hidden = true;
      whenReady(websd.retry());
    });
    message.append(button);
  }
  if (smaller) {
    const widths = [...$('width').options].map((o) => Number(o.value));
    const smallest = Math.min(...widths);
    if (smallest < Number($('width').value)) {
      const button = document.createElement('button');
      button.textContent = `Use ${smallest} wide`;
      button.addEventListener('click', () => {
        $('width').value = String(smallest);
        message.hidden = true;
      });
      message.append(button);
    }
  }
  message.hidden = false;
}

function saveSettings() {
  const settings = {};
  for (const id of FIELDS) settings[id] = $(id).value;
  localStorage.setItem(SETTINGS_KEY, JSON.stringify(settings));
}

function restoreSettings(values = JSON.parse(localStorage.getItem(SETTINGS_KEY) ?? '{}')) {
  for (const id of FIELDS) {
    if (values[id] === undefined) continue;
    const field = $(id);
    if (field.tagName === 'SELECT' && ![...field.options].some((o) => o.value === String(values[id]))) continue;
    field.value = values[id];
  }
}

function fillChoices(info) {
  // The runtime's defaults (saved settings, restored after, take precedence).
  $('steps').value = info.defaults.steps;
  $('guidance').value = info.defaults.guidance_scale;
  $('strength').value = info.defaults.strength;
  const scheduler = $('scheduler');
  scheduler.replaceChildren(new Option(`the model's (${info.scheduler_class || 'default'})`, ''));
  for (const name of info.schedulers) scheduler.append(new Option(name, name));
  const widths = [...new Set(info.sizes.map((s) => s.width))];
  const heights = [...new Set(info.sizes.map((s) => s.height))];
  $('width').replaceChildren(...widths.map((w) => new Option(String(w), String(w))));
  $('height').replaceChildren(...heights.map((h) => new Option(String(h), String(h))));
}

async function showCacheSize() {
  const { bytes, usage, quota } = await cacheSize();
  $('cache-size').textContent = quota ? `${megabytes(bytes)} (site uses ${megabytes(usage)} of ${megabytes(quota)})` : megabytes(bytes);
}

function setInitImage(file) {
  initImage = file;
  const preview = $('init-preview');
  if (preview.src) URL.revokeObjectURL(preview.src);
  preview.hidden = !file;
  $('clear-init').hidden = !file;
  if (file) preview.src = URL.createObjectURL(file);
  else preview.removeAttribute('src');
}

function addToGallery(image, settings) {
  const item = document.createElement('li');
  const button = document.createElement('button');
  button.type = 'button';
  button.title = image.parameters;
  const img = document.createElement('img');
  img.src = URL.createObjectURL(image.png);
  img.alt = settings.prompt;
  button.append(img);
  button.addEventListener('click', () => {
    restoreSettings({ ...settings, seed: image.seed });
    saveSettings();
    showImage(image, img.src);
  });
  item.append(button);
  $('gallery').prepend(item);
}

function showImage(image, url) {
  const img = document.createElement('img');
  img.src = url;
  img.alt = image.parameters;
  img.width = image.width;
  img.height = image.height;
  $('output').replaceChildren(img);
  $('preview').hidden = true;
  lastImage = image;
  $('save').disabled = false;
  const t = image.timings;
  const perStep = t.steps_s.length ? t.steps_s.reduce((a, b) => a + b, 0) / t.steps_s.length : 0;
  $('timings').textContent = `${image.width}x${image.height}, seed ${image.seed}: ${t.total_s.toFixed(1)} s in all; ` +
    `prompt ${t.prepare_s.toFixed(2)} s, ${t.steps_s.length} steps at ${perStep.toFixed(2)} s/step, decode ${t.decode_s.toFixed(2)} s`;
}

async function generate() {
  if (running) {
    websd.cancel();
    return;
  }
  running = true;
  saveSettings();
  $('message').hidden = true;
  $('generate').textContent = 'Stop';
  $('generate').classList.add('running');
  const settings = Object.fromEntries(FIELDS.map((id) => [id, $(id).value]));
  try {
    const image = await websd.generate({
      prompt: settings.prompt, negativePrompt: settings['negative-prompt'], scheduler: settings.scheduler,
      steps: Number(settings.steps), guidance: Number(settings.guidance), seed: settings.seed,
      width: Number(settings.width), height: Number(settings.height), initImage, strength: Number(settings.strength),
      previewCanvas: $('preview'),
      onPreview: () => {
        $('preview').hidden = false;
        $('output').replaceChildren();
      },
      onProgress: (p) => {
        if (p.stage === 'step') {
          setProgress(`step ${p.step}/${p.steps}, ${p.secondsPerStep.toFixed(2)} s/step, about ${Math.ceil(p.etaSeconds)} s left`, p.step / p.steps);
        } else {
          setProgress(p.stage, p.steps ? 1 : 0);
        }
      },
    });
    showImage(image, URL.createObjectURL(image.png));
    addToGallery(image, settings);
    setProgress('done');
  } catch (error) {
    setProgress(error.kind === 'cancelled' ? 'stopped' : 'failed');
    showMessage(error);
  } finally {
    running = false;
    $('generate').textContent = 'Generate';
    $('generate').classList.remove('running');
  }
}

async function showPicker() {
  try {
    const response = await fetch('/artifacts.json', { cache: 'no-cache' });
    if (!response.ok) return;  // a plain static host: one model, no picker
    const artifacts = await response.json();
    if (artifacts.length < 2) return;
    const select = $('model');
    for (const { name, url, model } of artifacts) {
      const option = new Option(`${name} (${model})`, url);
      option.selected = new URL(url, location.href).pathname === new URL('./', location.href).pathname;
      select.append(option);
    }
    select.addEventListener('change', () => location.assign(select.value));
    select.closest('label').hidden = false;
  } catch {
    // no picker
  }
}

websd.addEventListener('progress', ({ detail }) => {
  const p = detail;
  if (p.stage === 'downloading') {
    setProgress(`downloading ${Math.min(p.done + 1, p.total)}/${p.total}: ${megabytes(p.bytesDone)} of ${megabytes(p.bytesTotal)} ` +
                `at ${megabytes(p.bytesPerSecond)}/s`, p.bytesDone / Math.max(1, p.bytesTotal));
  } else if (p.stage === 'cached') {
    setProgress(`reading the model from this browser's cache: ${p.done}/${p.total}`, p.done / p.total);
  } else if (p.stage === 'gpu') {
    setProgress('opening the GPU');
  } else if (p.stage === 'verifying') {
    setProgress('verifying the model');
  } else if (p.stage === 'weights') {
    setProgress('handing the weights to the GPU');
  } else if (p.stage === 'kernels') {
    setProgress(`preparing the GPU kernels: ${p.done}/${p.total}`, p.done / Math.max(1, p.total));
  }
});

$('controls').addEventListener('submit', (event) => {
  event.preventDefault();
  generate();
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey) && !$('generate').disabled) {
    event.preventDefault();
    generate();
  }
});
$('random-seed').addEventListener('click', () => {
  $('seed').value = String(crypto.getRandomValues(new Uint32Array(1))[0]);
  saveSettings();
});
$('init-image').addEventListener('change', () => setInitImage($('init-image').files[0] ?? null));
$('clear-init').addEventListener('click', () => {
  $('init-image').value = '';
  setInitImage(null);
});
const drop = $('drop-zone');
drop.addEventListener('dragover', (event) => {
  event.preventDefault();
  drop.classList.add('dragging');
});
drop.addEventListener('dragleave', () => drop.classList.remove('dragging'));
drop.addEventListener('drop', (event) => {
  event.preventDefault();
  drop.classList.remove('dragging');
  const file = [...event.dataTransfer.files].find((f) => f.type.startsWith('image/'));
  if (file) setInitImage(file);
});
$('save').addEventListener('click', () => {
  if (!lastImage) return;
  const link = document.createElement('a');
  link.href = URL.createObjectURL(lastImage.png);
  link.download = `websd-${lastImage.seed}.png`;
  link.click();
});
$('clear-cache').addEventListener('click', async () => {
  await clearCache();
  await showCacheSize();
});
for (const id of FIELDS) $(id).addEventListener('change', saveSettings);

function whenReady(ready) {
  ready.then((info) => {
    fillChoices(info);
    restoreSettings();
    $('adapter').textContent = websd.adapterName;
    $('tier').textContent = websd.tier;
    $('generate').disabled = false;
    setProgress(`ready: ${info.model} (loaded in ${websd.loadTimings.total_s.toFixed(1)} s)`);
    showCacheSize();
  }, (error) => {
    setProgress('not available');
    showMessage(error);
    showCacheSize();
  });
}

showPicker();
whenReady(websd.ready);
