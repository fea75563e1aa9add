#pragma once
// Secure aggregation's numbers (docs/privacy.md#secure-aggregation): each client's input is
// clipped to a range, quantised to integers and summed modulo M, and the server decodes the
// sum. The simulator reproduces this exactly, so a model trained under secure aggregation
// carries its rounding, clipping and wrap-around, and counts them.
#include <cstdint>
#include <functional>
#include <vector>

namespace drift::privacy {

// Flower's offset-binary encoding: inputs clipped to [-c, c] and mapped to [0, Q]; the first
// element carries the client's quantised weight.
struct FlowerEncoding {
  double clip_range = 8.0;                  // c
  std::uint64_t quantization = 1ULL << 22;  // Q
  std::uint64_t modulus = 1ULL << 32;       // M, a power of two above Q
  double max_weight = 1000.0;               // W
};

// uniform(j): a uniform in (0, 1) for coordinate j, for stochastic rounding (round down when it
// falls below ceil(p) - p); an empty function rounds half to even.
using RoundingDraw = std::function<double(std::uint64_t)>;

struct EncodedInput {
  std::vector<std::uint64_t> values;  // [q_w, r_0, .., r_{d-1}], each in [0, Q] when w <= W
  std::uint64_t clipped_coords = 0;   // coordinates whose |dq x_j| was above c
};
EncodedInput encode_flower(const std::vector<double>& x, double weight, const FlowerEncoding& e,
                           const RoundingDraw& uniform);

// The modular sum of encoded inputs, with the exact sum beside it to count wrap-around.
class ModularSum {
 public:
  explicit ModularSum(std::uint64_t modulus) : modulus_(modulus) {}
  void add(const std::vector<std::uint64_t>& values);
  // Σ values mod M per element, as the server sees it.
  std::vector<std::uint64_t> reduced() const;
  // Elements whose exact sum reached M: the server's sum wrapped there.
  std::uint64_t overflow_count() const;
  std::uint32_t inputs() const { return inputs_; }

 private:
  std::uint64_t modulus_;
  std::vector<unsigned __int128> exact_;
  std::uint32_t inputs_ = 0;
};

// Flower's decoding of `summed` inputs: the weighted mean of the clipped inputs.
std::vector<double> decode_flower_mean(const std::vector<std::uint64_t>& agg, std::uint32_t summed,
                                       const FlowerEncoding& e);
// The sum of the clipped inputs of weight 1 (W = 1), for DP's fixed denominator.
std::vector<double> decode_flower_sum(const std::vector<std::uint64_t>& agg, std::uint32_t summed,
                                      const FlowerEncoding& e);

// FLSim's signed fixed point, b bits at scale s: y = s x clamped to [-2^(b-1), 2^(b-1) - 1],
// rounded half to even; `convert_overflows` counts the clamps on the positive side, as FLSim's.
struct FixedPoint {
  double scale = 1.0;
  int bits = 8;
};
std::int64_t flsim_convert(double x, const FixedPoint& f, std::uint64_t& convert_overflows);
// FLSim's running sum: after each addition a non-negative sum is reduced mod 2^(b-1) (counting
// the wraps) and a negative one folded into (-2^(b-1), 0], uncounted: not two's complement.
std::int64_t flsim_accumulate(std::int64_t sum, std::int64_t value, const FixedPoint& f,
                              std::uint64_t& aggregate_overflows);
// True modular arithmetic in [-2^(b-1), 2^(b-1)): drift's `signed_mod` encoding.
std::int64_t signed_mod_accumulate(std::int64_t sum, std::int64_t value, const FixedPoint& f);

}  // namespace drift::privacy
