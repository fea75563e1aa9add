#pragma once
// Private models (AlgorithmInfo::private_models): every client's latest evaluation of its own
// model on its held-out split, kept by client id. Both round drivers record one whenever a
// client's model changed (whether or not the server used its upload) and report them at each
// evaluated aggregation.
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/core/state_archive.hpp"
#include "engine/metrics/evaluation.hpp"
#include "engine/metrics/round_report.hpp"

namespace drift {

class PersonalEvaluations {
 public:
  explicit PersonalEvaluations(std::size_t clients) : latest_(clients) {}

  void record(std::uint32_t client, const EvalResult& result) { latest_.at(client) = result; }

  // Every client's accuracy as of the last model it trained (NaN before its first), and the
  // sample-weighted accuracy over the clients evaluated so far (PFLlib's figure once every
  // client has trained).
  void report(RoundReport& r) const;
  void archive(StateArchive& ar);

 private:
  std::vector<std::optional<EvalResult>> latest_;
};

}  // namespace drift
