#pragma once
// The loaders the dataset catalogue names (dataset_catalog.cpp), one per family of file formats.
// Each reads the files of its catalogue row from `dir` and caps the splits at
// config.max_train_samples and max_test_samples.
#include <string>
#include <vector>

#include "engine/data/dataset.hpp"

namespace drift {

// Where tools/fetch-digits.sh puts the digit domains.
inline const std::string kDigitsRoot = "/usr/local/share/drift/digits";

// How one IDX dataset's files read: Fashion-MNIST as they are; EMNIST's images are stored
// transposed, and its letters split counts labels from 1.
struct IdxFormat {
  std::int64_t num_classes = 10;
  std::int64_t first_label = 0;
  bool transposed = false;
  double mean = 0.0, stddev = 1.0;  // of the training pixels in [0, 1]
  std::vector<std::string> class_names;
};
IdxFormat fashion_mnist_format();
// EMNIST's splits (Cohen et al. 2017), from the "gzip" distribution's files.
IdxFormat emnist_format(std::int64_t classes, std::int64_t first_label);

// Fashion-MNIST and EMNIST: info.files are the train images and labels, then the test ones.
DatasetSplits load_idx_dataset(const DatasetInfo& info, const std::string& dir, const DataConfig& config,
                               const IdxFormat& format);

// CIFAR-10 and CIFAR-100 (binary version): info.files are the training batches, then the test
// batch. `coarse`: CIFAR-100's 20 superclasses as labels.
DatasetSplits load_cifar10(const DatasetInfo& info, const std::string& dir, const DataConfig& config);
DatasetSplits load_cifar100(const DatasetInfo& info, const std::string& dir, const DataConfig& config, bool coarse);

// One digit domain (mnist, opencv-digits, sklearn-digits, synth-digits, mnist-m), every 5th
// sample held out; or digit5, the five together from their folders under `dir`.
DatasetSplits load_digit_domain(const std::string& name, const std::string& dir, const DataConfig& config);
DatasetSplits load_digit5(const std::string& root, const DataConfig& config);

}  // namespace drift
