#pragma once
// Datasets held in memory: images already converted to normalised float tensors [N, C, H, W]
// (converted once at load, then shared read-only by every trainer slot) and int64 labels.
#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/catalog.hpp"
#include "engine/config/scenario.hpp"

namespace drift {

struct Dataset {
  // float32 [N, C, H, W] images, normalised; text datasets hold token indices, [N, L].
  torch::Tensor images;
  torch::Tensor labels;  // int64 [N]
  std::int64_t num_classes = 0;
  std::vector<std::string> class_names;
  double pixel_mean = 0.0, pixel_std = 1.0;  // images = (pixels in [0, 1] - mean) / std
  // Set by normalise_channels: each channel's own mean and std, replacing the two above.
  std::vector<double> channel_mean, channel_std;
  // Multi-domain datasets (digit5): the domain of every sample, int64 [N], samples of one
  // domain contiguous and in domain order; undefined for a single domain.
  torch::Tensor domains;
  std::vector<std::string> domain_names;
  // Datasets of natural clients (LEAF): the writer or speaker of every sample, int64 [N], as an
  // index into owner_names (the training split's writers; -1 for a test writer who never
  // trains), samples of one writer contiguous; undefined otherwise.
  torch::Tensor owners;
  std::vector<std::string> owner_names;

  std::int64_t size() const { return labels.size(0); }
  std::vector<std::int64_t> input_shape() const;  // one sample's shape: {C, H, W}, or {L} for text
  // What a black pixel (0 before normalisation) is in `images`, per channel [C]: what padding adds.
  torch::Tensor black() const;
};

struct DatasetSplits {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> test;
};

// One row of the dataset catalogue (dataset_catalog.cpp).
struct DatasetInfo {
  // Reads the row's files from a directory (the default path or data.path).
  using Loader = std::function<DatasetSplits(const DatasetInfo&, const std::string& dir, const DataConfig&)>;
  std::string name;
  std::string description;
  std::string default_path;
  std::string debian_package;
  std::vector<std::string> files;  // required files inside the directory ("name/": a folder of .json files)
  std::string install_hint;        // how a user gets the files, for the error that names a missing one
  Loader load;
  bool natural_clients = false;  // every sample names its writer (partition.scheme = "natural")
  bool text = false;             // samples are token sequences, not images (models say which they read)
};

const Rows<DatasetInfo>& dataset_catalog();
// A plugin's dataset reader, after the built-in ones (docs/plugins.md); a taken name throws UserError.
void register_dataset(DatasetInfo info);
const DatasetInfo* find_dataset(const std::string& name);
std::vector<std::string> dataset_names();

// Renormalises train and test images per channel: (pixel - mean[c]) / std[c], pixels in
// [0, 1] as the dataset's scalar normalisation gives them back. Throws UserError when the lists
// do not have one value per channel or a std is not positive.
void normalise_channels(DatasetSplits& splits, const std::vector<double>& mean, const std::vector<double>& std);

// Throws UserError naming the first missing file and the package that provides it.
void check_dataset_files(const DataConfig& config);
DatasetSplits load_dataset(const DataConfig& config);

}  // namespace drift
