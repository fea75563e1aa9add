#!/usr/bin/env python3
"""Writes small datasets in LEAF's JSON layout (https://leaf.cmu.edu) for drift's tests:
DIR/train/*.json and DIR/test/*.json, each {"users", "num_samples", "user_data"}, users
spread over two files as LEAF's preprocessing spreads them.

  leaf_data.py femnist DIR --writers N      28x28 images in [0, 1], white background (as
                                            LEAF keeps them); each digit class a dark bar at
                                            its own row, writers with their own share of classes
  leaf_data.py shakespeare DIR --writers N  80-character windows of a speaker's lines and the
                                            character that follows
  --split-by-writer                         the test writers are others than the training
                                            writers (LEAF's --t user)
"""
import argparse
import json
import os
import random

TEXT = ("To be, or not to be, that is the question: Whether 'tis nobler in the mind to suffer "
        "The slings and arrows of outrageous fortune, Or to take arms against a sea of troubles "
        "And by opposing end them. To die, to sleep; No more; and by a sleep to say we end ")


def femnist_sample(rng, label):
    pixels = [1.0] * 784
    row = 3 + 2 * label
    for x in range(4, 24):
        pixels[row * 28 + x] = round(rng.random() * 0.2, 3)
        pixels[(row + 1) * 28 + x] = round(rng.random() * 0.2, 3)
    return pixels


def writer_samples(kind, rng, writer, count):
    if kind == "femnist":
        # Each writer favours three classes: natural clients are not iid.
        favourite = [(writer + k) % 10 for k in range(3)]
        ys = [rng.choice(favourite) if rng.random() < 0.8 else rng.randrange(10) for _ in range(count)]
        return [femnist_sample(rng, y) for y in ys], ys
    xs, ys = [], []
    for _ in range(count):
        start = rng.randrange(len(TEXT) - 81)
        xs.append(TEXT[start:start + 80])
        ys.append(TEXT[start + 80])
    return xs, ys


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["femnist", "shakespeare"])
    parser.add_argument("directory")
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--split-by-writer", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    for split in ("train", "test"):
        os.makedirs(os.path.join(args.directory, split), exist_ok=True)
        for part in range(2):
            users, counts, data = [], [], {}
            for writer in range(part, args.writers, 2):
                name = f"f{writer:04d}_{writer * 7 % 13:02d}" if args.kind == "femnist" else f"THE_PLAY_ROLE{writer}"
                if split == "test" and args.split_by_writer:
                    name += "_unseen"
                count = (12 + 4 * writer) if split == "train" else 4
                xs, ys = writer_samples(args.kind, rng, writer, count)
                users.append(name)
                counts.append(count)
                data[name] = {"x": xs, "y": ys}
            path = os.path.join(args.directory, split, f"all_data_{part}_niid_0_keep_0_{split}_9.json")
            with open(path, "w") as out:
                json.dump({"users": users, "num_samples": counts, "user_data": data}, out)


if __name__ == "__main__":
    main()
