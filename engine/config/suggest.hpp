#pragma once
// "Did you mean" for misspelt keys and names.
#include <string>
#include <string_view>
#include <vector>

namespace drift {

std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate within a distance that still looks like a typo, or "".
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c": the choices in an error message.
std::string join(const std::vector<std::string>& words);

}  // namespace drift
