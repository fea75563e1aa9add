#include "tools/script_modules/script_modules.hpp"

namespace drift::script_modules {
namespace {

// A layer with a weight and a bias and the forward that uses them (`call` of weight, bias and
// x), the parameters at PyTorch's shapes and zero: drift or the test draws their values.
torch::jit::Module layer(const std::string& type, std::vector<std::int64_t> weight_shape, const std::string& call) {
  torch::jit::Module m(type);
  const auto out = weight_shape.front();
  m.register_parameter("weight", torch::zeros(weight_shape).requires_grad_(), /*is_buffer=*/false);
  m.register_parameter("bias", torch::zeros({out}).requires_grad_(), /*is_buffer=*/false);
  m.define("def forward(self, x):\n  return " + call + "\n");
  return m;
}

torch::jit::Module conv(std::int64_t in, std::int64_t out, std::int64_t kernel) {
  return layer("Conv2d", {out, in, kernel, kernel}, "torch.conv2d(x, self.weight, self.bias)");
}

torch::jit::Module linear(std::int64_t in, std::int64_t out) {
  return layer("Linear", {out, in}, "torch.linear(x, self.weight, self.bias)");
}

}  // namespace

torch::jit::Module small_cnn(const SmallCnnShape& shape) {
  const auto after = ((shape.side - 4) / 2 - 4) / 2;  // two valid 5x5 convolutions, each pooled by 2
  torch::jit::Module m("SmallCnn");
  m.register_module("conv1", conv(shape.channels, 16, 5));
  m.register_module("conv2", conv(16, 32, 5));
  m.register_module("fc", linear(32 * after * after, 128));
  m.register_module("head", linear(128, shape.classes));
  const std::string features =
      "  y = torch.max_pool2d(torch.relu(self.conv1.forward(x)), [2, 2])\n"
      "  y = torch.max_pool2d(torch.relu(self.conv2.forward(y)), [2, 2])\n"
      "  return torch.relu(self.fc.forward(torch.flatten(y, 1)))\n";
  if (shape.features) {
    m.define("def features(self, x):\n" + features +
             "\ndef forward(self, x):\n  return self.head.forward(self.features(x))\n");
  } else {
    m.define("def body(self, x):\n" + features + "\ndef forward(self, x):\n  return self.head.forward(self.body(x))\n");
  }
  return m;
}

torch::jit::Module tiny_linear(std::int64_t inputs, std::int64_t classes) {
  torch::jit::Module m("Tiny");
  m.register_module("fc", linear(inputs, classes));
  m.define("def forward(self, x):\n  return self.fc.forward(torch.flatten(x, 1))\n");
  return m;
}

torch::jit::Module endless_linear(std::int64_t inputs, std::int64_t classes) {
  torch::jit::Module m("Endless");
  m.register_module("fc", linear(inputs, classes));
  // Counts up to 2^63 before it answers: no run waits that long.
  m.define(
      "def forward(self, x):\n  n = 0\n  while n >= 0:\n    n = n + 1\n"
      "  return self.fc.forward(torch.flatten(x, 1))\n");
  return m;
}

torch::jit::Module flawed_linear(std::int64_t inputs, std::int64_t classes, const std::string& flaw) {
  torch::jit::Module m("Flawed");
  auto fc = linear(inputs, classes);
  if (flaw == "frozen")
    for (auto p : fc.parameters()) p.requires_grad_(false);
  m.register_module("fc", fc);
  if (flaw == "dropout") {
    torch::jit::Module drop("Dropout");
    drop.register_attribute("training", c10::BoolType::get(), true);
    drop.define("def forward(self, x):\n  return torch.dropout(x, 0.5, self.training)\n");
    m.register_module("drop", drop);
    m.define("def forward(self, x):\n  return self.fc.forward(self.drop.forward(torch.flatten(x, 1)))\n");
  } else if (flaw == "int-logits") {
    m.define("def forward(self, x):\n  return self.fc.forward(torch.flatten(x, 1)).long()\n");
  } else {
    m.define("def forward(self, x):\n  return self.fc.forward(torch.flatten(x, 1))\n");
  }
  return m;
}

}  // namespace drift::script_modules
