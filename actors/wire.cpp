#include "actors/wire.hpp"

namespace drift::actors {

void add_message_types(caf::actor_system_config& cfg) { cfg.add_message_type<msg::Buffer>("drift.buffer"); }

std::string error_text(const caf::error& err) {
  const auto& context = err.context();
  if (context.size() == 1 && context.match_element<std::string>(0)) return context.get_as<std::string>(0);
  return caf::to_string(err);
}

}  // namespace drift::actors
