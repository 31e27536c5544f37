// The folder websd keeps per-user caches in (the demo model, prepared weights): the XDG base
// directory rule, as tools on Linux follow it. Thread-safe (reads the environment only).
#pragma once

#include <string>

namespace websd {

// $XDG_CACHE_HOME/websd, else $HOME/.cache/websd (not created). Throws websd::Error("engine")
// naming both variables when neither is set; `what` says what the folder was wanted for
// ("the demo model"), `fix` how to do without it ("pass --model DIR").
std::string user_cache_dir(const std::string& what, const std::string& fix);

}  // namespace websd
