// Elementwise ops. Reference semantics are those of PyTorch's functions of the same names.
#include <cmath>

#include "core/error.h"
#include "ops/op_groups.h"

namespace websd::ops {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      op_type_error("shapes " + shape_to_string(a) + " and " + shape_to_string(b) + " do not broadcast (dimension " +
                    std::to_string(i) + ": " + std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank, const char* attr_name) {
  const std::int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    op_type_error(std::string("attribute '") + attr_name + "' = " + std::to_string(axis) +
                  " is out of range for rank " + std::to_string(rank));
  }
  return normalized;
}

void expect_rank(const TensorType& type, std::int64_t rank, const char* what) {
  if (type.rank() != rank) {
    op_type_error(std::string(what) + " must have rank " + std::to_string(rank) + ", got " + type.to_string());
  }
}

void expect_float(const TensorType& type, const char* what) {
  if (!dtype_is_float(type.dtype))
    op_type_error(std::string(what) + " must be a float tensor, got " + type.to_string());
}

void expect_compute_attr(const Attrs& attrs, const char* op) {
  if (!attrs.has("compute")) return;
  const std::string& compute = attrs.get_string("compute", op);
  if (compute != "f32" && compute != "bf16")
    op_type_error("compute must be \"f32\" or \"bf16\", got \"" + compute + "\"");
}

void expect_weights_attr(const Attrs& attrs, const char* op) {
  if (!attrs.has("weights")) return;
  const std::string& weights = attrs.get_string("weights", op);
  if (weights != "f32" && weights != "f16")
    op_type_error("weights must be \"f32\" or \"f16\", got \"" + weights + "\"");
}

void register_elementwise_ops(OpSink& sink) {
  const auto unary = [&](const char* name, const char* summary) {
    sink.add({name, 1, 1, kTraitElementwise,
              [](const std::vector<TensorType>& in, const Attrs&) {
                expect_float(in[0], "input");
                return std::vector<TensorType>{in[0]};
              },
              summary});
  };
  unary("neg", "-x");
  unary("exp", "e^x");
  unary("sqrt", "square root");
  unary("rsqrt", "1/sqrt(x)");
  unary("sin", "sine");
  unary("cos", "cosine");
  unary("tanh", "hyperbolic tangent");
  unary("sigmoid", "1/(1+e^-x)");
  unary("silu", "x*sigmoid(x)");
  unary("gelu", "x*Phi(x) with the exact erf form (torch gelu approximate='none')");

  const auto binary = [&](const char* name, const char* summary) {
    sink.add({name, 2, 2, kTraitElementwise,
              [](const std::vector<TensorType>& in, const Attrs&) {
                if (in[0].dtype != in[1].dtype) {
                  op_type_error("input dtypes differ: " + in[0].to_string() + " vs " + in[1].to_string());
                }
                return std::vector<TensorType>{{in[0].dtype, broadcast_shapes(in[0].shape, in[1].shape)}};
              },
              summary});
  };
  binary("add", "a+b with numpy broadcasting");
  binary("sub", "a-b with numpy broadcasting");
  binary("mul", "a*b with numpy broadcasting");
  binary("div", "a/b with numpy broadcasting");

  // A scalar or small constant table baked into the graph (e.g. timestep-embedding frequencies).
  sink.add({"constant", 0, 0, kTraitNone,
            [](const std::vector<TensorType>&, const Attrs& attrs) {
              const auto& values = attrs.get_floats("values", "constant");
              Shape shape = attrs.has("shape") ? attrs.get_ints("shape", "constant") : Shape{};
              if (shape_numel(shape) != static_cast<std::int64_t>(values.size())) {
                op_type_error("attribute 'values' holds " + std::to_string(values.size()) + " numbers but 'shape' " +
                              shape_to_string(shape) + " needs " + std::to_string(shape_numel(shape)));
              }
              return std::vector<TensorType>{{DType::kF32, shape}};
            },
            "the tensor given by attributes values (f32) and shape"});

  sink.add({"clamp", 1, 1, kTraitElementwise,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              expect_float(in[0], "input");
              if (attrs.get_float("min", "clamp") > attrs.get_float("max", "clamp"))
                op_type_error("'min' exceeds 'max'");
              return std::vector<TensorType>{in[0]};
            },
            "min(max(x, min), max)"});

  sink.add({"cast", 1, 1, kTraitElementwise,
            [](const std::vector<TensorType>& in, const Attrs& attrs) {
              const auto& name = attrs.get_string("dtype", "cast");
              const auto dtype = dtype_from_name(name);
              if (!dtype) op_type_error("attribute 'dtype' = \"" + name + "\" is not a dtype (F32, F16, BF16, ...)");
              return std::vector<TensorType>{{*dtype, in[0].shape}};
            },
            "converts to attribute dtype (round to nearest even)"});
}

}  // namespace websd::ops
