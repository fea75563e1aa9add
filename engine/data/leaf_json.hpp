#pragma once
// One JSON file of LEAF's benchmark data (https://leaf.cmu.edu): {"users": [...],
// "num_samples": [...], "user_data": {user: {"x": [...], "y": [...]}}}. Read with a streaming
// parser straight into flat arrays, since real files hold millions of numbers and a document
// tree would need ten times the memory. Free of LibTorch.
#include <cstdint>
#include <string>
#include <vector>

namespace drift {

// What one user's samples hold, in file order. Image tasks (FEMNIST) give every x as a list of
// numbers and every y as a number; text tasks (Shakespeare) give both as strings.
struct LeafUser {
  std::string id;
  std::string file;                 // the file it came from, for messages
  std::int64_t declared = 0;        // its entry in num_samples
  std::vector<float> x_values;      // numeric x, row after row
  std::int64_t x_rows = 0;          // numeric x: how many rows
  std::vector<std::string> x_text;  // text x
  std::vector<double> y_values;     // numeric y
  std::vector<std::string> y_text;  // text y
  std::int64_t samples() const { return x_rows + static_cast<std::int64_t>(x_text.size()); }
  std::int64_t labels() const { return static_cast<std::int64_t>(y_values.size() + y_text.size()); }
};

// Reads one file; users come in the order of its "users" list. `row_width` > 0 requires every
// numeric x to have exactly that many values. Throws UserError naming the file and, where there
// is one, the user and sample, for malformed JSON, a missing key, counts that disagree
// (users vs num_samples vs user_data, x vs y vs num_samples), mixed kinds or a wrong row width.
std::vector<LeafUser> read_leaf_json(const std::string& path, std::int64_t row_width);

// Every *.json file of `directory`, in name order, users concatenated; a user in two files is
// an error. Throws UserError when the directory is missing or holds no JSON file.
std::vector<LeafUser> read_leaf_directory(const std::string& directory, std::int64_t row_width);

}  // namespace drift
