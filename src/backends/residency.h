// Which networks a backend keeps loaded between calls (CheckpointBackend, ArtifactBackend).
#pragma once

namespace websd::backends {

// Which networks keep their weights and executors between calls.
enum class Residency {
  kAllNetworks,  // everything stays loaded: fastest when calls alternate between networks
  kOneNetwork,   // a call to one network first releases the others: peak memory is the largest
                 // network's, at the price of reloading a network that is called again later
};

}  // namespace websd::backends
