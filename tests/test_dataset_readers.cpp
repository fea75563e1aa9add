// The readers of datasets a user downloads, on files the test writes in each distributed
// format: CIFAR's binary records (label byte(s), then three 1024-byte colour planes) and
// EMNIST's gzip IDX files.
#include <filesystem>
#include <fstream>

#include "catch_torch.hpp"
#include "data_files.hpp"
#include "engine/core/error.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/idx_reader.hpp"

#include <unistd.h>  // getpid
#include <zlib.h>

using namespace drift;
namespace fs = std::filesystem;

namespace {

// One record: `labels` then red, green and blue planes filled with r, g, b.
std::string record(const std::vector<std::uint8_t>& labels, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  std::string out(labels.begin(), labels.end());
  out += std::string(1024, static_cast<char>(r)) + std::string(1024, static_cast<char>(g)) +
         std::string(1024, static_cast<char>(b));
  return out;
}

using test::data_config;

void write(const fs::path& p, const std::string& bytes) { test::write_file(p, bytes); }

fs::path cifar10_folder(const std::string& tag) {
  const auto dir = test::fresh_folder("cifar-" + tag);
  for (int i = 1; i <= 5; ++i)  // batch i holds labels i-1 and i+4, pixels 10 * i
    write(dir / ("data_batch_" + std::to_string(i) + ".bin"),
          record({static_cast<std::uint8_t>(i - 1)}, 10 * i, 20, 30) +
              record({static_cast<std::uint8_t>(i + 4)}, 0, 0, 255));
  write(dir / "test_batch.bin", record({9}, 255, 0, 0));
  return dir;
}

}  // namespace

TEST_CASE("CIFAR-10's binary batches read as 3x32x32 images with their labels, normalised", "[data][cifar]") {
  const auto dir = cifar10_folder("ok");
  const auto splits = load_dataset(data_config("cifar10", dir));
  const auto& train = *splits.train;
  REQUIRE(train.size() == 10);
  CHECK(splits.test->size() == 1);
  CHECK(train.input_shape() == std::vector<std::int64_t>{3, 32, 32});
  CHECK(train.num_classes == 10);
  CHECK(train.class_names.at(9) == "truck");
  const std::vector<std::int64_t> labels(train.labels.data_ptr<std::int64_t>(),
                                         train.labels.data_ptr<std::int64_t>() + 10);
  CHECK(labels == std::vector<std::int64_t>{0, 5, 1, 6, 2, 7, 3, 8, 4, 9});
  // Record 2 is batch 2's first: red 20, green 20, blue 30, each plane whole.
  auto pixel = [&](std::int64_t n, std::int64_t c, std::int64_t y, std::int64_t x) {
    return train.images[n][c][y][x].item<double>() * train.pixel_std + train.pixel_mean;
  };
  CHECK(pixel(2, 0, 0, 0) == Approx(20.0 / 255).margin(1e-6));
  CHECK(pixel(2, 0, 31, 31) == Approx(20.0 / 255).margin(1e-6));
  CHECK(pixel(2, 2, 17, 3) == Approx(30.0 / 255).margin(1e-6));
  CHECK(pixel(1, 2, 0, 0) == Approx(1.0).margin(1e-6));
  CHECK(splits.test->labels[0].item<std::int64_t>() == 9);

  auto limited = data_config("cifar10", dir);
  limited.max_train_samples = 3;
  CHECK(load_dataset(limited).train->size() == 3);
  fs::remove_all(dir);
}

