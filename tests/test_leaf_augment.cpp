// LEAF's JSON (FEMNIST, Shakespeare) on files the test writes, natural clients, the
// character LSTM, and the crop-and-flip augmentation against hand-made tensors.
#include <algorithm>
#include <filesystem>

#include "catch_torch.hpp"
#include "data_files.hpp"
#include "engine/compose/federation_data.hpp"
#include "engine/core/error.hpp"
#include "engine/data/augment.hpp"
#include "engine/data/dataset.hpp"
#include "engine/data/leaf_dataset.hpp"
#include "engine/data/partition.hpp"
#include "engine/models/model.hpp"

using namespace drift;
namespace fs = std::filesystem;

namespace {

using test::data_config;

// An empty LEAF data folder: train/ and test/.
fs::path fresh_dir(const std::string& tag) {
  const auto dir = test::fresh_folder("leaf-" + tag);
  fs::create_directories(dir / "train");
  fs::create_directories(dir / "test");
  return dir;
}

void write_text(const fs::path& p, const std::string& text) { test::write_file(p, text); }

// A FEMNIST user: n samples, sample i all pixels (i + 1) / 10, label 10 * i + offset.
std::string femnist_user(int n, int offset) {
  std::string xs, ys;
  for (int i = 0; i < n; ++i) {
    std::string row;
    for (int p = 0; p < 784; ++p) row += (p ? "," : "") + std::to_string((i + 1) / 10.0);
    xs += (i ? ",[" : "[") + row + "]";
    ys += (i ? "," : "") + std::to_string(10 * i + offset);
  }
  return "{\"x\": [" + xs + "], \"y\": [" + ys + "]}";
}

// Two files of train users (a: 2 samples, b: 3, c: 1) and a test file (a: 1, c: 2).
fs::path femnist_folder(const std::string& tag) {
  const auto dir = fresh_dir(tag);
  write_text(dir / "train" / "part_0.json",
             "{\"users\": [\"b\", \"a\"], \"num_samples\": [3, 2], \"hierarchies\": [], "
             "\"user_data\": {\"a\": " +
                 femnist_user(2, 0) + ", \"b\": " + femnist_user(3, 1) + "}}");
  write_text(dir / "train" / "part_1.json",
             "{\"users\": [\"c\"], \"num_samples\": [1], \"user_data\": {\"c\": " + femnist_user(1, 5) + "}}");
  write_text(dir / "test" / "part_0.json",
             "{\"users\": [\"c\", \"a\"], \"num_samples\": [2, 1], \"user_data\": {\"a\": " + femnist_user(1, 2) +
                 ", \"c\": " + femnist_user(2, 3) + "}}");
  return dir;
}

std::vector<std::int64_t> values(const torch::Tensor& t) {
  const auto c = t.contiguous();
  return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

std::string error_of(const DataConfig& c) {
  try {
    load_dataset(c);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("LEAF FEMNIST reads users in file then list order, each sample tagged with its writer", "[data][leaf]") {
  const auto dir = femnist_folder("ok");
  const auto splits = load_dataset(data_config("femnist", dir));
  const auto& train = *splits.train;
  REQUIRE(train.size() == 6);
  CHECK(train.input_shape() == std::vector<std::int64_t>{1, 28, 28});
  CHECK(train.num_classes == 62);
  CHECK(train.owner_names == std::vector<std::string>{"b", "a", "c"});
  CHECK(values(train.owners) == std::vector<std::int64_t>{0, 0, 0, 1, 1, 2});
  CHECK(values(train.labels) == std::vector<std::int64_t>{1, 11, 21, 0, 10, 5});
  // Pixels come back through the training set's own normalisation.
  const auto pixel = [&](std::int64_t n) {
    return train.images[n][0][27][27].item<double>() * train.pixel_std + train.pixel_mean;
  };
  CHECK(pixel(2) == Approx(0.3).margin(1e-6));
  CHECK(pixel(5) == Approx(0.1).margin(1e-6));
  // Test samples name the training writer they belong to.
  CHECK(values(splits.test->owners) == std::vector<std::int64_t>{2, 2, 1});
  CHECK(values(splits.test->labels) == std::vector<std::int64_t>{3, 13, 2});
}

TEST_CASE("LEAF files with inconsistent counts, rows or JSON are refused, naming the file and user", "[data][leaf]") {
  const auto dir = femnist_folder("bad");
  const auto part = dir / "train" / "part_1.json";
  auto refuses = [&](const std::string& text, const std::string& expected) {
    write_text(part, text);
    const auto message = error_of(data_config("femnist", dir));
    INFO(message);
    CHECK(message.find(part.string()) != std::string::npos);
    CHECK(message.find(expected) != std::string::npos);
  };
  refuses("{\"users\": [\"c\"], \"num_samples\": [2], \"user_data\": {\"c\": " + femnist_user(1, 5) + "}}",
          "user 'c' has 1 samples but num_samples says 2");
  refuses("{\"users\": [\"c\", \"d\"], \"num_samples\": [1], \"user_data\": {\"c\": " + femnist_user(1, 5) + "}}",
          "lists 2 users but 1 num_samples");
  refuses("{\"users\": [\"c\"], \"num_samples\": [1], \"user_data\": {\"c\": {\"x\": [[0.5, 0.5]], \"y\": [1]}}}",
          "user 'c' sample 0: x holds 2 values, expected 784");
  refuses("{\"users\": [\"c\"], \"num_samples\": [1], \"user_data\": {\"c\": {\"x\": [], \"y\": [1]}}}",
          "0 samples in x but 1 labels in y");
  refuses("{\"users\": [\"c\"], \"num_samples\": [1], \"user_data\": {\"d\": " + femnist_user(1, 5) + "}}",
          "user 'c' is in users but not in user_data");
  refuses("{\"users\": [\"c\"], \"num_samples\": [1], \"user_data\": {\"c\": " + femnist_user(1, 5), "not valid JSON");
  refuses("{\"users\": [\"c\"], \"user_data\": {}}", "missing the key 'num_samples'");
  refuses("{\"users\": [\"c\"], \"num_samples\": [1], \"user_data\": {\"c\": " + femnist_user(1, 62) + "}}",
          "expected a class 0 to 61");
  refuses("{\"users\": [\"a\"], \"num_samples\": [1], \"user_data\": {\"a\": " + femnist_user(1, 5) + "}}",
          "user 'a' is also in");
  fs::remove_all(dir / "test");
  CHECK(error_of(data_config("femnist", dir)).find("test/") != std::string::npos);
}

TEST_CASE("LEAF Shakespeare maps characters to LEAF's 80-symbol vocabulary", "[data][leaf]") {
  const auto dir = fresh_dir("shakespeare");
  const std::string window(80, 'a');
  const std::string x2 = "To be, or not to be" + std::string(61, ' ');
  write_text(dir / "train" / "t.json",
             "{\"users\": [\"HAMLET\"], \"num_samples\": [2], \"user_data\": {\"HAMLET\": "
             "{\"x\": [\"" +
                 window + "\", \"" + x2 + "\"], \"y\": [\"b\", \"}\"]}}}");
  write_text(dir / "test" / "t.json",
             "{\"users\": [\"HAMLET\"], \"num_samples\": [1], \"user_data\": {\"HAMLET\": "
             "{\"x\": [\"" +
                 window + "\"], \"y\": [\"\\n\"]}}}");
  const auto splits = load_dataset(data_config("shakespeare", dir));
  const auto& vocabulary = shakespeare_vocabulary();
  REQUIRE(vocabulary.size() == 80);
  CHECK(splits.train->input_shape() == std::vector<std::int64_t>{80});
  CHECK(splits.train->num_classes == 80);
  CHECK(splits.train->images[1][0].item<float>() == static_cast<float>(vocabulary.find('T')));
  CHECK(splits.train->images[1][2].item<float>() == static_cast<float>(vocabulary.find(' ')));
  CHECK(values(splits.train->labels) == std::vector<std::int64_t>{static_cast<std::int64_t>(vocabulary.find('b')), 79});
  CHECK(values(splits.test->labels) == std::vector<std::int64_t>{0});

  write_text(dir / "test" / "t.json",
             "{\"users\": [\"HAMLET\"], \"num_samples\": [1], \"user_data\": {\"HAMLET\": "
             "{\"x\": [\"" +
                 std::string(79, 'a') + "~\"], \"y\": [\"a\"]}}}");
  CHECK(error_of(data_config("shakespeare", dir)).find("holds the byte 126, which is not in LEAF's") !=
        std::string::npos);
  write_text(dir / "test" / "t.json",
             "{\"users\": [\"HAMLET\"], \"num_samples\": [1], \"user_data\": {\"HAMLET\": "
             "{\"x\": [\"short\"], \"y\": [\"a\"]}}}");
  CHECK(error_of(data_config("shakespeare", dir)).find("has 5 characters in x and 1 in y, expected 80 and 1") !=
        std::string::npos);
}

TEST_CASE("natural clients are whole writers, a seeded sample of them when there are fewer clients", "[data][leaf]") {
  const std::vector<std::int64_t> owners = {0, 0, 1, 2, 2, 2, 3, -1};
  Rng all_rng = make_stream(1, "natural-writers");
  const auto all = partition_natural(owners, 4, 4, all_rng);
  CHECK(all.writers == std::vector<std::int64_t>{0, 1, 2, 3});
  CHECK(all.partition.indices == std::vector<std::vector<std::int64_t>>{{0, 1}, {2}, {3, 4, 5}, {6}});
  Rng some_rng = make_stream(1, "natural-writers");
  const auto some = partition_natural(owners, 4, 2, some_rng);
  REQUIRE(some.writers.size() == 2);
  CHECK(some.writers[0] < some.writers[1]);
  for (std::size_t k = 0; k < 2; ++k)
    for (auto i : some.partition.indices[k]) CHECK(owners[static_cast<std::size_t>(i)] == some.writers[k]);
  Rng again = make_stream(1, "natural-writers");
  CHECK(partition_natural(owners, 4, 2, again).writers == some.writers);
  Rng too_many = make_stream(1, "natural-writers");
  CHECK_THROWS_AS(partition_natural(owners, 4, 5, too_many), UserError);

  // Through the federation: the test set becomes the chosen writers' own samples, in client order.
  const auto dir = femnist_folder("natural");
  auto data = load_dataset(data_config("femnist", dir));
  Partition partition;
  const auto sizes = take_natural_clients(data, partition, 3, 1);
  CHECK(sizes == std::vector<std::int64_t>{0, 1, 2});  // b has no test samples, a one, c two
  CHECK(values(data.test->labels) == std::vector<std::int64_t>{2, 3, 13});
  CHECK(partition.indices == std::vector<std::vector<std::int64_t>>{{0, 1, 2}, {3, 4}, {5}});
}

TEST_CASE("char-lstm reads token sequences and is a function of the seed", "[models][leaf]") {
  const auto a = make_model("char-lstm", {80}, 80, 7);
  const auto b = make_model("char-lstm", {80}, 80, 7);
  const auto tokens = torch::arange(160, torch::kFloat32).remainder(80).view({2, 80});
  const auto out = a->forward(tokens);
  CHECK(out.features.sizes() == torch::IntArrayRef{2, 256});
  CHECK(out.logits.sizes() == torch::IntArrayRef{2, 80});
  CHECK(torch::equal(out.logits, b->forward(tokens).logits));
  CHECK_FALSE(torch::equal(out.logits, make_model("char-lstm", {80}, 80, 8)->forward(tokens).logits));
  CHECK_THROWS_AS(make_model("char-lstm", {1, 28, 28}, 10, 7), UserError);
  ModelOptions levels;
  levels.feature_levels = true;
  const auto staged = make_model("char-lstm", {80}, 80, 7, levels)->forward(tokens);
  REQUIRE(staged.levels.size() == 2);  // each LSTM layer's last hidden state
  CHECK(staged.levels[1].sizes() == torch::IntArrayRef{2, 256});
  CHECK(torch::allclose(staged.levels[1], staged.features));
}

TEST_CASE("crop and flip move pixels as drawn, padding with black", "[data][augment]") {
  // Two 1x2x3 images: 1..6 and 7..12.
  const auto images = torch::arange(1, 13, torch::kFloat32).view({2, 1, 2, 3});
  // Sample 0: one row down, no shift sideways (of padding 1), mirrored. Sample 1: untouched.
  const auto out = crop_and_flip(images, 1, torch::full({1}, -9.0), {{2, 1, true}, {1, 1, false}});
  const auto expected0 = torch::tensor({6.0f, 5.0f, 4.0f, -9.0f, -9.0f, -9.0f}).view({1, 2, 3});
  CHECK(torch::equal(out[0], expected0));
  CHECK(torch::equal(out[1], images[1]));
  // Top-left corner: the first row and column are padding.
  const auto corner = crop_and_flip(images, 1, torch::zeros({1}), {{0, 0, false}, {0, 0, false}});
  CHECK(torch::equal(corner[0], torch::tensor({0.0f, 0.0f, 0.0f, 0.0f, 1.0f, 2.0f}).view({1, 2, 3})));

  AugmentConfig cifar;
  cifar.crop_padding = 4;
  cifar.flip = true;
  Rng rng = make_stream(3, "augment", {0, 1, 0, 0});
  const auto draws = draw_crop_flips(500, cifar, rng);
  std::int64_t flips = 0, lowest = 8, highest = 0;
  for (const auto& d : draws) {
    flips += d.flip;
    lowest = std::min({lowest, d.top, d.left});
    highest = std::max({highest, d.top, d.left});
  }
  CHECK(lowest == 0);
  CHECK(highest == 8);
  CHECK(flips > 200);
  CHECK(flips < 300);
  Rng same = make_stream(3, "augment", {0, 1, 0, 0});
  const auto x = torch::randn({500, 3, 8, 8});
  const auto fill = torch::tensor({-1.0f, -2.0f, -3.0f});
  const auto out3 = augment_batch(x, cifar, fill, same);
  CHECK(torch::equal(out3, crop_and_flip(x, 4, fill, draws)));
  // Every channel pads with its own black: a sample cropped at the corner starts with it.
  const auto first =
      std::find_if(draws.begin(), draws.end(), [](const CropFlip& d) { return d.top == 0 && d.left == 0; });
  REQUIRE(first != draws.end());
  const auto at = first - draws.begin();
  for (std::int64_t c = 0; c < 3; ++c) CHECK(out3[at][c][0][0].item<float>() == fill[c].item<float>());
  cifar.scope = AugmentScope::batch;
  Rng batch_rng = make_stream(3, "augment", {0, 1, 0, 0});
  const auto shared = draw_crop_flips(4, cifar, batch_rng);
  for (const auto& d : shared) CHECK((d.top == draws[0].top && d.left == draws[0].left && d.flip == draws[0].flip));
  AugmentConfig off;
  Rng unused = make_stream(3, "augment");
  CHECK(torch::equal(augment_batch(x, off, fill, unused), x));
}

TEST_CASE("per-channel normalisation maps pixels through each channel's own mean and std", "[data][augment]") {
  auto train = std::make_shared<Dataset>();
  // Pixels 0.5 in every channel, stored with the scalar normalisation (p - 0.5) / 0.25.
  train->images = torch::zeros({2, 3, 2, 2});
  train->labels = torch::zeros({2}, torch::kInt64);
  train->pixel_mean = 0.5;
  train->pixel_std = 0.25;
  DatasetSplits splits{train, train};
  normalise_channels(splits, {0.5, 0.25, 1.0}, {0.5, 0.25, 2.0});
  const auto& images = splits.train->images;
  CHECK(images[1][0][1][1].item<float>() == 0.0f);    // (0.5 - 0.5) / 0.5
  CHECK(images[1][1][1][1].item<float>() == 1.0f);    // (0.5 - 0.25) / 0.25
  CHECK(images[1][2][1][1].item<float>() == -0.25f);  // (0.5 - 1) / 2
  CHECK(splits.test->images[0][1][0][0].item<float>() == 1.0f);
  CHECK(torch::equal(splits.train->black(), torch::tensor({-1.0f, -1.0f, -0.5f})));
  CHECK(train->images[0][0][0][0].item<float>() == 0.0f);  // the loaded dataset itself is untouched
  CHECK_THROWS_WITH(normalise_channels(splits, {0.5}, {0.5}), Catch::Contains("one value per image channel (3)"));
  CHECK_THROWS_WITH(normalise_channels(splits, {0.5, 0.5, 0.5}, {0.5, 0.0, 0.5}), Catch::Contains("must be > 0"));
}
