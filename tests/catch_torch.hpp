#pragma once
// Every test file includes this header instead of Catch2's own, for two reasons.
//  - LibTorch includes glog, whose CHECK macro would silently replace Catch2's (and abort the
//    process on failure instead of reporting it). Include torch first, drop glog's macro, then
//    include Catch2. In a unity build several test files share one translation unit: once
//    Catch2 is in, CHECK is its own and stays.
//  - One suite serves Catch2 2 (Debian 12: one header, catch2/catch.hpp) and Catch2 3 (Debian 13:
//    a header per part, matchers renamed). Below Catch2 3 gets the names of Catch2 2 the tests
//    use: Approx, Catch::Contains, Catch::StartsWith, Catch::Message.
#include <torch/torch.h>

#if __has_include(<catch2/catch_test_macros.hpp>)
#ifndef CATCH_TEST_MACROS_HPP_INCLUDED
#undef CHECK
#endif
#include <catch2/catch_approx.hpp>
#ifdef CATCH_CONFIG_RUNNER  // a test program with its own main (Catch2 2's spelling)
#include <catch2/catch_session.hpp>
#endif
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_exception.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

#ifndef DRIFT_CATCH2_V2_NAMES
#define DRIFT_CATCH2_V2_NAMES
using Catch::Approx;
namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& text) { return Matchers::ContainsSubstring(text); }
using Matchers::Message;
using Matchers::StartsWith;
}  // namespace Catch
#endif

#else
#ifndef TWOBLUECUBES_SINGLE_INCLUDE_CATCH_HPP_INCLUDED
#undef CHECK
#endif
#include <catch2/catch.hpp>
#endif
