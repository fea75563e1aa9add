"""Exports drift's small-cnn as a TorchScript module (docs/torchscript.md).

    python3 export_small_cnn.py [--channels 1] [--side 28] [--classes 10] [--out small_cnn.pt]

The layers, their order and their names are those of drift's built-in small-cnn, so with
model.init = "seed" drift draws the same initial weights for both, and a run trains the same.
It needs torch 1.13 (Debian 12: apt install python3-torch), the version drift's LibTorch has.
"""
import argparse

import torch
import torch.nn.functional as F
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self, channels: int, side: int, classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, 5)
        self.conv2 = nn.Conv2d(16, 32, 5)
        after = ((side - 4) // 2 - 4) // 2  # two valid 5x5 convolutions, each pooled by 2
        self.fc = nn.Linear(32 * after * after, 128)
        self.head = nn.Linear(128, classes)

    @torch.jit.export
    def features(self, x: torch.Tensor) -> torch.Tensor:
        """What the classifier reads: algorithms that work on representations call it."""
        y = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        y = F.max_pool2d(torch.relu(self.conv2(y)), 2)
        return torch.relu(self.fc(y.flatten(1)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The logits, [batch, classes]."""
        return self.head(self.features(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--side", type=int, default=28)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--out", default="small_cnn.pt")
    args = parser.parse_args()
    torch.manual_seed(0)
    module = torch.jit.script(SmallCnn(args.channels, args.side, args.classes))
    module.save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
