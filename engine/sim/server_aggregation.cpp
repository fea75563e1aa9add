#include "engine/sim/server_aggregation.hpp"

#include "engine/core/phase_times.hpp"

namespace drift {

EdgeAggregated aggregate_at(ServerAlgorithm& server, NamedTensors& model, const std::vector<ClientUpdate>& updates,
                            const AggregationInput& input) {
  const PhaseScope timed("server: aggregate");  // (ends before the caller hands the result on)
  EdgeAggregated out;
  if (!updates.empty())
    server.aggregate(model, updates, input);
  else if (!server.aggregate_nothing(model, input))
    return out;
  out.moved = true;
  out.metrics = server.metrics();
  out.shares = server.shares(updates);
  return out;
}

}  // namespace drift
