#pragma once
// Datasets held in memory: images already converted to normalised float tensors [N, C, H, W]
// (converted once at load, then shared read-only by every trainer slot) and int64 labels.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace drift {

struct Dataset {
  torch::Tensor images;  // float32 [N, C, H, W], normalised
  torch::Tensor labels;  // int64 [N]
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;
  double pixel_mean = 0.0, pixel_std = 1.0;  // images = (pixels in [0, 1] - mean) / std
  // Multi-domain datasets (digit5): the domain of every sample, int64 [N], samples of one
  // domain contiguous and in domain order; undefined for a single domain.
  torch::Tensor domains;
  std::vector<std::string> domain_names;

  std::int64_t size() const { return labels.size(0); }
  std::vector<std::int64_t> input_shape() const;  // {C, H, W}
};

struct DatasetSplits {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> test;
};

struct DatasetInfo {
  std::string name;
  std::string description;
  std::string default_path;
  std::string debian_package;
  std::vector<std::string> files;  // required file names inside the directory
};

const std::vector<DatasetInfo>& dataset_catalog();
std::vector<std::string> dataset_names();

// Throws UserError naming the first missing file and the package that provides it.
void check_dataset_files(const DataConfig& config);
DatasetSplits load_dataset(const DataConfig& config);

}  // namespace drift
