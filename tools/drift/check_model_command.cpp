#include <torch/torch.h>

#include <cstdio>

#include "commands.hpp"
#include "engine/core/error.hpp"
#include "engine/models/exported_model.hpp"
#include "engine/models/model_file.hpp"
#include "engine/models/torchscript_model.hpp"

namespace drift::cli {

int check_model_command(const CheckModelArgs& args) {
  // Either kind of model file: an exported program holds its graph's JSON, anything else is
  // read as a TorchScript module (which refuses what it is not).
  const bool exported =
      is_exported_archive(read_model_file(args.file, {"a model file", "torch.jit.save or torch.export.save"}));
  const auto info = exported ? inspect_exported_program(args.file) : inspect_script_module(args.file);
  if (!args.digest.empty() && args.digest != info.digest)
    throw UserError(args.file + " has digest " + info.digest + ", not " + args.digest +
                    ": it changed while it was being checked");
  std::printf("model %s: ok (%s, digest %s)\n", args.file.c_str(),
              exported ? "an exported program, model \"exported\"" : "a TorchScript module, model \"torchscript\"",
              info.digest.c_str());
  if (exported)
    std::printf("  forward(x) gives: logits%s\n", info.has_features ? ", features" : "");
  else
    std::printf("  methods: forward(x)%s\n", info.has_features ? ", features(x)" : "");
  if (args.input.empty()) return 0;
  if (args.classes < 1) throw UserError("--input needs --classes, the number of logits forward(x) must give");
  ModelOptions options;
  options.script_file = args.file;
  options.script_digest = info.digest;
  options.script_backbone = args.features;
  auto model = exported ? make_exported_model(args.input, args.classes, options)
                        : make_script_model(args.input, args.classes, options);
  std::int64_t values = 0;
  for (const auto& p : model->parameters()) values += p.numel();
  std::printf("  on a batch of 2 samples: %s(x) runs; %lld trainable values in %zu tensors\n",
              args.features ? "features" : "forward", static_cast<long long>(values), model->parameters().size());
  return 0;
}

}  // namespace drift::cli
