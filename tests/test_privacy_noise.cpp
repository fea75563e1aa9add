// Philox4x32-10 and the privacy noise streams against Random123's known answers and the spec's
// vectors (docs/privacy.md#noise).
#include "catch_torch.hpp"

#include <vector>

#include "engine/privacy/philox.hpp"

using namespace drift::privacy;

TEST_CASE("Philox4x32-10 gives Random123's known answers", "[privacy]") {
  CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) == PhiloxBlock{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}) ==
        PhiloxBlock{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        PhiloxBlock{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
  CHECK(splitmix64_mix(0x9E3779B97F4A7C15ULL) == 0xE220A8397B1DCDAFULL);
}

TEST_CASE("Noise streams: the spec's uniforms and normals, by coordinate and in bulk", "[privacy]") {
  const NoiseStream round0(42, 0, NoiseTag::UpdateNoise);
  const auto u = round0.uniforms(0);
  CHECK(u[0] == Approx(0.5938701709094532).epsilon(1e-15));
  CHECK(u[1] == Approx(0.7850700722375237).epsilon(1e-15));
  const std::vector<double> want0{0.22313596012364353, -0.9961924740241721, -1.2897443370505444, -0.64384585843421316};
  const std::vector<double> want1{0.4599079871447595, -0.57471752936722864, 0.096756136424690706, -2.1623987538767455};
  const NoiseStream round1(42, 1, NoiseTag::UpdateNoise);
  std::vector<double> bulk(4);
  round1.normals(bulk.data(), 4);
  for (std::size_t k = 0; k < 4; ++k) {
    CHECK(round0.normal(k) == Approx(want0[k]).epsilon(1e-13));
    CHECK(bulk[k] == Approx(want1[k]).epsilon(1e-13));
    CHECK(bulk[k] == round1.normal(k));
  }
  const NoiseStream client7(42, 3, NoiseTag::LocalNoise, 7u);
  CHECK(client7.normal(0) == Approx(1.7221537148672152).epsilon(1e-13));
  CHECK(client7.normal(1) == Approx(-0.41378285891625738).epsilon(1e-13));
  std::vector<double> odd(3);
  round0.normals(odd.data(), 3);  // an odd count ends on the first half of a block
  CHECK(odd[2] == round0.normal(2));
}

TEST_CASE("Noise streams: 200,000 draws have mean 0 and variance 1 within 4 standard errors", "[privacy]") {
  const std::size_t n = 200000;
  std::vector<double> x(n);
  NoiseStream(123, 5, NoiseTag::UpdateNoise).normals(x.data(), n);
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  double var = 0;
  for (double v : x) var += (v - mean) * (v - mean);
  var /= static_cast<double>(n - 1);
  CHECK(mean == Approx(-0.0015048).margin(1e-6));
  CHECK(var == Approx(0.99714).margin(1e-5));
  CHECK(std::abs(mean) < 4 / std::sqrt(static_cast<double>(n)));
  CHECK(std::abs(var - 1) < 4 * std::sqrt(2.0 / static_cast<double>(n)));
}

TEST_CASE("Noise streams: a slice starting at any coordinate equals the whole stream's", "[privacy]") {
  const NoiseStream stream(9, 2, NoiseTag::UpdateNoise);
  std::vector<double> whole(11);
  stream.normals(whole.data(), whole.size());
  for (std::uint64_t first : {0u, 1u, 4u, 7u})
    for (std::uint64_t n : {1u, 2u, 3u}) {
      std::vector<double> slice(n);
      stream.normals(slice.data(), n, first);
      for (std::uint64_t k = 0; k < n; ++k) CHECK(slice[k] == whole[first + k]);
    }
}
