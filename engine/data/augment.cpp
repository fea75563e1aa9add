#include "engine/data/augment.hpp"

namespace drift {

std::vector<CropFlip> draw_crop_flips(std::int64_t count, const AugmentConfig& config, Rng& rng) {
  std::vector<CropFlip> draws(static_cast<std::size_t>(count));
  const auto offsets = static_cast<std::uint64_t>(2 * config.crop_padding + 1);
  for (auto& d : draws) {
    if (config.scope == AugmentScope::batch && &d != &draws.front()) {
      d = draws.front();
      continue;
    }
    if (config.crop_padding > 0) {
      d.top = static_cast<std::int64_t>(rng.below(offsets));
      d.left = static_cast<std::int64_t>(rng.below(offsets));
    }
    if (config.flip) d.flip = rng.below(2) == 1;
  }
  return draws;
}

torch::Tensor crop_and_flip(const torch::Tensor& images, std::int64_t padding, const torch::Tensor& fill,
                            const std::vector<CropFlip>& draws) {
  const auto b = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
  // Row and column indices into the padded image, per sample: a flip reverses the columns.
  std::vector<std::int64_t> rows(static_cast<std::size_t>(b * h)), cols(static_cast<std::size_t>(b * w));
  for (std::int64_t i = 0; i < b; ++i) {
    const auto& d = draws[static_cast<std::size_t>(i)];
    for (std::int64_t r = 0; r < h; ++r) rows[static_cast<std::size_t>(i * h + r)] = d.top + r;
    for (std::int64_t q = 0; q < w; ++q) cols[static_cast<std::size_t>(i * w + q)] = d.left + (d.flip ? w - 1 - q : q);
  }
  const auto device = images.device();
  auto padded = images;
  if (padding > 0) {
    padded = fill.to(device, images.scalar_type())
                 .view({1, c, 1, 1})
                 .expand({b, c, h + 2 * padding, w + 2 * padding})
                 .clone();
    padded.slice(2, padding, padding + h).slice(3, padding, padding + w).copy_(images);
  }
  const auto row_index =
      torch::tensor(rows, torch::kInt64).to(device).view({b, 1, h, 1}).expand({b, c, h, w + 2 * padding});
  const auto col_index = torch::tensor(cols, torch::kInt64).to(device).view({b, 1, 1, w}).expand({b, c, h, w});
  return padded.gather(2, row_index).gather(3, col_index);
}

torch::Tensor augment_batch(const torch::Tensor& images, const AugmentConfig& config, const torch::Tensor& fill,
                            Rng& rng) {
  return crop_and_flip(images, config.crop_padding, fill, draw_crop_flips(images.size(0), config, rng));
}

}  // namespace drift
