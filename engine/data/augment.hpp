#pragma once
// Training-time augmentation of image batches ([data.augment], docs/datasets.md): a random
// crop after black padding and a horizontal flip, drawn per sample from a keyed stream so that
// runs stay byte-identical, and applied with two gathers on whatever device holds the batch.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/core/rng.hpp"

namespace drift {

// One sample's draw: the crop's top-left corner in the padded image and whether to mirror it.
struct CropFlip {
  std::int64_t top = 0, left = 0;
  bool flip = false;
};

// `count` draws from `rng`, in sample order, each (top, left, flip) in that order; a part that
// is off draws nothing (top = left = 0 without padding, flip = false without flipping). With
// config.scope = batch, the first draw serves every sample.
std::vector<CropFlip> draw_crop_flips(std::int64_t count, const AugmentConfig& config, Rng& rng);

// images [B, C, H, W] padded by `padding` on every side with `fill` (one value per channel,
// [C]), sample b cropped to H x W at draws[b] and mirrored if asked. The result is a new tensor
// on the images' device; the pixels it keeps are the images' own bits.
torch::Tensor crop_and_flip(const torch::Tensor& images, std::int64_t padding, const torch::Tensor& fill,
                            const std::vector<CropFlip>& draws);

// Both together: the batch as the step trains on it. `fill` is black in the data's
// normalisation (Dataset::black()).
torch::Tensor augment_batch(const torch::Tensor& images, const AugmentConfig& config, const torch::Tensor& fill,
                            Rng& rng);

}  // namespace drift