TEST_CASE("a truncated, mislabelled or missing CIFAR file is refused naming it", "[data][cifar]") {
  const auto dir = cifar10_folder("bad");
  const auto batch = dir / "data_batch_3.bin";
  write(batch, record({2}, 1, 2, 3).substr(0, 3000));
  CHECK_THROWS_WITH(
      load_dataset(data_config("cifar10", dir)),
      Catch::Contains(batch.string() + ": 3000 bytes is not a whole number of 3073-byte CIFAR-10 records") &&
          Catch::Contains("kriz/cifar.html"));
  write(batch, record({12}, 1, 2, 3));
  CHECK_THROWS_WITH(load_dataset(data_config("cifar10", dir)),
                    Catch::Contains(batch.string() + ": record 0 has label 12; CIFAR-10 has 10 classes"));
  fs::remove(batch);
  CHECK_THROWS_WITH(
      load_dataset(data_config("cifar10", dir)),
      Catch::Contains("dataset 'cifar10' is missing " + batch.string()) && Catch::Contains("check data.path"));
  fs::remove_all(dir);
}

TEST_CASE("CIFAR-100 reads fine labels, or the 20 coarse ones", "[data][cifar]") {
  const auto dir = fs::temp_directory_path() / ("drift-cifar100-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write(dir / "train.bin", record({3, 77}, 1, 1, 1) + record({19, 99}, 2, 2, 2));
  write(dir / "test.bin", record({0, 5}, 3, 3, 3));
  const auto fine = load_dataset(data_config("cifar100", dir));
  CHECK(fine.train->num_classes == 100);
  CHECK(fine.train->labels[1].item<std::int64_t>() == 99);
  const auto coarse = load_dataset(data_config("cifar100-coarse", dir));
  CHECK(coarse.train->num_classes == 20);
  CHECK(coarse.train->labels[0].item<std::int64_t>() == 3);
  CHECK(coarse.test->labels[0].item<std::int64_t>() == 0);
  // Three-byte records: a CIFAR-10 file read as CIFAR-100 is not a whole number of them.
  write(dir / "train.bin", record({1}, 0, 0, 0) + record({2}, 0, 0, 0));
  CHECK_THROWS_WITH(load_dataset(data_config("cifar100", dir)), Catch::Contains("3074-byte CIFAR-100 records"));
  fs::remove_all(dir);
}

namespace {

// An IDX file, gzip-compressed as EMNIST distributes it: magic (0, 0, 8, rank), big-endian
// dimensions, then the bytes.
void write_idx_gz(const fs::path& p, const std::vector<std::uint32_t>& dims, const std::vector<std::uint8_t>& data) {
  std::string bytes{0, 0, 8, static_cast<char>(dims.size())};
  for (auto d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>((d >> shift) & 0xff));
  bytes.append(data.begin(), data.end());
  gzFile f = gzopen(p.c_str(), "wb");
  REQUIRE(f != nullptr);
  gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

// Two 28x28 images, each one bright pixel stored at (row 2, column 5 + n), and their labels.
void write_emnist(const fs::path& dir, const std::string& split, std::vector<std::uint8_t> labels) {
  std::vector<std::uint8_t> images(2 * 28 * 28, 0);
  images[0 * 784 + 2 * 28 + 5] = 255;
  images[1 * 784 + 2 * 28 + 6] = 255;
  for (const std::string part : {"train", "test"}) {
    const auto prefix = dir / ("emnist-" + split + "-" + part + "-");
    write_idx_gz(prefix.string() + "images-idx3-ubyte.gz", {2, 28, 28}, images);
    write_idx_gz(prefix.string() + "labels-idx1-ubyte.gz", {2}, labels);
  }
}

}  // namespace

TEST_CASE("EMNIST's gzip IDX files read upright, with each split's classes", "[data][emnist]") {
  const auto dir = fs::temp_directory_path() / ("drift-emnist-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_emnist(dir, "balanced", {3, 46});
  const auto balanced = load_dataset(data_config("emnist-balanced", dir));
  CHECK(balanced.train->num_classes == 47);
  CHECK(balanced.train->labels[1].item<std::int64_t>() == 46);
  // EMNIST stores images transposed: the pixel stored at (2, 5) is at row 5, column 2.
  const auto& x = balanced.train->images;
  CHECK(x[0][0][5][2].item<double>() * balanced.train->pixel_std + balanced.train->pixel_mean ==
        Approx(1.0).margin(1e-6));
  CHECK(x[0][0][2][5].item<double>() * balanced.train->pixel_std + balanced.train->pixel_mean ==
        Approx(0.0).margin(1e-6));
  CHECK(x[1][0][6][2].item<double>() > x[1][0][2][6].item<double>());

  write_emnist(dir, "letters", {1, 26});  // letters count from 1
  const auto letters = load_dataset(data_config("emnist-letters", dir));
  CHECK(letters.train->num_classes == 26);
  CHECK(letters.train->labels[0].item<std::int64_t>() == 0);
  CHECK(letters.train->labels[1].item<std::int64_t>() == 25);
  write_emnist(dir, "letters", {0, 5});
  CHECK_THROWS_WITH(load_dataset(data_config("emnist-letters", dir)),
                    Catch::Contains("label 0 out of range: expected 1 to 26"));
  write_emnist(dir, "digits", {9, 10});
  CHECK_THROWS_WITH(load_dataset(data_config("emnist-digits", dir)),
                    Catch::Contains("label 10 out of range: expected 0 to 9"));
  CHECK_THROWS_WITH(load_dataset(data_config("emnist-byclass", dir)),
                    Catch::Contains("emnist-byclass-train-images-idx3-ubyte.gz") && Catch::Contains("nist.gov"));
  fs::remove_all(dir);
}

TEST_CASE("an IDX file is read only as far as the entries asked for", "[data][idx]") {
  const auto dir = fs::temp_directory_path() / ("drift-idx-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto path = (dir / "a.gz").string();
  write_idx_gz(path, {3, 2}, {1, 2, 3, 4, 5, 6});
  const auto whole = read_idx_gz(path);
  CHECK(whole.dims == std::vector<std::int64_t>{3, 2});
  CHECK(whole.data == std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6});
  const auto two = read_idx_gz(path, 2);
  CHECK(two.dims == std::vector<std::int64_t>{3, 2});  // as announced
  CHECK(two.data == std::vector<std::uint8_t>{1, 2, 3, 4});
  CHECK(read_idx_gz(path, 0).data.empty());
  CHECK(read_idx_gz(path, 7).data == whole.data);
  // A file cut short: refused when read whole or past its end, fine up to where it ends.
  write_idx_gz(path, {3, 2}, {1, 2, 3, 4, 5});
  CHECK_THROWS_WITH(read_idx_gz(path), Catch::Contains("announces 6 bytes of data, file has 5"));
  CHECK(read_idx_gz(path, 2).data == std::vector<std::uint8_t>{1, 2, 3, 4});
  CHECK_THROWS_WITH(read_idx_gz(path, 3), Catch::Contains("file has 5"));
  // Longer than announced: refused when read whole.
  write_idx_gz(path, {3, 2}, {1, 2, 3, 4, 5, 6, 7});
  CHECK_THROWS_WITH(read_idx_gz(path), Catch::Contains("announces 6 bytes of data, file has more"));
  write_idx_gz(path, {}, {});
  CHECK_THROWS_WITH(read_idx_gz(path), Catch::Contains("truncated IDX header"));
  fs::remove_all(dir);
}

TEST_CASE("every catalogue dataset names its files, how to get them and its loader", "[data]") {
  for (const auto& info : dataset_catalog()) {
    INFO(info.name);
    CHECK_FALSE(info.files.empty());
    CHECK_FALSE(info.install_hint.empty());
    CHECK(static_cast<bool>(info.load));
    CHECK(find_dataset(info.name) == &info);
  }
  CHECK(find_dataset("fashion-mnist")->install_hint == "install the Debian package dataset-fashion-mnist");
  CHECK(find_dataset("cifar10")->install_hint.find("cs.toronto.edu") != std::string::npos);
}
