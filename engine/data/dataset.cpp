#include "engine/data/dataset.hpp"

#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/data/idx_reader.hpp"

namespace drift {
namespace {

const DatasetInfo& info_of(const std::string& name) {
  for (const auto& d : dataset_catalog())
    if (d.name == name) return d;
  throw UserError("unknown dataset '" + name + "'");
}

std::string directory_of(const DataConfig& config) {
  return config.path.empty() ? info_of(config.dataset).default_path : config.path;
}

std::shared_ptr<Dataset> load_idx_split(const std::string& dir, const std::string& images_file,
                                        const std::string& labels_file, std::int64_t limit,
                                        double mean, double stddev, const DatasetInfo& info) {
  const auto images = read_idx_gz(dir + "/" + images_file);
  const auto labels = read_idx_gz(dir + "/" + labels_file);
  if (images.dims.size() != 3 || labels.dims.size() != 1 || images.dims[0] != labels.dims[0]) {
    throw UserError(dir + ": " + images_file + " and " + labels_file + " do not describe the same samples");
  }
  std::int64_t n = images.dims[0];
  if (limit > 0) n = std::min(n, limit);
  const auto h = images.dims[1], w = images.dims[2];

  auto dataset = std::make_shared<Dataset>();
  auto raw = torch::from_blob(const_cast<std::uint8_t*>(images.data.data()), {n, 1, h, w}, torch::kUInt8);
  dataset->images = ((raw.to(torch::kFloat32) / 255.0 - mean) / stddev).contiguous();
  dataset->pixel_mean = mean;
  dataset->pixel_std = stddev;
  dataset->labels =
      torch::from_blob(const_cast<std::uint8_t*>(labels.data.data()), {n}, torch::kUInt8).to(torch::kInt64);
  dataset->num_classes = 10;
  const auto max_label = dataset->labels.max().item<std::int64_t>();
  if (max_label >= dataset->num_classes) throw UserError(dir + "/" + labels_file + ": label " + std::to_string(max_label) + " out of range");
  static const std::vector<std::string> kFashionClasses = {
      "t-shirt/top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle boot"};
  dataset->class_names = info.name == "fashion-mnist" ? kFashionClasses : std::vector<std::string>{};
  return dataset;
}

}  // namespace

std::vector<std::int64_t> Dataset::input_shape() const {
  return {images.size(1), images.size(2), images.size(3)};
}

const std::vector<DatasetInfo>& dataset_catalog() {
  static const std::vector<DatasetInfo> catalog = {
      {"fashion-mnist", "Fashion-MNIST: 70,000 28x28 grey images of 10 clothing classes (60k train, 10k test)",
       "/usr/share/datasets/fashion-mnist", "dataset-fashion-mnist",
       {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz"}},
  };
  return catalog;
}

std::vector<std::string> dataset_names() {
  std::vector<std::string> names;
  for (const auto& d : dataset_catalog()) names.push_back(d.name);
  return names;
}

void check_dataset_files(const DataConfig& config) {
  const auto& info = info_of(config.dataset);
  const std::string dir = directory_of(config);
  for (const auto& file : info.files) {
    const std::string path = dir + "/" + file;
    if (!std::filesystem::is_regular_file(path)) {
      throw UserError("dataset '" + info.name + "' is missing " + path +
                      (config.path.empty() ? " (install the Debian package " + info.debian_package + ")"
                                           : " (check data.path, or install the Debian package " +
                                                 info.debian_package + " and leave data.path empty)"));
    }
  }
}

DatasetSplits load_dataset(const DataConfig& config) {
  check_dataset_files(config);
  const auto& info = info_of(config.dataset);
  const std::string dir = directory_of(config);
  // Fashion-MNIST training-set statistics.
  constexpr double kMean = 0.2860, kStd = 0.3530;
  DatasetSplits splits;
  splits.train = load_idx_split(dir, info.files[0], info.files[1], config.max_train_samples, kMean, kStd, info);
  splits.test = load_idx_split(dir, info.files[2], info.files[3], config.max_test_samples, kMean, kStd, info);
  return splits;
}

}  // namespace drift
