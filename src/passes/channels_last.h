// Pass: moves image activations to channels-last (NHWC) for targets whose convolution and norm
// kernels prefer it. conv2d (groups 1), group_norm and upsample_nearest become their *_nhwc forms;
// elementwise ops, concat along channels and pad follow their operands' layout; the
// reshape/permute pairs that turn pixels into attention tokens ([N,C,H,W] -> [N,H*W,C]) and back
// become plain reshapes of the NHWC tensor. A value is converted between layouts only where a
// consumer needs the other one, so the function's inputs and outputs keep their NCHW types.
// Functions without convolutions come back unchanged. Pure: returns a new function.
#pragma once

#include "graph/function.h"

namespace websd::passes {

graph::Function to_channels_last(const graph::Function& function);

}  // namespace websd::passes
