#include "engine/sim/personal_evaluations.hpp"

#include "engine/tensors/tensor_archive.hpp"

#include <cmath>

namespace drift {

void PersonalEvaluations::report(RoundReport& r) const {
  std::vector<EvalResult> parts;
  r.client_accuracy.assign(latest_.size(), std::nan(""));
  for (std::size_t c = 0; c < latest_.size(); ++c) {
    if (!latest_[c]) continue;
    const auto& e = *latest_[c];
    parts.push_back(e);
    std::uint64_t hits = 0, n = 0;
    for (std::size_t k = 0; k < e.count.size(); ++k) {
      hits += e.correct[k];
      n += e.count[k];
    }
    r.client_accuracy[c] = n ? static_cast<double>(hits) / static_cast<double>(n) : std::nan("");
  }
  r.clients_evaluated = static_cast<std::uint32_t>(parts.size());
  r.evaluated = true;
  const auto classes = parts.empty() ? std::int64_t{0} : static_cast<std::int64_t>(parts.front().count.size());
  const auto summary = combine_evaluations(parts, classes);
  r.test_accuracy = summary.accuracy;
  r.test_loss = summary.loss;
  r.per_class_accuracy = summary.per_class_accuracy;
}

void PersonalEvaluations::archive(StateArchive& ar) {
  ar.section("personal");
  const auto clients = latest_.size();
  ar.vector(latest_,
            [&](std::optional<EvalResult>& r) { ar.optional(r, [&](EvalResult& e) { archive_eval_result(ar, e); }); });
  if (latest_.size() != clients) throw DecodeError("a checkpoint's evaluations are for another population");
}

}  // namespace drift
