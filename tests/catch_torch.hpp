#pragma once
// LibTorch includes glog, whose CHECK macro would silently replace Catch2's (and abort the
// process on failure instead of reporting it). Include torch first, drop glog's macro, then
// include Catch2. Every test file includes this header instead of <catch2/catch.hpp>. In a
// unity build several test files share one translation unit: once Catch2 is in, CHECK is its
// own and stays.
#include <torch/torch.h>
#ifndef TWOBLUECUBES_SINGLE_INCLUDE_CATCH_HPP_INCLUDED
#undef CHECK
#endif
#include <catch2/catch.hpp>
