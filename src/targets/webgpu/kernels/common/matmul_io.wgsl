// matmul's uniform block and bindings (matmul.wgsl states the contract), shared by matmul and
// matmul_sgmat. The including template names the element types: `alias Operand` of x (f32, or
// vec4<f32> where the template reads four consecutive k at once) and `alias WeightOperand` of w
// (Operand, or vec4<f16> where the tier stores weights in f16).
struct Params {
  M: u32, N: u32, K: u32, lda: u32,
  ldw: u32, ldo: u32, tiles_m: u32, batch: u32,
  stride_x: u32, stride_w: u32, stride_o: u32,
}

@group(0) @binding(0) var<storage, read> x: array<Operand>;
@group(0) @binding(1) var<storage, read> w: array<WeightOperand>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read> residual: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<uniform> params: Params;
