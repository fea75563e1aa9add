#pragma once
// LEAF's FEMNIST and Shakespeare (https://leaf.cmu.edu) as Datasets that remember each
// sample's writer or speaker, so that `partition.scheme = "natural"` can give every one of them
// their own client. data.path is the folder LEAF's preprocessing writes, holding train/ and
// test/ with one or more JSON files each (engine/data/leaf_json.hpp).
#include <string>

#include "engine/data/dataset.hpp"

namespace drift {

// FEMNIST: x is 784 pixel values in [0, 1] (LEAF keeps white as 1: ink is dark), y a class in
// [0, 62): digits, then upper-case, then lower-case letters. Images [N, 1, 28, 28], normalised
// with the training pixels' mean and std.
DatasetSplits read_leaf_femnist(const std::string& directory, const DataConfig& config);

// Shakespeare: x is 80 characters of a speaker's lines, y the character that follows. Inputs
// are the characters' indices in shakespeare_vocabulary(), as float [N, 80] (exact below 2^24,
// and the one input dtype keeps every data path alike); labels index the same vocabulary.
DatasetSplits read_leaf_shakespeare(const std::string& directory, const DataConfig& config);

// LEAF's ALL_LETTERS: the 80 characters its Shakespeare model reads and predicts.
const std::string& shakespeare_vocabulary();

}  // namespace drift
