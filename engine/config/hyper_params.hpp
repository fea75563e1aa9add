#pragma once
// Local training's hyper-parameters, as the scenario's [training] section gives them and as a
// training task carries them to a client.
#include <cstdint>

namespace drift {

struct HyperParams {
  double learning_rate = 0.05;
  double momentum = 0.0;
  double weight_decay = 0.0;
  std::uint32_t local_epochs = 1;
  std::uint32_t batch_size = 64;
  bool drop_last = false;
  double grad_clip = 0.0;  // clip the global gradient norm of every step to this; 0 = off
  double lr_decay = 1.0;   // learning rate of round r = learning_rate * lr_decay^(r - 1) (server side)
};

}  // namespace drift
