#include "engine/data/leaf_dataset.hpp"

#include <sstream>
#include <unordered_map>

#include "engine/core/error.hpp"
#include "engine/data/leaf_json.hpp"

namespace drift {
namespace {

constexpr std::int64_t kFemnistPixels = 28 * 28;
constexpr std::int64_t kFemnistClasses = 62;
constexpr std::size_t kShakespeareLength = 80;

// One split's samples as flat arrays, each tagged with its writer's index in the training
// split (-1 for a test writer who never trains: LEAF's split by user).
struct FlatSplit {
  std::vector<float> inputs;
  std::vector<std::int64_t> labels, owners;
};

// The splits' users in order, owners indexed by the training users; at most `limit` samples
// (0: all), the first ones in user order. `add_user` moves a user's samples out, so that a
// full FEMNIST (2.5 GB of pixels) is never held twice.
template <class AddUser>
FlatSplit flatten(std::vector<LeafUser>& users, const std::unordered_map<std::string, std::int64_t>& train_index,
                  std::int64_t limit, AddUser add_user) {
  FlatSplit out;
  for (auto& u : users) {
    if (limit > 0 && static_cast<std::int64_t>(out.labels.size()) >= limit) break;
    const auto it = train_index.find(u.id);
    const std::int64_t owner = it == train_index.end() ? -1 : it->second;
    add_user(u, out);
    out.owners.resize(out.labels.size(), owner);
    if (limit > 0 && static_cast<std::int64_t>(out.labels.size()) > limit) {
      const auto width = out.inputs.size() / out.labels.size();
      out.labels.resize(static_cast<std::size_t>(limit));
      out.owners.resize(static_cast<std::size_t>(limit));
      out.inputs.resize(static_cast<std::size_t>(limit) * width);
    }
  }
  return out;
}

std::vector<std::string> names_of(const std::vector<LeafUser>& users) {
  std::vector<std::string> names;
  for (const auto& u : users) names.push_back(u.id);
  return names;
}

std::unordered_map<std::string, std::int64_t> index_of(const std::vector<LeafUser>& users) {
  std::unordered_map<std::string, std::int64_t> index;
  for (std::size_t i = 0; i < users.size(); ++i) index.emplace(users[i].id, static_cast<std::int64_t>(i));
  return index;
}

std::shared_ptr<Dataset> to_dataset(FlatSplit& flat, std::vector<std::int64_t> shape, std::int64_t num_classes) {
  auto d = std::make_shared<Dataset>();
  const auto n = static_cast<std::int64_t>(flat.labels.size());
  shape.insert(shape.begin(), n);
  // The tensor takes the vector's memory over instead of copying it.
  auto inputs = std::make_shared<std::vector<float>>(std::move(flat.inputs));
  d->images = torch::from_blob(
      inputs->data(), shape, [inputs](void*) mutable { inputs.reset(); }, torch::kFloat32);
  d->labels = torch::tensor(flat.labels, torch::kInt64);
  d->owners = torch::tensor(flat.owners, torch::kInt64);
  d->num_classes = num_classes;
  return d;
}

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string split_dir(const std::string& directory, const char* split) { return directory + "/" + split; }

}  // namespace

const std::string& shakespeare_vocabulary() {
  static const std::string letters =
      "\n !\"&'(),-.0123456789:;>?ABCDEFGHIJKLMNOPQRSTUVWXYZ[]abcdefghijklmnopqrstuvwxyz}";
  return letters;
}

DatasetSplits read_leaf_femnist(const std::string& directory, const DataConfig& config) {
  auto train_users = read_leaf_directory(split_dir(directory, "train"), kFemnistPixels);
  auto test_users = read_leaf_directory(split_dir(directory, "test"), kFemnistPixels);
  const auto index = index_of(train_users);
  auto add = [&](LeafUser& u, FlatSplit& out) {
    if (!u.x_text.empty() || !u.y_text.empty())
      throw UserError(u.file + ": user '" + u.id + "' holds text, expected FEMNIST's pixel lists and class numbers");
    for (std::size_t i = 0; i < u.y_values.size(); ++i) {
      const double y = u.y_values[i];
      if (y < 0 || y >= kFemnistClasses || y != static_cast<double>(static_cast<std::int64_t>(y)))
        throw UserError(u.file + ": user '" + u.id + "' sample " + std::to_string(i) + " has label " + number_text(y) +
                        ", expected a class 0 to 61");
      out.labels.push_back(static_cast<std::int64_t>(y));
    }
    for (const float v : u.x_values)
      if (!(v >= 0.0f && v <= 1.0f))
        throw UserError(u.file + ": user '" + u.id + "' has pixel value " + number_text(v) + ", expected 0 to 1");
    out.inputs.insert(out.inputs.end(), u.x_values.begin(), u.x_values.end());
    std::vector<float>().swap(u.x_values);
  };
  auto train_flat = flatten(train_users, index, config.max_train_samples, add);
  auto test_flat = flatten(test_users, index, config.max_test_samples, add);
  auto train = to_dataset(train_flat, {1, 28, 28}, kFemnistClasses);
  auto test = to_dataset(test_flat, {1, 28, 28}, kFemnistClasses);
  const double mean = train->images.mean().item<double>(), stddev = train->images.std().item<double>();
  for (auto* d : {train.get(), test.get()}) {
    d->images.sub_(mean).div_(stddev);
    d->pixel_mean = mean;
    d->pixel_std = stddev;
    d->owner_names = names_of(train_users);
  }
  return {train, test};
}

DatasetSplits read_leaf_shakespeare(const std::string& directory, const DataConfig& config) {
  auto train_users = read_leaf_directory(split_dir(directory, "train"), 0);
  auto test_users = read_leaf_directory(split_dir(directory, "test"), 0);
  const auto index = index_of(train_users);
  const auto& vocabulary = shakespeare_vocabulary();
  auto code = [&](const LeafUser& u, std::size_t sample, char c) {
    const auto at = vocabulary.find(c);
    if (at == std::string::npos)
      throw UserError(u.file + ": user '" + u.id + "' sample " + std::to_string(sample) + " holds the byte " +
                      std::to_string(static_cast<unsigned char>(c)) +
                      ", which is not in LEAF's 80-character vocabulary");
    return static_cast<std::int64_t>(at);
  };
  auto add = [&](LeafUser& u, FlatSplit& out) {
    if (u.x_rows > 0 || !u.y_values.empty())
      throw UserError(u.file + ": user '" + u.id + "' holds numbers, expected Shakespeare's strings");
    for (std::size_t i = 0; i < u.x_text.size(); ++i) {
      const auto& x = u.x_text[i];
      const auto& y = u.y_text[i];
      if (x.size() != kShakespeareLength || y.size() != 1)
        throw UserError(u.file + ": user '" + u.id + "' sample " + std::to_string(i) + " has " +
                        std::to_string(x.size()) + " characters in x and " + std::to_string(y.size()) +
                        " in y, expected 80 and 1");
      for (char c : x) out.inputs.push_back(static_cast<float>(code(u, i, c)));
      out.labels.push_back(code(u, i, y[0]));
    }
  };
  auto train_flat = flatten(train_users, index, config.max_train_samples, add);
  auto test_flat = flatten(test_users, index, config.max_test_samples, add);
  auto train = to_dataset(train_flat, {static_cast<std::int64_t>(kShakespeareLength)}, 80);
  auto test = to_dataset(test_flat, {static_cast<std::int64_t>(kShakespeareLength)}, 80);
  for (auto* d : {train.get(), test.get()}) d->owner_names = names_of(train_users);
  return {train, test};
}

}  // namespace drift
