#include "codegen_test_support.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <random>

#include "ops/fused_program.h"
#include "support/fixtures.h"
#include "targets/cpu/runtime/cpu_kernels.h"

namespace websd::test {

codegen::CpuKernelSpec kernel_spec(const std::string& name, const std::string& program,
                                   const std::vector<double>& constants, const std::vector<Shape>& inputs,
                                   const Shape& output) {
  codegen::CpuKernelSpec spec;
  spec.name = name;
  spec.program = ops::fused_program_parse(program, inputs.size(), constants.size());
  for (const double value : constants) spec.program.constants.push_back(static_cast<float>(value));
  for (const Shape& shape : inputs) spec.inputs.push_back({DType::kF32, shape});
  spec.output = {DType::kF32, output};
  return spec;
}

Attrs fused_attrs(const codegen::CpuKernelSpec& spec) {
  Attrs attrs;
  attrs.set("program", ops::fused_program_text(spec.program.code));
  attrs.set("constants", std::vector<double>(spec.program.constants.begin(), spec.program.constants.end()));
  attrs.set("kernel", spec.name);
  return attrs;
}

cpu::CpuTensor random_cpu_tensor(const Shape& shape, std::uint32_t seed, float scale, bool positive) {
  cpu::CpuTensor tensor = cpu::CpuTensor::allocate({DType::kF32, shape});
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  float* data = tensor.fdata();
  for (std::int64_t i = 0; i < tensor.numel(); ++i) {
    const float value = normal(engine);
    data[i] = positive ? std::fabs(value) + 0.01f : value;
  }
  return tensor;
}

std::vector<float> tensor_values(const cpu::CpuTensor& tensor) {
  return std::vector<float>(tensor.fdata(), tensor.fdata() + tensor.numel());
}

cpu::CpuTensor run_cpu_kernel(const std::string& op, const std::vector<const cpu::CpuTensor*>& inputs,
                              const Attrs& attrs, const TensorType& output) {
  const cpu::CpuKernel* kernel = cpu::cpu_kernel_lookup(op);
  EXPECT_NE(kernel, nullptr) << op;
  cpu::CpuTensor result = cpu::CpuTensor::allocate(output);
  if (kernel != nullptr) (*kernel)(inputs, attrs, result);
  return result;
}

std::string build_kernel_library(const std::vector<codegen::CpuKernelSpec>& kernels, const std::string& stem,
                                 const codegen::SharedLibraryOptions& options) {
  const std::string path = make_temp_dir("codegen-" + stem) + "/" + stem + ".so";
  codegen::compile_shared_library(codegen::cpu_kernel_source(kernels), path, options);
  return path;
}

std::optional<std::string> run_program(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t got; spawned == 0 && (got = read(fds[0], buffer, sizeof(buffer))) != 0;) {
    if (got > 0) output.append(buffer, static_cast<std::size_t>(got));
    if (got < 0 && errno != EINTR) break;
  }
  close(fds[0]);
  if (spawned != 0) return std::nullopt;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return output;
}

std::size_t expect_close(const std::vector<float>& actual, const std::vector<float>& expected, double tolerance,
                         const std::string& what) {
  EXPECT_EQ(actual.size(), expected.size()) << what;
  std::size_t differing = 0, reported = 0;
  for (std::size_t i = 0; i < actual.size() && i < expected.size(); ++i) {
    const double a = actual[i], e = expected[i];
    if (std::isnan(e) || std::isnan(a)) {
      EXPECT_EQ(std::isnan(a), std::isnan(e)) << what << " element " << i;
      continue;
    }
    if (a != e) ++differing;
    const bool close = a == e || std::fabs(a - e) <= tolerance * std::max(1.0, std::fabs(e));
    if (!close && reported++ < 5) ADD_FAILURE() << what << " element " << i << ": " << a << " vs " << e;
  }
  return differing;
}

}  // namespace websd::test
