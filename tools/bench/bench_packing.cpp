// Does training K clients in lockstep pay on this machine (issue 17's packed clients)? For
// drift's two-conv CNNs it times one SGD step of K clients (batch 64 each, one thread, as a
// trainer slot runs) two ways and reports samples per second and achieved GFLOP/s:
//   unpacked  K drift models, one after the other: forward, cross-entropy, backward, SGD step
//   grouped   one module holding the K clients: convolutions grouped over the clients' stacked
//             channels, the fully connected layers as batched matmuls, one SGD step
//   im2col    the same, each convolution as one batched matmul over unfolded patches
// against the single-thread GEMM rate measured in the same run (the roofline). It also checks
// that a packed step updates every client's weights as its own step does (max |difference|).
// The packing itself lives here for now: the engine and the device pool do not pack yet.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "engine/models/model.hpp"

using namespace drift;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::int64_t kBatch = 64, kClasses = 10, kSide = 28;

struct Shape {
  const char* name;
  std::int64_t c1, c2, features;
};

// Forward multiply-adds x 2 of one 1x28x28 sample; training costs about three times that.
double forward_flops(const Shape& s) {
  const double a = 24 * 24, b = 8 * 8;  // output sides after the valid 5x5 convolutions
  return 2 * (s.c1 * 25 * a + s.c2 * s.c1 * 25 * b + s.c2 * 16.0 * s.features + s.features * kClasses);
}

double seconds_of(const std::function<void()>& step, int repeats) {
  step();  // warm-up: allocator, kernels chosen
  const auto t = Clock::now();
  for (int i = 0; i < repeats; ++i) step();
  return std::chrono::duration<double>(Clock::now() - t).count() / repeats;
}

double gemm_gflops() {
  const auto a = torch::rand({1024, 1024}), b = torch::rand({1024, 1024});
  const double s = seconds_of([&] { auto c = torch::mm(a, b); }, 10);
  return 2.0 * 1024 * 1024 * 1024 / s / 1e9;
}

// K clients' weights stacked: convolution weights along the output channels (grouped
// convolution), linear weights as [K, in, out] for baddbmm.
struct Packed {
  torch::Tensor w1, b1, w2, b2, f, fb, h, hb;
  std::int64_t k;
  std::vector<torch::Tensor> params() const { return {w1, b1, w2, b2, f, fb, h, hb}; }

  Packed(const std::vector<std::shared_ptr<Model>>& models) : k(static_cast<std::int64_t>(models.size())) {
    std::vector<torch::Tensor> parts[8];
    for (const auto& m : models) {
      auto p = m->named_parameters();
      parts[0].push_back(p["conv1.weight"]), parts[1].push_back(p["conv1.bias"]);
      parts[2].push_back(p["conv2.weight"]), parts[3].push_back(p["conv2.bias"]);
      parts[4].push_back(p["fc.weight"].t()), parts[5].push_back(p["fc.bias"].unsqueeze(0));
      parts[6].push_back(p["head.weight"].t()), parts[7].push_back(p["head.bias"].unsqueeze(0));
    }
    torch::Tensor* out[8] = {&w1, &b1, &w2, &b2, &f, &fb, &h, &hb};
    for (int i = 0; i < 8; ++i)
      *out[i] = (i < 4 ? torch::cat(parts[i]) : torch::stack(parts[i])).detach().clone().set_requires_grad(true);
  }

  // The convolutions as batched matmuls over unfolded patches (im2col), one GEMM per layer for
  // all K clients: the other way to pack, when grouped convolutions are slow.
  torch::Tensor forward_gemm(const torch::Tensor& x) const {
    namespace F = torch::nn::functional;
    const auto b = x.size(0);
    auto conv = [&](const torch::Tensor& in, const torch::Tensor& w, const torch::Tensor& bias) {
      // in: [K*B, C, H, W] client-major; w: [K*Cout, C, 5, 5]
      const auto c = in.size(1), side = in.size(2) - 4;
      auto cols = F::unfold(in, F::UnfoldFuncOptions(5)).view({k, b, c * 25, side * side});
      cols = cols.permute({0, 2, 1, 3}).reshape({k, c * 25, b * side * side});
      const auto cout = w.size(0) / k;
      auto out = torch::baddbmm(bias.view({k, cout, 1}), w.view({k, cout, c * 25}), cols);  // [K, Cout, B*side*side]
      return out.view({k, cout, b, side, side}).transpose(1, 2).reshape({k * b, cout, side, side});
    };
    auto y = x.transpose(0, 1).reshape({k * b, 1, kSide, kSide});
    y = F::max_pool2d(torch::relu(conv(y, w1, b1)), F::MaxPool2dFuncOptions(2));
    y = F::max_pool2d(torch::relu(conv(y, w2, b2)), F::MaxPool2dFuncOptions(2));
    y = y.view({k, b, -1});
    y = torch::relu(torch::baddbmm(fb, y, f));
    return torch::baddbmm(hb, y, h);
  }

  // x: [B, K, 1, H, W] (client k's batch in slot k); logits [K, B, C].
  torch::Tensor forward(const torch::Tensor& x) const {
    namespace F = torch::nn::functional;
    auto y = x.flatten(1, 2);  // [B, K, H, W]: one input channel per client
    y = F::max_pool2d(torch::relu(F::conv2d(y, w1, F::Conv2dFuncOptions().bias(b1).groups(k))), F::MaxPool2dFuncOptions(2));
    y = F::max_pool2d(torch::relu(F::conv2d(y, w2, F::Conv2dFuncOptions().bias(b2).groups(k))), F::MaxPool2dFuncOptions(2));
    y = y.view({y.size(0), k, -1}).transpose(0, 1);  // [K, B, c2 h w]
    y = torch::relu(torch::baddbmm(fb, y, f));
    return torch::baddbmm(hb, y, h);
  }
};

