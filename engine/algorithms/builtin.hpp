#pragma once
// The algorithms compiled into drift; registry.cpp lists them. Adding one = one new file
// with a *_info() function, one line here, one line in registry.cpp.
#include "engine/algorithms/algorithm.hpp"

namespace drift {

AlgorithmInfo fedavg_info();
AlgorithmInfo fedprox_info();
AlgorithmInfo fedadam_info();
AlgorithmInfo fedyogi_info();
AlgorithmInfo fedadagrad_info();
AlgorithmInfo fedavgm_info();
AlgorithmInfo fednova_info();
// FedNova's local normaliser a_i of a client that took `steps` SGD steps with `momentum`.
double fednova_normaliser(std::uint32_t steps, double momentum);
// Participation-robust server halves and the baselines of their papers (docs/algorithms.md#participation).
AlgorithmInfo fedau_info();
AlgorithmInfo fedavg_participants_info();
AlgorithmInfo fedavg_all_info();
AlgorithmInfo known_probability_info();
AlgorithmInfo mifa_info();
AlgorithmInfo fedvarp_info();
AlgorithmInfo amplified_fedavg_info();
AlgorithmInfo fedawe_info();
AlgorithmInfo scaffold_info();
AlgorithmInfo fedproto_info();
AlgorithmInfo fedskc_info();
AlgorithmInfo fedsc_info();
AlgorithmInfo moon_info();
AlgorithmInfo fednh_info();
AlgorithmInfo fedrcl_info();
AlgorithmInfo fedccl_info();
// Heterogeneous FL: private models, possibly of different architectures.
AlgorithmInfo fedktl_info();
AlgorithmInfo fedproto_ht_info();
AlgorithmInfo feddistill_info();
AlgorithmInfo lg_fedavg_info();
AlgorithmInfo fedgh_info();

// FedAvg's server half (sample-weighted mean), reused by algorithms that only change the client.
std::unique_ptr<ServerAlgorithm> make_fedavg_server();
// FedAvg's client half, plain local SGD on cross-entropy, for algorithms that only change the server.
std::unique_ptr<ClientAlgorithm> make_local_sgd_client();

// The packed objective of a client half that is plain local SGD on cross-entropy.
inline PackedObjective plain_local_sgd(const ParamSet&) { return {}; }

}  // namespace drift
