// Does training K clients in lockstep pay on this machine (issue 17's packed clients)? For
// drift's small-cnn, cnn4 and resnet8 (width 16) it times one SGD step of K clients (batch 64
// each, 1x28x28 inputs, one thread, as a trainer slot runs) and reports samples per second and
// achieved GFLOP/s:
//   unpacked  K drift models, one after the other: forward, cross-entropy, backward, SGD step
//   grouped   one module holding the K clients: convolutions grouped over the clients' stacked
//             channels, BatchNorm over K x C channels (so per client), the linear layers as
//             batched matmuls, one SGD step
//   im2col    the CNNs again, each convolution as one batched matmul over unfolded patches
// against the single-thread GEMM rate measured in the same run (the roofline). It first checks
// that a packed step updates every client's weights as its own step does (max |difference|).
// The packing lives here for now: the engine and the device pool do not pack yet.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/models/model.hpp"

using namespace drift;
using Clock = std::chrono::steady_clock;
namespace F = torch::nn::functional;

namespace {

constexpr std::int64_t kBatch = 64, kClasses = 10, kSide = 28;

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

bool is_linear(const std::string& name) { return name.rfind("fc.", 0) == 0 || name.rfind("head.", 0) == 0; }

// K clients' tensors stacked by name: convolution and BatchNorm tensors along their first
// dimension (channels), linear weights as [K, in, out] and biases as [K, 1, out] for baddbmm.
struct Packed {
  std::int64_t k;
  std::map<std::string, torch::Tensor> w, stats;  // trained parameters; BatchNorm running stats

  explicit Packed(const std::vector<std::shared_ptr<Model>>& models) : k(static_cast<std::int64_t>(models.size())) {
    for (const auto& item : models.front()->named_parameters()) {
      std::vector<torch::Tensor> parts;
      for (const auto& m : models) {
        const auto p = m->named_parameters()[item.key()];
        parts.push_back(!is_linear(item.key()) ? p : p.dim() == 2 ? p.t() : p.unsqueeze(0));
      }
      w[item.key()] = (is_linear(item.key()) ? torch::stack(parts) : torch::cat(parts)).detach().clone().set_requires_grad(true);
    }
    for (const auto& item : models.front()->named_buffers()) {
      if (item.key().find("running_") == std::string::npos) continue;
      std::vector<torch::Tensor> parts;
      for (const auto& m : models) parts.push_back(m->named_buffers()[item.key()]);
      stats[item.key()] = torch::cat(parts).clone();
    }
  }
  std::vector<torch::Tensor> params() const {
    std::vector<torch::Tensor> out;
    for (const auto& [name, t] : w) out.push_back(t);
    return out;
  }
  bool has(const std::string& name) const { return w.count(name + ".weight") > 0; }
  torch::Tensor conv(const torch::Tensor& x, const std::string& name, std::int64_t stride, std::int64_t pad) const {
    auto options = F::Conv2dFuncOptions().stride(stride).padding(pad).groups(k);
    if (w.count(name + ".bias")) options.bias(w.at(name + ".bias"));
    return F::conv2d(x, w.at(name + ".weight"), options);
  }
  torch::Tensor bn(const torch::Tensor& x, const std::string& name) const {
    return F::batch_norm(x, stats.at(name + ".running_mean"), stats.at(name + ".running_var"),
                         F::BatchNormFuncOptions().weight(w.at(name + ".weight")).bias(w.at(name + ".bias")).training(true));
  }
  // y: [B, K*F] client-major channels, or already [K, B, F].
  torch::Tensor linear(torch::Tensor y, const std::string& name) const {
    if (y.dim() == 2) y = y.view({y.size(0), k, -1}).transpose(0, 1);
    return torch::baddbmm(w.at(name + ".bias"), y, w.at(name + ".weight"));
  }

