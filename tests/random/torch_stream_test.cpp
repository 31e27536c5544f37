// Stream continuation across calls of mixed sizes, against values that torch 2.11.0 (x86-64, CPU
// capability AVX512, which runs torch's AVX2 normal kernel) printed for one generator per seed:
//   g = torch.Generator("cpu").manual_seed(seed)
//   for shape in [(5,), (3,), (17,), (1,), (2, 9), (33,), (1,), (16,), (1,)]:
//       print(torch.randn(*shape, generator=g))   # as float32 bit patterns
// This covers what refs/randn.safetensors cannot: the cached second Box-Muller value carried between
// small draws, sizes of 16 or more that are not multiples of 16 (the recomputed tail), and the
// largest seed (2^64 - 1). Seed 2^32 + 7 printed the same stream as seed 7.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bit_cast.h"
#include "pipeline/random/torch_generator.h"

namespace websd::test {
namespace {

struct TorchDraw {
  Shape shape;
  std::vector<std::uint32_t> bits;
};

struct TorchStream {
  std::uint64_t seed;
  std::vector<TorchDraw> draws;
};

const std::vector<TorchStream>& torch_streams() {
  static const std::vector<TorchStream> streams = {
      {7ull,
       {{{5}, {0xbe165174, 0x3f49408e, 0x3f7262e7, 0xbf8ea2d3, 0x3fd86bd0}},
        {{3}, {0xbf651371, 0xbeb6147c, 0x3f9dbed1}},
        {{17},
         {0xbfca94c1, 0xbcc054cb, 0x3e328f74, 0x4013180c, 0x3f7504a6, 0xbf297027, 0xbf54156f, 0xbf1b0ddd, 0xbe0aaff8,
          0x3fa60f1a, 0x3fd20a1a, 0xbf87416d, 0xbe85eeb2, 0xbe801162, 0x3f00497f, 0x3e852377, 0xbfd189ea}},
        {{1}, {0xbd7c19d1}},
        {{2, 9},
         {0xbf87c044, 0xbe9e34c3, 0xbf1d873b, 0x3fc659eb, 0x3f195183, 0xbf233e32, 0xc0124adb, 0xbebc3e7a, 0xbf61d69d,
          0x3f0bc772, 0x3f178f43, 0xbf417283, 0x3ec892dd, 0x3f3f3a23, 0x3fb09c61, 0x3fa4d401, 0x3f5e51f5, 0xbfb0ebe1}},
        {{33},
         {0x3f7ac4d2, 0x3ed22db0, 0x3fe23d5a, 0xbdaa5f30, 0x3f023a8b, 0x3f8f1475, 0x3f907506, 0x3e10ff33, 0x3fb5d49d,
          0x3f93bd1f, 0xbfc4ae48, 0xbf0ec462, 0xbee06d69, 0x3f941eb2, 0x3db627af, 0x3e88209a, 0x3f081d43, 0xbec48590,
          0xbe88f9bb, 0x3f2debe2, 0xbeca1483, 0x3fa9e102, 0x3de29318, 0x3eacc038, 0xbea3e9de, 0xbfa623b4, 0xbf498947,
          0x3fdf000e, 0x3f16888f, 0x3e8d1086, 0xbf6f032f, 0xbe1c67ae, 0xbf07abab}},
        {{1}, {0x3f27fd89}},
        {{16},
         {0x3f224c2e, 0x3f807726, 0xc00c090b, 0xbf7e2300, 0x3f6374b1, 0xbfbe4b62, 0xbf63cc1c, 0x3f66891a, 0x3e149d5c,
          0x3faf6c96, 0xbec0748f, 0x3e2cf474, 0xbf0aa280, 0xbe2450ab, 0x3f6ec4c3, 0x3d84f246}},
        {{1}, {0xbf107b49}}}},
      {18446744073709551615ull,
       {{{5}, {0x3f9c2132, 0xbec9349b, 0x3f82f420, 0xbebf310e, 0xbd9aa517}},
        {{3}, {0xbfa10d9b, 0x3eab5fdc, 0xbf2d3724}},
        {{17},
         {0x3fe58e21, 0x3fdc6c4f, 0x3f45215d, 0xbfbdb45b, 0xbf5d19cf, 0xbdd2fa37, 0xbf9be92f, 0xbf74369d, 0x3f435fa7,
          0xbf7f9925, 0x3f2e8b9a, 0xbf8ce092, 0x3fc7f781, 0xbff1628a, 0xbf8640e5, 0xbf3606aa, 0x3d255c1b}},
        {{1}, {0xbd372bcd}},
        {{2, 9},
         {0x3f8fcb31, 0xbf38e3ae, 0xbec6506c, 0xbfb4a41a, 0x3e5faa2f, 0x3ebf1a66, 0xbf73c65f, 0xbd39d20f, 0xbf6c540c,
          0x3e75d119, 0x3ec3437a, 0xbf4aca2a, 0xbf050b3f, 0xbe4daddb, 0xbf3e81b2, 0x3f212f18, 0xbf227d23, 0xbf96eb0a}},
        {{33},
         {0xbe5e3b1f, 0x3fd02aa0, 0xbf4afb33, 0xbf6fdb13, 0xbffafa8f, 0x3fb39f6c, 0x3ee7441b, 0x3f13028e, 0x3fb80fd5,
          0x3eca8c87, 0x3d01d45f, 0xbfa85c40, 0xbf848445, 0xbe948be4, 0x3d6a69f1, 0x402496c8, 0xbf463982, 0xbd6d47bc,
          0xbe1d4bbf, 0xbeb94984, 0xbf130a04, 0xbfa8197c, 0xbcf49b9e, 0x3fcbd51d, 0x3eae7f78, 0x3f406b0f, 0x3ec44e7f,
          0x3d8863a0, 0xbe9794fe, 0xbf738bb1, 0x3e4ceb0d, 0x3eaceedd, 0x3e981003}},
        {{1}, {0xbdf38783}},
        {{16},
         {0xbf0d6ff1, 0x3e81233e, 0xbf20a8ff, 0x3f057403, 0xbf284d56, 0x3fa88032, 0xbfa95178, 0x3fd26cb3, 0x3fa3615d,
          0xbf484e75, 0x3d753fa1, 0xbe6cce41, 0xbf7ea119, 0x3f8a06b2, 0xbec7c738, 0x3f5a37a7}},
        {{1}, {0x3f65c5bd}}}},
  };
  return streams;
}

TEST(TorchGeneratorStream, MixedSizesContinueLikeTorch) {
  for (const TorchStream& stream : torch_streams()) {
    TorchGenerator generator(stream.seed);
    for (std::size_t call = 0; call < stream.draws.size(); ++call) {
      const TorchDraw& draw = stream.draws[call];
      const HostTensor got = generator.randn(draw.shape);
      ASSERT_EQ(got.data.size(), draw.bits.size());
      for (std::size_t i = 0; i < draw.bits.size(); ++i) {
        EXPECT_EQ(websd::bit_cast<std::uint32_t>(got.data[i]), draw.bits[i])
            << "seed " << stream.seed << " call " << call << " shape " << shape_to_string(draw.shape) << " element "
            << i << " got " << got.data[i] << " want " << websd::bit_cast<float>(draw.bits[i]);
      }
    }
  }
}

}  // namespace
}  // namespace websd::test
