#pragma once
// Opening a file a person named in a scenario or on the command line: a directory, or a file
// that cannot be opened, is refused with one line naming it and what it should have been.
#include <fstream>
#include <string>

namespace drift {

// `what` says what the file should be ("partition file (JSON)"). Throws UserError.
std::ifstream open_input_file(const std::string& path, const std::string& what);

}  // namespace drift
