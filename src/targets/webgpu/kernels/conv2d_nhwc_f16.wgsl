// conv2d_nhwc_f16: conv2d_nhwc (conv2d_nhwc.wgsl: the same operation, weight layout, constants,
// bindings, Params and dispatch) with its weight stored in f16, as the f16 tier holds every weight
// a GEMM reads (half the GPU memory, no widening at load); input, the arithmetic, bias, residual
// and out stay f32. For adapters with `shader-f16`.
enable f16;

alias WeightOperand = f16;
// requires: conv2d_kernel (common/conv2d_kernel.wgsl: the bindings, tiles and entry point conv2d_nhwc)
