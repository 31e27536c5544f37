// The WebAssembly runtime's entry points (websd_web.wasm): one artifact run from JavaScript, which
// owns the GPU (web/bridge/websd_gpu.mjs, reached by the registered device) and awaits it between
// calls: the runtime never blocks. Web pages and the Node runner (web/node/websd_node.mjs) use the
// same calls:
//
//   websd_open(redraw, tier)       the artifact whose files the module's websdFiles gives, run in
//                                  kernel tier `tier` (empty: the base)
//                                  (web_host_library.js; its seal, lists and kernels checked, pipelines
//                                  compiled in the background: a run waits for its own)
//   [websd_load()                  a part (64 MiB) of the weights of every network the run calls
//                                  (websd_begin's; before any, a txt2img with the defaults): 1
//                                  while some remain (await the bridge's uploadRoom(), then call
//                                  again), 0 once all are on the GPU; the pipelines compile
//                                  meanwhile (a run loads what it still lacks itself, at once)]
//   [websd_stage_init_image(w, h)  img2img: fill the returned w*h*3 RGB bytes before websd_begin
//    or websd_stage_init_latents(shape_json): fill the returned float32 values [batch, C, h, w]]
//   websd_begin(request_json)      a run (generation_request_json.h, plus "scheduler" and
//                                  "scheduler_config"; it takes what was staged), validated as the
//                                  CLI validates it
//   loop: r = websd_advance()      1: a part is submitted (websd_part() names it): await the
//                                  bridge, call again; 2: an image is ready (websd_image_*);
//                                  0: the run is done; -1: failed (websd_error())
//                                  websd_progress_json(): image, step, steps and, once a step
//                                  is finished, "preview_shape" of websd_preview_latents(): the
//                                  x0 that step predicts ([1, C, h, w] float32, scaled as the
//                                  UNet's; valid until the next call), for live previews
//
// One network alone, for conformance tests: websd_network_submit(network, inputs.safetensors,
// timestep) with network "text" (input "ids", as float values), "unet" ("sample", "context") or
// "vae_decode" ("latents"); await the bridge; websd_network_finish(out_path) writes the output's
// float32 values (its shape: websd_network_shape(), JSON).
//
// One function alone on inputs of its signature (deterministic sample values), for `websd profile`:
// websd_function_submit(symbol); await the bridge; websd_function_finish().
//
// Profiles: websd_profile_start() before a run times every launch from GPU timestamps (adapters
// with 'timestamp-query', each launch in its own compute pass); websd_profile_json() gives
// [{"key", "seconds", "calls", "flops"}] (runtime/op_profile.h) summed over the run.
//
// Progress lines go to stderr as the CLI prints them. Every call returns -1 (or null) after an
// error, with the message in websd_error(). Single-threaded, like the page.
#pragma once

#include <cstdint>

extern "C" {
int websd_open(int redraw_progress, const char* tier);
int websd_load();
int websd_begin(const char* request_json);
int websd_advance();
const char* websd_part();
// The run's progress now: {"image", "images", "step", "steps"} ({} without a run).
const char* websd_progress_json();
// The opened artifact: {"model", "sizes": [{"width", "height"}], "schedulers": [names],
// "scheduler_class" (its own config's), "max_tokens"}; null after an error.
const char* websd_info_json();
// What loading has taken so far (ArtifactBackend::load_times): {"shard_read_s", "shard_verify_s",
// "shard_decrypt_s", "shard_bytes", "shards", "shards_hashed_by_host" (checked by the host's digest:
// files.digest), "weight_read_s" (shard loads included), "weight_import_s"
// (widening and handing to the GPU), "weight_bytes", "executors_s"}; null after an error.
const char* websd_load_json();
// Staging buffers for the next websd_begin (null after an error: a size out of range).
std::uint8_t* websd_stage_init_image(int width, int height);
float* websd_stage_init_latents(const char* shape_json);
// The ready image: {"index", "seed" (decimal string), "width", "height", "parameters",
// "latents_shape"}, its RGB bytes and its final latents (float32, [1, C, h, w]).
const char* websd_image_json();
const std::uint8_t* websd_image_rgb();
int websd_image_rgb_bytes();
const float* websd_image_latents();
const float* websd_preview_latents();
int websd_network_submit(const char* network, const char* inputs_path, double timestep);
int websd_network_finish(const char* output_path);
const char* websd_network_shape();
int websd_function_submit(const char* symbol);
int websd_function_finish();
int websd_profile_start();
const char* websd_profile_json();
const char* websd_error();
void websd_close();
}
