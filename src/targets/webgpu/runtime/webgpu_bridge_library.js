// The JavaScript half of WebGpuDevice (webgpu_device.h): emscripten links it into the wasm module
// (--js-library), and each function forwards to the GpuBridge (web/bridge/websd_gpu.mjs) that the
// embedding JS put on the module: `createModule({ websdGpu: await GpuBridge.create(gpu) })`.
// The contract of every function is in webgpu_bridge_imports.h. A JS exception never unwinds into
// wasm: it is caught here, its message kept for websd_gpu_error_take, and -1 returned.
// Written in plain ES5-style functions: emscripten 3.1.6 preprocesses library files as text.

mergeInto(LibraryManager.library, {
  $websdGpu: {
    error: null,
    bridge: function() {
      var bridge = Module['websdGpu'];
      if (!bridge) {
        throw new Error('webgpu: no GpuBridge on the module: create it with GpuBridge.create (web/bridge/websd_gpu.mjs) ' +
                        'and pass it as `websdGpu` to the module factory before opening the device');
      }
      return bridge;
    },
    // Runs `body` with the bridge; returns its result, or -1 after keeping the exception's message.
    call: function(body) {
      try {
        return body(websdGpu.bridge());
      } catch (e) {
        websdGpu.error = (e && e.message) ? String(e.message) : String(e);
        return -1;
      }
    },
    // A view of wasm memory taken now: HEAPU8 is replaced when memory grows.
    bytes: function(pointer, count) {
      return HEAPU8.subarray(pointer >>> 0, (pointer >>> 0) + count);
    },
  },

  websd_gpu_attached__deps: ['$websdGpu'],
  websd_gpu_attached: function() {
    return Module['websdGpu'] ? 1 : 0;
  },

  websd_gpu_limit__deps: ['$websdGpu'],
  websd_gpu_limit: function(name) {
    var value = websdGpu.call(function(bridge) {
      var limit = bridge.device.limits[UTF8ToString(name)];
      return typeof limit === 'number' ? limit : -1;
    });
    return value;
  },

  websd_gpu_has_feature__deps: ['$websdGpu'],
  websd_gpu_has_feature: function(feature) {
    return websdGpu.call(function(bridge) {
      return bridge.device.features.has(UTF8ToString(feature)) ? 1 : 0;
    });
  },

  websd_gpu_adapter_name__deps: ['$websdGpu'],
  websd_gpu_adapter_name: function(out, capacity) {
    return websdGpu.call(function(bridge) {
      var name = String(bridge.adapterName || 'adapter');
      stringToUTF8(name, out, capacity);
      return lengthBytesUTF8(name);
    });
  },

  websd_gpu_create_buffer__deps: ['$websdGpu'],
  websd_gpu_create_buffer: function(bytes) {
    return websdGpu.call(function(bridge) { return bridge.createBuffer(bytes); });
  },

  websd_gpu_release__deps: ['$websdGpu'],
  websd_gpu_release: function(handle) {
    return websdGpu.call(function(bridge) {
      bridge.flush();  // commands gathered so far may use it: submit them before it is destroyed
      bridge.release(handle);
      return 0;
    });
  },

  websd_gpu_write_buffer__deps: ['$websdGpu'],
  websd_gpu_write_buffer: function(handle, offset, data, bytes) {
    return websdGpu.call(function(bridge) {
      bridge.writeBuffer(handle, offset, websdGpu.bytes(data, bytes));  // copied by the bridge now
      return 0;
    });
  },

  websd_gpu_copy_buffer__deps: ['$websdGpu'],
  websd_gpu_copy_buffer: function(from, fromOffset, to, toOffset, bytes) {
    return websdGpu.call(function(bridge) {
      bridge.copyBuffer(from, fromOffset, to, toOffset, bytes);
      return 0;
    });
  },

  websd_gpu_read_buffer__deps: ['$websdGpu'],
  websd_gpu_read_buffer: function(handle, offset, bytes, destination) {
    return websdGpu.call(function(bridge) {
      bridge.readBuffer(handle, offset, bytes, function(view) {
        HEAPU8.set(view, destination >>> 0);  // HEAPU8 as it is at delivery, not at the call
      });
      return 0;
    });
  },

  websd_gpu_create_kernel__deps: ['$websdGpu'],
  websd_gpu_create_kernel: function(code, entry, access, bindingCount, uniformBytes, label) {
    return websdGpu.call(function(bridge) {
      var names = ['read', 'write', 'readwrite'];
      var bindings = [];
      for (var i = 0; i < bindingCount; ++i) bindings.push(names[HEAPU8[(access >>> 0) + i]]);
      return bridge.createKernel(UTF8ToString(code), UTF8ToString(entry), bindings, uniformBytes,
                                 UTF8ToString(label));
    });
  },

  websd_gpu_create_program__deps: ['$websdGpu'],
  websd_gpu_create_program: function(table, launchCount, uniforms) {
    return websdGpu.call(function(bridge) {
      var at = (table >>> 0) / 8;  // the table is 8-byte aligned (a std::vector<double>)
      var launches = [];
      for (var l = 0; l < launchCount; ++l) {
        var kernel = HEAPF64[at], bindingCount = HEAPF64[at + 1];
        var uniformOffset = HEAPF64[at + 2], uniformBytes = HEAPF64[at + 3];
        var dispatch = [HEAPF64[at + 4], HEAPF64[at + 5], HEAPF64[at + 6]];
        at += 7;
        var bindings = [];
        for (var b = 0; b < bindingCount; ++b, at += 3) {
          bindings.push({ buffer: HEAPF64[at], offset: HEAPF64[at + 1], bytes: HEAPF64[at + 2] });
        }
        // A copy: the bridge writes it into its uniform buffer now, but keep nothing that aliases wasm memory.
        var bytes = websdGpu.bytes(uniforms + uniformOffset, uniformBytes).slice();
        launches.push({ kernel: kernel, bindings: bindings, uniforms: bytes, dispatch: dispatch });
      }
      return bridge.createProgram(launches);
    });
  },

  websd_gpu_run_program__deps: ['$websdGpu'],
  websd_gpu_run_program: function(program) {
    return websdGpu.call(function(bridge) {
      bridge.runProgram(program);
      return 0;
    });
  },

  websd_gpu_can_time__deps: ['$websdGpu'],
  websd_gpu_can_time: function() {
    return websdGpu.call(function(bridge) { return bridge.canTime() ? 1 : 0; });
  },

  websd_gpu_run_program_timed__deps: ['$websdGpu'],
  websd_gpu_run_program_timed: function(program, seconds) {
    return websdGpu.call(function(bridge) {
      bridge.runProgram(program, function(values) {
        // HEAPF64 at delivery: wasm memory may have grown since the call.
        for (var i = 0; i < values.length; ++i) HEAPF64[(seconds >>> 0) / 8 + i] = values[i];
      });
      return 0;
    });
  },

  websd_gpu_flush__deps: ['$websdGpu'],
  websd_gpu_flush: function() {
    return websdGpu.call(function(bridge) {
      bridge.flush();
      return 0;
    });
  },

  websd_gpu_poll__deps: ['$websdGpu'],
  websd_gpu_poll: function() {
    return websdGpu.call(function(bridge) { return bridge.poll() ? 1 : 0; });
  },

  websd_gpu_error_bytes__deps: ['$websdGpu'],
  websd_gpu_error_bytes: function() {
    return websdGpu.error === null ? 0 : lengthBytesUTF8(websdGpu.error);
  },

  websd_gpu_error_take__deps: ['$websdGpu'],
  websd_gpu_error_take: function(out, capacity) {
    stringToUTF8(websdGpu.error === null ? '' : websdGpu.error, out, capacity);
    websdGpu.error = null;
  },
});
