#include "graph/module.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace websd::graph {
namespace {

TEST(Module, SymbolsAreUnique) {
  Module module;
  module.add_function(Function("unet"), "unet/config.json");
  module.add_function(Function("vae_decode"), "vae/config.json");
  try {
    module.add_function(Function("unet"), "second/unet/config.json");
    FAIL() << "a second 'unet' was accepted";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("'unet'"), std::string::npos) << message;
    EXPECT_NE(message.find("unet/config.json"), std::string::npos) << message;
    EXPECT_NE(message.find("second/unet/config.json"), std::string::npos) << message;
  }
  EXPECT_EQ(module.functions().size(), 2u);
  EXPECT_EQ(module.at("vae_decode").symbol(), "vae_decode");
  EXPECT_THROW(module.at("main"), Error);
}

TEST(Module, EmptySymbolIsRefused) { EXPECT_THROW(Function(""), Error); }

}  // namespace
}  // namespace websd::graph
