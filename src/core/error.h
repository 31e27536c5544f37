// Errors raised by websd libraries. Library code never aborts on bad input: it throws
// websd::Error whose message is one line of the form "[component] where: what (how to fix)".
// The CLI catches it, prints the line and exits non-zero.
#pragma once

#include <stdexcept>
#include <string>

namespace websd {

class Error : public std::runtime_error {
 public:
  Error(const std::string& component, const std::string& message)
      : std::runtime_error("[" + component + "] " + message), component_(component) {}

  const std::string& component() const { return component_; }
  // The message without its "[component] " tag, for quoting inside another message.
  std::string message() const { return std::string(what()).substr(component_.size() + 3); }

 private:
  std::string component_;
};

}  // namespace websd