struct Row {
  double unpacked_s, packed_s, gemm_s, max_diff;
};

Row measure(const Shape& shape, std::int64_t k, int repeats) {
  std::vector<std::shared_ptr<Model>> models;
  for (std::int64_t i = 0; i < k; ++i) models.push_back(make_model(shape.name, {1, kSide, kSide}, kClasses, 100 + i));
  Packed packed(models);
  const auto x = torch::randn({kBatch, k, 1, kSide, kSide});
  const auto y = torch::randint(kClasses, {k, kBatch}, torch::kInt64);
  const double lr = 0.05;

  // Correctness first: one packed step against each client's own step, from the same weights.
  {
    torch::optim::SGD opt(packed.params(), torch::optim::SGDOptions(lr));
    opt.zero_grad();
    const auto logits = packed.forward(x);
    // Each client's mean loss; their sum has each client's own gradient in its slice.
    (torch::nn::functional::cross_entropy(logits.reshape({k * kBatch, kClasses}), y.reshape({k * kBatch}),
                                          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
     kBatch)
        .backward();
    opt.step();
  }
  double max_diff = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    auto& m = *models[static_cast<std::size_t>(i)];
    torch::optim::SGD opt(m.parameters(), torch::optim::SGDOptions(lr));
    opt.zero_grad();
    torch::nn::functional::cross_entropy(m.forward(x.select(1, i)).logits, y[i]).backward();
    opt.step();
    auto p = m.named_parameters();
    max_diff = std::max({max_diff, (p["conv1.weight"] - packed.w1.slice(0, i * shape.c1, (i + 1) * shape.c1)).abs().max().item<double>(),
                         (p["conv2.weight"] - packed.w2.slice(0, i * shape.c2, (i + 1) * shape.c2)).abs().max().item<double>(),
                         (p["fc.weight"].t() - packed.f[i]).abs().max().item<double>(),
                         (p["head.weight"].t() - packed.h[i]).abs().max().item<double>()});
  }

  std::vector<torch::optim::SGD> opts;
  for (auto& m : models) opts.emplace_back(m->parameters(), torch::optim::SGDOptions(lr));
  const double unpacked = seconds_of([&] {
    for (std::int64_t i = 0; i < k; ++i) {
      auto& opt = opts[static_cast<std::size_t>(i)];
      opt.zero_grad();
      torch::nn::functional::cross_entropy(models[static_cast<std::size_t>(i)]->forward(x.select(1, i)).logits, y[i]).backward();
      opt.step();
    }
  }, repeats);
  torch::optim::SGD packed_opt(packed.params(), torch::optim::SGDOptions(lr));
  auto packed_step = [&](bool as_gemm) {
    packed_opt.zero_grad();
    const auto logits = as_gemm ? packed.forward_gemm(x) : packed.forward(x);
    (torch::nn::functional::cross_entropy(logits.reshape({k * kBatch, kClasses}), y.reshape({k * kBatch}),
                                          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
     kBatch)
        .backward();
    packed_opt.step();
  };
  // The two packed forms agree before either is timed.
  max_diff = std::max(max_diff, (packed.forward(x) - packed.forward_gemm(x)).abs().max().item<double>());
  const double grouped = seconds_of([&] { packed_step(false); }, repeats);
  const double as_gemm = seconds_of([&] { packed_step(true); }, repeats);
  return {unpacked, grouped, as_gemm, max_diff};
}

}  // namespace

int main() {
  at::set_num_threads(1);  // one trainer slot, one thread
  const double gemm = gemm_gflops();
  std::printf("packed clients, one thread, batch %lld per client; single-thread GEMM (1024^3 float) %.1f GFLOP/s\n\n",
              static_cast<long long>(kBatch), gemm);
  std::printf("%-10s %4s %10s %10s %10s %8s %8s %8s %8s %8s %10s\n", "model", "K", "unpacked", "grouped", "im2col",
              "speedup", "speedup", "unpacked", "grouped", "im2col", "max");
  std::printf("%-10s %4s %10s %10s %10s %8s %8s %8s %8s %8s %10s\n", "", "", "smp/s", "smp/s", "smp/s", "grouped",
              "im2col", "%GEMM", "%GEMM", "%GEMM", "|diff|");
  for (const Shape& shape : {Shape{"small-cnn", 16, 32, 128}, Shape{"cnn4", 32, 64, 512}}) {
    for (std::int64_t k : {1, 4, 8, 32}) {
      const auto r = measure(shape, k, k >= 32 ? 3 : 10);
      const double samples = static_cast<double>(k * kBatch);
      const double flops = 3 * forward_flops(shape) * samples;
      auto share = [&](double s) { return 100 * flops / s / 1e9 / gemm; };
      std::printf("%-10s %4lld %10.0f %10.0f %10.0f %7.2fx %7.2fx %7.1f%% %7.1f%% %7.1f%% %10.2e\n", shape.name,
                  static_cast<long long>(k), samples / r.unpacked_s, samples / r.packed_s, samples / r.gemm_s,
                  r.unpacked_s / r.packed_s, r.unpacked_s / r.gemm_s, share(r.unpacked_s), share(r.packed_s),
                  share(r.gemm_s), r.max_diff);
    }
  }
  return 0;
}
