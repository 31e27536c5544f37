// Fused ops that passes create and targets lower as one kernel. fused_elementwise evaluates a
// postfix program (graph/fused_program.h) over N float inputs at every output element; its output
// is the numpy broadcast of the inputs. The fuse_elementwise pass writes these nodes; codegen turns
// each into a generated kernel named by attribute `kernel`.
#include "ops/fused_program.h"
#include "ops/op_groups.h"

namespace websd::ops {
namespace {

std::vector<TensorType> infer_fused_elementwise(const std::vector<TensorType>& in, const Attrs& attrs) {
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::string what = "input " + std::to_string(i);
    expect_float(in[i], what.c_str());
    if (in[i].dtype != in[0].dtype) {
      op_type_error("input dtypes differ: " + in[0].to_string() + " vs " + in[i].to_string());
    }
  }
  fused_program_from_attrs(attrs, in.size());
  const std::string& kernel = attrs.get_string("kernel", "fused_elementwise");
  if (!fused_kernel_name_valid(kernel)) {
    op_type_error("attribute 'kernel' = \"" + kernel +
                  "\" is not a kernel name (use letters, digits and '_', not starting with a digit)");
  }
  Shape shape = in[0].shape;
  for (std::size_t i = 1; i < in.size(); ++i) shape = broadcast_shapes(shape, in[i].shape);
  return {{in[0].dtype, shape}};
}

}  // namespace

void register_fused_ops(OpSink& sink) {
  sink.add({"fused_elementwise", 1, kFusedMaxInputs, kTraitElementwise, infer_fused_elementwise,
            "evaluates the postfix attribute 'program' (with float 'constants') at every element of the "
            "broadcast of its inputs; attribute 'kernel' names the generated kernel"});
}

}  // namespace websd::ops
