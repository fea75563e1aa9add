#include "engine/data/leaf_json.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>

#include "engine/core/error.hpp"

namespace drift {
namespace {

using json = nlohmann::json;

// Where a value sits in LEAF's layout; anything else (LEAF's "hierarchies", say) is skipped.
enum class Slot {
  root,
  users_list,
  user_name,
  counts_list,
  count,
  user_map,
  user,
  x_list,
  x_item,
  x_row,
  x_number,
  y_list,
  y_item,
  other
};

struct Frame {
  Slot slot;
  bool array;
  std::string key;  // objects: the key whose value comes next
};

// A SAX handler (nlohmann's streaming interface) that fills LeafUsers as the parser walks.
class LeafSax {
 public:
  LeafSax(std::string path, std::int64_t row_width) : path_(std::move(path)), row_width_(row_width) {}

  bool null() { return scalar("null"); }
  bool boolean(bool) { return scalar("a boolean"); }
  bool number_integer(json::number_integer_t v) { return number(static_cast<double>(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return number(static_cast<double>(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return number(v); }
  bool binary(json::binary_t&) { return scalar("binary data"); }
  bool string(json::string_t& s) {
    switch (child_slot()) {
      case Slot::user_name:
        names_.push_back(s);
        return true;
      case Slot::x_item:
        current().x_text.push_back(s);
        return true;
      case Slot::y_item:
        current().y_text.push_back(s);
        return true;
      case Slot::other:
        return true;
      default:
        return scalar("a string");
    }
  }
  bool key(json::string_t& k) {
    stack_.back().key = k;
    return true;
  }
  bool start_object(std::size_t) {
    if (stack_.empty()) {
      stack_.push_back({Slot::root, false, {}});
      return true;
    }
    const Slot slot = child_slot();
    if (slot == Slot::user) {
      const std::string& id = stack_.back().key;
      if (!index_.emplace(id, users_.size()).second) fail("user_data holds user '" + id + "' twice");
      users_.push_back(LeafUser{});
      users_.back().id = id;
      users_.back().file = path_;
    } else if (slot == Slot::x_item) {
      fail(where() + ": x holds an object, expected a list of numbers or a string");
    } else if (slot != Slot::user_map && slot != Slot::other) {
      scalar("an object");
    }
    stack_.push_back({slot, false, {}});
    return true;
  }
  bool end_object() {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    if (stack_.empty()) fail("expected a JSON object at the top, found a list");
    Slot slot = child_slot();
    if (slot == Slot::x_item) {
      slot = Slot::x_row;
      row_length_ = 0;
    } else if (slot != Slot::users_list && slot != Slot::counts_list && slot != Slot::x_list && slot != Slot::y_list &&
               slot != Slot::other) {
      scalar("a list");
    }
    stack_.push_back({slot, true, {}});
    return true;
  }
  bool end_array() {
    if (stack_.back().slot == Slot::x_row) {
      if (row_width_ > 0 && row_length_ != row_width_)
        fail(where() + ": x holds " + std::to_string(row_length_) + " values, expected " + std::to_string(row_width_));
      ++current().x_rows;
    }
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) {
    fail("not valid JSON at byte " + std::to_string(position) + " (" + e.what() + ")");
  }

  std::vector<LeafUser> finish() {
    if (!seen_users_ || !seen_counts_ || !seen_data_)
      fail(std::string("missing the key '") +
           (!seen_users_    ? "users"
            : !seen_counts_ ? "num_samples"
                            : "user_data") +
           "' (LEAF files hold users, num_samples and user_data)");
    if (names_.size() != counts_.size())
      fail("lists " + std::to_string(names_.size()) + " users but " + std::to_string(counts_.size()) + " num_samples");
    std::vector<LeafUser> ordered;
    std::set<std::string> listed;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const auto it = index_.find(names_[i]);
      if (it == index_.end()) fail("user '" + names_[i] + "' is in users but not in user_data");
      if (!listed.insert(names_[i]).second) fail("user '" + names_[i] + "' is listed twice in users");
      LeafUser& u = users_[it->second];
      u.declared = counts_[i];
      check_counts(u);
      ordered.push_back(std::move(u));
    }
    if (ordered.size() != users_.size())
      for (const auto& u : users_)
        if (!listed.count(u.id)) fail("user '" + u.id + "' is in user_data but not in users");
    return ordered;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw UserError(path_ + ": " + what); }

  LeafUser& current() { return users_.back(); }

  // The slot of a value that appears inside the container on top of the stack.
  Slot child_slot() {
    if (stack_.empty()) fail("expected a JSON object at the top");
    const Frame& parent = stack_.back();
    switch (parent.slot) {
      case Slot::root:
        if (parent.key == "users") return seen_users_ = true, Slot::users_list;
        if (parent.key == "num_samples") return seen_counts_ = true, Slot::counts_list;
        if (parent.key == "user_data") return seen_data_ = true, Slot::user_map;
        return Slot::other;
      case Slot::users_list:
        return Slot::user_name;
      case Slot::counts_list:
        return Slot::count;
      case Slot::user_map:
        return Slot::user;
      case Slot::user:
        return parent.key == "x" ? Slot::x_list : parent.key == "y" ? Slot::y_list : Slot::other;
      case Slot::x_list:
        return Slot::x_item;
      case Slot::x_row:
        return Slot::x_number;
      case Slot::y_list:
        return Slot::y_item;
      default:
        return Slot::other;
    }
  }

  bool number(double v) {
    switch (child_slot()) {
      case Slot::count:
        if (v < 0 || v > 1e15 || v != std::floor(v))
          fail("num_samples holds " + std::to_string(v) + ", expected a count");
        counts_.push_back(static_cast<std::int64_t>(v));
        return true;
      case Slot::x_number:
        if (std::abs(v) > std::numeric_limits<float>::max())
          fail(where() + ": x holds " + std::to_string(v) + ", beyond a float");
        current().x_values.push_back(static_cast<float>(v));
        ++row_length_;
        return true;
      case Slot::y_item:
        current().y_values.push_back(v);
        return true;
      case Slot::other:
        return true;
      default:
        return scalar("a number");
    }
  }

  // A value of the wrong kind where LEAF's layout has a known meaning.
  bool scalar(const std::string& what) {
    const Slot slot = child_slot();
    if (slot == Slot::other) return true;
    static const char* expected[] = {"an object",
                                     "a list of user names",
                                     "a user name (string)",
                                     "a list of counts",
                                     "a count",
                                     "an object of users",
                                     "an object with x and y",
                                     "a list",
                                     "a list of numbers or a string",
                                     "a list of numbers",
                                     "a number",
                                     "a list",
                                     "a number or a string",
                                     ""};
    fail((users_.empty() ? std::string("the file") : where()) + ": found " + what + ", expected " +
         expected[static_cast<int>(slot)]);
  }

  std::string where() {
    return users_.empty() ? std::string("the file")
                          : "user '" + current().id + "' sample " + std::to_string(current().samples());
  }

  void check_counts(const LeafUser& u) const {
    if (u.x_rows > 0 && !u.x_text.empty()) fail("user '" + u.id + "' mixes numeric and text samples in x");
    if (!u.y_values.empty() && !u.y_text.empty()) fail("user '" + u.id + "' mixes numbers and strings in y");
    if (u.samples() != u.labels())
      fail("user '" + u.id + "' has " + std::to_string(u.samples()) + " samples in x but " +
           std::to_string(u.labels()) + " labels in y");
    if (u.samples() != u.declared)
      fail("user '" + u.id + "' has " + std::to_string(u.samples()) + " samples but num_samples says " +
           std::to_string(u.declared));
  }

  std::string path_;
  std::int64_t row_width_;
  std::vector<Frame> stack_;
  std::vector<std::string> names_;
  std::vector<std::int64_t> counts_;
  std::vector<LeafUser> users_;
  std::unordered_map<std::string, std::size_t> index_;
  std::int64_t row_length_ = 0;
  bool seen_users_ = false, seen_counts_ = false, seen_data_ = false;
};

}  // namespace

std::vector<LeafUser> read_leaf_json(const std::string& path, std::int64_t row_width) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot be read");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LeafSax sax(path, row_width);
  json::sax_parse(text, &sax);
  return sax.finish();
}

std::vector<LeafUser> read_leaf_directory(const std::string& directory, std::int64_t row_width) {
  if (!std::filesystem::is_directory(directory)) throw UserError(directory + ": no such directory");
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path().string());
  if (files.empty()) throw UserError(directory + ": holds no .json file");
  std::sort(files.begin(), files.end());  // directory order is not fixed
  std::vector<LeafUser> users;
  std::unordered_map<std::string, std::string> file_of;
  for (const auto& file : files) {
    for (auto& u : read_leaf_json(file, row_width)) {
      if (const auto [it, fresh] = file_of.emplace(u.id, file); !fresh)
        throw UserError(file + ": user '" + u.id + "' is also in " + it->second);
      users.push_back(std::move(u));
    }
  }
  return users;
}

}  // namespace drift
