#pragma once
// The kinds of failure drift distinguishes at its edges.
#include <stdexcept>
#include <string>

namespace drift {

// Bad input from a person: scenario file, CLI flag, missing dataset. The CLI prints the
// message as one line and exits with code 2, before anything is written to disk.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file drift writes could not be written (a full disk, a directory made read-only). Not the
// user's input and not a bug: the CLI prints one line and exits with code 1.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bytes that do not form a valid drift message (corrupt, truncated, oversized, wrong
// shape or dtype). Raised by every decoder instead of crashing or trusting the input.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace drift
