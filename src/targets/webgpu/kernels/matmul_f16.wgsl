// matmul_f16: matmul (matmul.wgsl: the same operation, constants, bindings, Params and dispatch)
// with its weight w stored in f16, as the f16 tier holds every weight a GEMM reads (half the GPU
// memory, no widening at load); x, the arithmetic, bias, residual and out stay f32. For adapters
// with `shader-f16`.
enable f16;

alias WeightOperand = f16;
// requires: matmul_kernel (common/matmul_kernel.wgsl: the bindings, tiles and entry point matmul)
