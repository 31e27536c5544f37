// The name AUTOMATIC1111's web UI gives a scheduler configuration ("Euler a", "DPM++ 2M Karras",
// "PLMS", ...), written into PNG parameters so that other tools recognise it. Pure; thread-safe.
#pragma once

#include <string>

#include "pipeline/schedulers/scheduler.h"

namespace websd {

// The A1111 sampler name, or the diffusers class name where A1111 has no equivalent.
std::string sampler_display_name(const schedulers::Scheduler& scheduler);

}  // namespace websd
