#pragma once
// LibTorch includes glog, whose CHECK macro would silently replace Catch2's (and abort the
// process on failure instead of reporting it). Include torch first, drop glog's macro, then
// include Catch2. Every test file includes this header instead of <catch2/catch.hpp>.
#include <torch/torch.h>
#undef CHECK
#include <catch2/catch.hpp>
