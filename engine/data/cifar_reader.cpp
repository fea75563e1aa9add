#include "engine/data/cifar_reader.hpp"

#include <fstream>
#include <iterator>

#include "engine/core/error.hpp"

namespace drift {
namespace {

constexpr std::int64_t kPixels = 3 * 32 * 32;
constexpr const char* kSource = "the binary version from https://www.cs.toronto.edu/~kriz/cifar.html";

std::vector<std::uint8_t> read_all(const std::string& path, const CifarFormat& format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open " + format.name + " file (expected " + kSource + ")");
  return std::vector<std::uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::shared_ptr<Dataset> read_cifar(const std::vector<std::string>& files, const CifarFormat& format,
                                    std::int64_t limit) {
  const std::int64_t record = format.label_bytes + kPixels;
  std::vector<std::uint8_t> pixels;
  std::vector<std::int64_t> labels;
  for (const auto& path : files) {
    if (limit > 0 && static_cast<std::int64_t>(labels.size()) >= limit) break;
    const auto bytes = read_all(path, format);
    const auto size = static_cast<std::int64_t>(bytes.size());
    if (size == 0 || size % record != 0)
      throw UserError(path + ": " + std::to_string(size) + " bytes is not a whole number of " + std::to_string(record) +
                      "-byte " + format.name + " records (truncated, or not " + kSource + ")");
    for (std::int64_t r = 0; r < size / record; ++r) {
      if (limit > 0 && static_cast<std::int64_t>(labels.size()) >= limit) break;
      const auto* at = bytes.data() + r * record;
      const std::int64_t label = at[format.label_index];
      if (label >= format.num_classes)
        throw UserError(path + ": record " + std::to_string(r) + " has label " + std::to_string(label) + "; " +
                        format.name + " has " + std::to_string(format.num_classes) +
                        " classes (another dataset's file?)");
      labels.push_back(label);
      pixels.insert(pixels.end(), at + format.label_bytes, at + record);
    }
  }
  const auto n = static_cast<std::int64_t>(labels.size());
  auto dataset = std::make_shared<Dataset>();
  auto raw = torch::from_blob(pixels.data(), {n, 3, 32, 32}, torch::kUInt8);
  dataset->images = ((raw.to(torch::kFloat32) / 255.0 - format.mean) / format.stddev).contiguous();
  dataset->labels = torch::tensor(labels, torch::kInt64);
  dataset->num_classes = format.num_classes;
  dataset->class_names = format.class_names;
  dataset->pixel_mean = format.mean;
  dataset->pixel_std = format.stddev;
  return dataset;
}

}  // namespace drift
