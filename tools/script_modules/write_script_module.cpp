// Writes an example TorchScript module for the CLI tests (no Python needed):
//   write_script_module OUT [--classes C] [--no-features] [--side S] [--channels K]
//                       [--tiny | --endless | --flaw dropout|int-logits|frozen]
#include <cstdlib>
#include <iostream>
#include <string>

#include "tools/script_modules/script_modules.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: write_script_module OUT [--classes C] [--no-features] [--side S] [--channels K] [--tiny | "
                 "--endless | --flaw dropout|int-logits|frozen]\n";
    return 2;
  }
  drift::script_modules::SmallCnnShape shape;
  bool tiny = false, endless = false;
  std::string flaw;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    const auto number = [&] { return i + 1 < argc ? std::atoll(argv[++i]) : 0LL; };
    if (flag == "--classes")
      shape.classes = number();
    else if (flag == "--side")
      shape.side = number();
    else if (flag == "--channels")
      shape.channels = number();
    else if (flag == "--no-features")
      shape.features = false;
    else if (flag == "--tiny")
      tiny = true;
    else if (flag == "--endless")
      endless = true;
    else if (flag == "--flaw" && i + 1 < argc)
      flaw = argv[++i];
    else {
      std::cerr << "write_script_module: unknown flag " << flag << "\n";
      return 2;
    }
  }
  const auto inputs = shape.channels * shape.side * shape.side;
  auto module = !flaw.empty() ? drift::script_modules::flawed_linear(inputs, shape.classes, flaw)
                : endless     ? drift::script_modules::endless_linear(inputs, shape.classes)
                : tiny        ? drift::script_modules::tiny_linear(inputs, shape.classes)
                              : drift::script_modules::small_cnn(shape);
  module.save(argv[1]);
  return 0;
}
