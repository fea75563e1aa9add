#!/usr/bin/env python3
"""Exports two classifiers with torch.export for drift's model "exported" (docs/models.md).

    python3 export_models.py [--channels 1] [--side 28] [--classes 10] [--out-dir .]

writes small_cnn.pt2 (drift's small-cnn, ~80k parameters) and resnet8.pt2 (a ResNet-8 of width
16 with BatchNorm, ~78k parameters), exported in training mode with a dynamic batch dimension.
Each forward returns (logits, features), drift's convention for the algorithms that read
features. The layers, their order and their names are those of drift's own small-cnn and
resnet8, so with model.init = "seed" drift draws the same initial weights as for its own.

It needs torch 2.6 (Debian 13: apt install python3-torch). The files beside this script were
written by it and are what the tests train, so the tests need no Python.
"""
import argparse
import os

import torch
import torch.nn.functional as F
from torch import nn


class SmallCnn(nn.Module):
    """drift's small-cnn: two valid 5x5 convolutions (16, 32), each pooled by 2, FC-128, head."""

    def __init__(self, channels: int, side: int, classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16, 5)
        self.conv2 = nn.Conv2d(16, 32, 5)
        after = ((side - 4) // 2 - 4) // 2
        self.fc = nn.Linear(32 * after * after, 128)
        self.head = nn.Linear(128, classes)

    def forward(self, x):
        y = F.max_pool2d(torch.relu(self.conv1(x)), 2)
        y = F.max_pool2d(torch.relu(self.conv2(y)), 2)
        features = torch.relu(self.fc(y.flatten(1)))
        return self.head(features), features


def conv3x3(cin: int, cout: int, stride: int) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = conv3x3(cin, cout, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = conv3x3(cout, cout, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut_conv = None
        if stride != 1 or cin != cout:
            self.shortcut_conv = nn.Conv2d(cin, cout, 1, stride=stride, bias=False)
            self.shortcut_bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        skip = x if self.shortcut_conv is None else self.shortcut_bn(self.shortcut_conv(x))
        return torch.relu(y + skip)


class ResNet8(nn.Module):
    """drift's resnet8: a 3x3 stem and three BasicBlocks (w, 2w, 4w), mean-pooled features."""

    def __init__(self, channels: int, classes: int, width: int):
        super().__init__()
        self.stem = conv3x3(channels, width, 1)
        self.stem_bn = nn.BatchNorm2d(width)
        self.layer1 = BasicBlock(width, width, 1)
        self.layer2 = BasicBlock(width, 2 * width, 2)
        self.layer3 = BasicBlock(2 * width, 4 * width, 2)
        self.head = nn.Linear(4 * width, classes)

    def forward(self, x):
        y = torch.relu(self.stem_bn(self.stem(x)))
        y = self.layer3(self.layer2(self.layer1(y)))
        features = y.mean((2, 3))
        return self.head(features), features


def export(module: nn.Module, channels: int, side: int, path: str) -> None:
    """Training mode, and a batch dimension of any size drift feeds (up to 4096 samples)."""
    module.train()
    batch = torch.export.Dim("batch", max=4096)
    example = (torch.randn(4, channels, side, side),)
    program = torch.export.export(module, example, dynamic_shapes={"x": {0: batch}})
    torch.export.save(program, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=1)
    parser.add_argument("--side", type=int, default=28)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    torch.manual_seed(0)
    export(SmallCnn(args.channels, args.side, args.classes), args.channels, args.side,
           os.path.join(args.out_dir, "small_cnn.pt2"))
    export(ResNet8(args.channels, args.classes, 16), args.channels, args.side,
           os.path.join(args.out_dir, "resnet8.pt2"))


if __name__ == "__main__":
    main()
