#pragma once
// What the server accepts as a client's update, whoever sent the bytes (a worker on another
// machine may be faulty or hostile): it comes from the client the task went to, has the global
// model's names and shapes, holds only finite values, and, for private models, carries an
// evaluation that covers exactly the client's own test split.
#include <cstdint>
#include <optional>

#include "engine/tensors/federated_types.hpp"

namespace drift {

// The client's held-out test split, which its private-model evaluation must cover.
struct PersonalSplit {
  std::uint64_t begin = 0, end = 0;
  std::size_t classes = 0;
};

// Throws DecodeError naming what is wrong.
void check_update(const ClientUpdate& update, std::uint32_t client_id, const NamedTensors& reference,
                  const std::optional<PersonalSplit>& split);

}  // namespace drift