  // x: [B, K, 28, 28], client k's images in channel k. Logits [K, B, C].
  torch::Tensor forward_cnn(const torch::Tensor& x) const {
    auto y = F::max_pool2d(torch::relu(conv(x, "conv1", 1, 0)), F::MaxPool2dFuncOptions(2));
    y = F::max_pool2d(torch::relu(conv(y, "conv2", 1, 0)), F::MaxPool2dFuncOptions(2));
    return linear(torch::relu(linear(y.flatten(1), "fc")), "head");
  }
  torch::Tensor forward_resnet(const torch::Tensor& x) const {
    auto y = torch::relu(bn(conv(x, "stem", 1, 1), "stem_bn"));
    for (const auto& [block, stride] : {std::pair{"layer1", 1}, std::pair{"layer2", 2}, std::pair{"layer3", 2}}) {
      const std::string b = block;
      auto h = torch::relu(bn(conv(y, b + ".conv1", stride, 1), b + ".bn1"));
      h = bn(conv(h, b + ".conv2", 1, 1), b + ".bn2");
      const auto skip = has(b + ".shortcut_conv") ? bn(conv(y, b + ".shortcut_conv", stride, 0), b + ".shortcut_bn") : y;
      y = torch::relu(h + skip);
    }
    return linear(y.mean({2, 3}), "head");
  }
  // The CNNs' convolutions as batched matmuls over unfolded patches (im2col): one GEMM per
  // layer for all K clients, the other way to pack.
  torch::Tensor forward_im2col(const torch::Tensor& x) const {
    const auto b = x.size(0);
    auto gemm_conv = [&](const torch::Tensor& in, const std::string& name) {  // in: [K*B, C, H, W], client-major
      const auto c = in.size(1), side = in.size(2) - 4;
      auto cols = F::unfold(in, F::UnfoldFuncOptions(5)).view({k, b, c * 25, side * side});
      cols = cols.permute({0, 2, 1, 3}).reshape({k, c * 25, b * side * side});
      const auto& weight = w.at(name + ".weight");
      const auto cout = weight.size(0) / k;
      auto out = torch::baddbmm(w.at(name + ".bias").view({k, cout, 1}), weight.view({k, cout, c * 25}), cols);
      return out.view({k, cout, b, side, side}).transpose(1, 2).reshape({k * b, cout, side, side});
    };
    auto y = x.transpose(0, 1).reshape({k * b, 1, kSide, kSide});
    y = F::max_pool2d(torch::relu(gemm_conv(y, "conv1")), F::MaxPool2dFuncOptions(2));
    y = F::max_pool2d(torch::relu(gemm_conv(y, "conv2")), F::MaxPool2dFuncOptions(2));
    return linear(torch::relu(linear(y.view({k, b, -1}), "fc")), "head");
  }
};

struct Subject {
  const char* name;
  std::int64_t width;
  double forward_flops;  // multiply-adds x 2 of one sample; a training step costs about three times that
  bool resnet;
};

torch::Tensor packed_loss(const torch::Tensor& logits, const torch::Tensor& y) {
  // The sum of every client's mean loss: each client's slice gets exactly its own gradient.
  const auto k = logits.size(0);
  return F::cross_entropy(logits.reshape({k * kBatch, kClasses}), y.reshape({k * kBatch}),
                          F::CrossEntropyFuncOptions().reduction(torch::kSum)) / kBatch;
}

// max |own step - packed step| over every tensor of every client, after one SGD step each.
double packed_step_error(std::vector<std::shared_ptr<Model>>& models, Packed& packed, const torch::Tensor& x,
                         const torch::Tensor& y, bool resnet) {
  torch::optim::SGD opt(packed.params(), torch::optim::SGDOptions(0.05));
  packed_loss(resnet ? packed.forward_resnet(x) : packed.forward_cnn(x), y).backward();
  opt.step();
  double worst = 0;
  for (std::int64_t i = 0; i < packed.k; ++i) {
    auto& m = *models[static_cast<std::size_t>(i)];
    torch::optim::SGD own(m.parameters(), torch::optim::SGDOptions(0.05));
    F::cross_entropy(m.forward(x.select(1, i).unsqueeze(1)).logits, y[i]).backward();
    own.step();
    for (const auto& item : m.named_parameters()) {
      const auto& stacked = packed.w.at(item.key());
      const auto mine = is_linear(item.key()) ? stacked[i].squeeze(0)
                                              : stacked.slice(0, i * stacked.size(0) / packed.k, (i + 1) * stacked.size(0) / packed.k);
      const auto theirs = is_linear(item.key()) && item.value().dim() == 2 ? item.value().t() : item.value();
      worst = std::max(worst, (mine - theirs).abs().max().item<double>());
    }
  }
  return worst;
}

struct Row {
  double unpacked_s, grouped_s, im2col_s, max_diff;
};

Row measure(const Subject& subject, std::int64_t k, int repeats) {
  ModelOptions options;
  options.width = subject.width;
  std::vector<std::shared_ptr<Model>> models;
  for (std::int64_t i = 0; i < k; ++i) models.push_back(make_model(subject.name, {1, kSide, kSide}, kClasses, 100 + i, options));
  Packed packed(models);
  const auto x = torch::randn({kBatch, k, kSide, kSide});
  const auto y = torch::randint(kClasses, {k, kBatch}, torch::kInt64);
  Row row{};
  row.max_diff = packed_step_error(models, packed, x, y, subject.resnet);

  std::vector<torch::optim::SGD> opts;
  for (auto& m : models) opts.emplace_back(m->parameters(), torch::optim::SGDOptions(0.05));
  row.unpacked_s = seconds_of([&] {
    for (std::int64_t i = 0; i < k; ++i) {
      auto& opt = opts[static_cast<std::size_t>(i)];
      opt.zero_grad();
      F::cross_entropy(models[static_cast<std::size_t>(i)]->forward(x.select(1, i).unsqueeze(1)).logits, y[i]).backward();
      opt.step();
    }
  }, repeats);
  torch::optim::SGD packed_opt(packed.params(), torch::optim::SGDOptions(0.05));
  auto packed_step = [&](const std::function<torch::Tensor(const torch::Tensor&)>& forward) {
    packed_opt.zero_grad();
    packed_loss(forward(x), y).backward();
    packed_opt.step();
  };
  if (subject.resnet) {
    row.grouped_s = seconds_of([&] { packed_step([&](const torch::Tensor& in) { return packed.forward_resnet(in); }); }, repeats);
  } else {
    row.max_diff = std::max(row.max_diff, (packed.forward_cnn(x) - packed.forward_im2col(x)).abs().max().item<double>());
    row.grouped_s = seconds_of([&] { packed_step([&](const torch::Tensor& in) { return packed.forward_cnn(in); }); }, repeats);
    row.im2col_s = seconds_of([&] { packed_step([&](const torch::Tensor& in) { return packed.forward_im2col(in); }); }, repeats);
  }
  return row;
}

// Valid 5x5 convolutions and two 2x2 pools on 28x28, then FC and head.
double two_conv_flops(double c1, double c2, double features) {
  return 2 * (c1 * 25 * 24 * 24 + c2 * c1 * 25 * 8 * 8 + c2 * 16 * features + features * kClasses);
}

// ResNet-8 on 28x28: stem, three blocks (w at 28x28, 2w at 14x14, 4w at 7x7), two 1x1 shortcuts.
double resnet8_flops(double w) {
  const double a = 28 * 28, b = 14 * 14, c = 7 * 7;
  return 2 * (w * 9 * a + 2 * w * w * 9 * a + (2 * w * w * 9 + 4 * w * w * 9 + 2 * w * w) * b +
              (8 * w * w * 9 + 16 * w * w * 9 + 8 * w * w) * c + 4 * w * kClasses);
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
  const Subject subjects[] = {{"small-cnn", 0, two_conv_flops(16, 32, 128), false},
                              {"cnn4", 0, two_conv_flops(32, 64, 512), false},
                              {"resnet8", 16, resnet8_flops(16), true}};
  for (const auto& subject : subjects) {
    for (std::int64_t k : {1, 4, 8, 32}) {
      const auto r = measure(subject, k, k >= 32 ? 3 : 10);
      const double samples = static_cast<double>(k * kBatch), flops = 3 * subject.forward_flops * samples;
      // A form not measured for this model (im2col for the ResNet) prints as "-".
      auto cell = [](double s, const char* format, double value) {
        char text[32] = "-";
        if (s > 0) std::snprintf(text, sizeof text, format, value);
        return std::string(text);
      };
      auto rate = [&](double s) { return cell(s, "%.0f", samples / s); };
      auto speedup = [&](double s) { return cell(s, "%.2fx", r.unpacked_s / s); };
      auto share = [&](double s) { return cell(s, "%.1f%%", 100 * flops / s / 1e9 / gemm); };
      std::printf("%-10s %4lld %10s %10s %10s %8s %8s %8s %8s %8s %10.2e\n", subject.name, static_cast<long long>(k),
                  rate(r.unpacked_s).c_str(), rate(r.grouped_s).c_str(), rate(r.im2col_s).c_str(),
                  speedup(r.grouped_s).c_str(), speedup(r.im2col_s).c_str(), share(r.unpacked_s).c_str(),
                  share(r.grouped_s).c_str(), share(r.im2col_s).c_str(), r.max_diff);
    }
  }
  return 0;
}
