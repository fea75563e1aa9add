#pragma once
// The binary versions of CIFAR-10 and CIFAR-100 (https://www.cs.toronto.edu/~kriz/cifar.html),
// as their authors distribute them: files of fixed-size records, each <label byte(s)> then the
// 32x32 image as three 1024-byte planes (red, green, blue).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/data/dataset.hpp"

namespace drift {

struct CifarFormat {
  std::string name;          // "CIFAR-10": how errors name it
  std::int64_t label_bytes;  // 1 (CIFAR-10) or 2 (CIFAR-100: coarse, fine)
  std::int64_t label_index;  // which of them is the label
  std::int64_t num_classes;
  std::vector<std::string> class_names;
  double mean, stddev;  // of the training pixels in [0, 1], over all channels
};

// Reads `files` in order, at most `limit` records in all (0: every one), into a Dataset of
// float [N, 3, 32, 32] images normalised with the format's mean and std. A file that is missing,
// not a whole number of records, or holds a label out of range is a UserError naming the file,
// what was expected and where the dataset comes from.
std::shared_ptr<Dataset> read_cifar(const std::vector<std::string>& files, const CifarFormat& format,
                                    std::int64_t limit);

}  // namespace drift
