// The JavaScript half of the wasm runtime's host access (web_host_imports.h): emscripten links it
// into websd_web (--js-library). The embedder puts on the module
//   websdFiles: { describe: 'where the artifact is', size(path) -> number of bytes or null,
//                 read(path) -> Uint8Array,   (synchronous: a page fetches and verifies first)
//                 readInto(path, target) -> bytes read (optional: fills `target`, a view of
//                 the runtime's memory, without an intermediate copy),
//                 digest(path) -> the SHA-256 (32 bytes) of what the last read delivered, or null
//                 (optional: a host that hashes natively or holds only checked files) }
//   websdStderr(text)                          (optional: where progress and messages go)
// A JS exception never unwinds into wasm: its message is kept for websd_host_error_take.
// Written in plain ES5-style functions: emscripten 3.1.6 preprocesses library files as text.

mergeInto(LibraryManager.library, {
  $websdHost: {
    error: '',
    files: function() {
      var files = Module['websdFiles'];
      if (!files) throw new Error('no websdFiles on the module: pass the artifact\'s files to the module factory');
      return files;
    },
    keep: function(e) {
      websdHost.error = (e && e.message) ? String(e.message) : String(e);
    },
  },

  websd_files_describe__deps: ['$websdHost'],
  websd_files_describe: function(out, capacity) {
    try {
      var text = String(websdHost.files().describe || 'artifact');
      stringToUTF8(text, out, capacity);
      return lengthBytesUTF8(text);
    } catch (e) {
      websdHost.keep(e);
      return -1;
    }
  },

  websd_files_size__deps: ['$websdHost'],
  websd_files_size: function(path) {
    try {
      var size = websdHost.files().size(UTF8ToString(path));
      return size === null || size === undefined ? -1 : size;
    } catch (e) {
      websdHost.keep(e);
      return -2;
    }
  },

  websd_files_read__deps: ['$websdHost'],
  websd_files_read: function(path, pointer, bytes) {
    try {
      var files = websdHost.files();
      var target = HEAPU8.subarray(pointer >>> 0, (pointer >>> 0) + bytes);
      // readInto (optional) fills the runtime's memory directly: a host that reads files (Node)
      // then holds no second copy of each shard until its garbage collector runs.
      if (files.readInto) {
        var got = files.readInto(UTF8ToString(path), target);
        if (got !== bytes) throw new Error('read ' + got + ' bytes, expected ' + bytes);
        return 0;
      }
      var data = files.read(UTF8ToString(path));
      if (data.length !== bytes) throw new Error('read ' + data.length + ' bytes, expected ' + bytes);
      target.set(data);
      return 0;
    } catch (e) {
      websdHost.keep(e);
      return -1;
    }
  },

  // files.digest(path) (optional) -> the 32-byte SHA-256 of what the last read of `path`
  // delivered, or null: the runtime then compares it with the index instead of hashing the shard.
  websd_files_digest__deps: ['$websdHost'],
  websd_files_digest: function(path, out) {
    try {
      var files = websdHost.files();
      var digest = files.digest ? files.digest(UTF8ToString(path)) : null;
      if (!digest) return 0;
      if (digest.length !== 32) throw new Error('a SHA-256 digest has 32 bytes, not ' + digest.length);
      HEAPU8.set(digest, out >>> 0);
      return 1;
    } catch (e) {
      websdHost.keep(e);
      return -1;
    }
  },

  websd_host_error_bytes__deps: ['$websdHost'],
  websd_host_error_bytes: function() {
    return lengthBytesUTF8(websdHost.error);
  },

  websd_host_error_take__deps: ['$websdHost'],
  websd_host_error_take: function(out, capacity) {
    stringToUTF8(websdHost.error, out, capacity);
    websdHost.error = '';
  },

  websd_stderr_write: function(text, bytes) {
    var string = UTF8ToString(text, bytes);
    if (Module['websdStderr']) Module['websdStderr'](string);
    else if (typeof process === 'object' && process.stderr) process.stderr.write(string);
    else console.log(string.replace(/\r?\n$/, ''));
  },
});
