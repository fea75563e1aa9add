#include "engine/data/dataset.hpp"

#include <filesystem>

#include "engine/core/error.hpp"

namespace drift {
namespace {

const DatasetInfo& info_of(const std::string& name) {
  if (const auto* info = find_dataset(name)) return *info;
  throw UserError("unknown dataset '" + name + "'");
}

std::string directory_of(const DataConfig& config) {
  return config.path.empty() ? info_of(config.dataset).default_path : config.path;
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

void check_dataset_files(const DataConfig& config) {
  const auto& info = info_of(config.dataset);
  const std::string dir = directory_of(config);
  for (const auto& file : info.files) {
    const std::string path = dir + "/" + file;
    const bool folder = file.back() == '/';
    if (folder ? !std::filesystem::is_directory(path) : !std::filesystem::is_regular_file(path)) {
      const std::string hint = config.path.empty() ? " (" + info.install_hint + ")"
                               : info.debian_package.empty()
                                   ? " (check data.path: " + info.install_hint + ")"
                                   : " (check data.path, or " + info.install_hint + " and leave data.path empty)";
      throw UserError("dataset '" + info.name + "' is missing " + path + hint);
    }
  }
}

DatasetSplits load_dataset(const DataConfig& config) {
  check_dataset_files(config);
  const auto& info = info_of(config.dataset);
  return info.load(info, directory_of(config), config);
}

}  // namespace drift
