# A LibTorch from pytorch.org or from a torch wheel (the usual CUDA builds) carries {fmt}'s
# headers in its own include folder, a newer major version than the {fmt} Debian's spdlog is
# built against. LibTorch's folders come first on the command line, so spdlog's
# `#include <fmt/core.h>` found LibTorch's copy and failed to compile (fmt 12 against spdlog
# 1.10). drift's own code includes {fmt} only through spdlog, and <torch/torch.h> includes none,
# so the {fmt} that spdlog was built with is put ahead of LibTorch's, through a folder that holds
# only a link to it: naming its own folder (/usr/include) would put every system header there
# ahead of LibTorch's too, and compilers drop a system folder named again anyway.
# An spdlog with its bundled {fmt} includes <spdlog/fmt/bundled/...> and meets no conflict.
if(NOT TARGET fmt::fmt)
  return()
endif()
get_target_property(drift_fmt_includes fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
list(GET drift_fmt_includes 0 drift_fmt_include)
file(REAL_PATH "${drift_fmt_include}/fmt" drift_spdlog_fmt)

set(drift_torch_fmt "")
foreach(dir IN LISTS TORCH_INCLUDE_DIRS)
  if(EXISTS "${dir}/fmt/core.h")
    file(REAL_PATH "${dir}/fmt" drift_torch_fmt)
    break()
  endif()
endforeach()

# Debian's LibTorch and spdlog share /usr/include: nothing to do.
if(drift_torch_fmt AND NOT drift_torch_fmt STREQUAL drift_spdlog_fmt)
  set(drift_fmt_first "${CMAKE_BINARY_DIR}/fmt-first")
  file(MAKE_DIRECTORY "${drift_fmt_first}")
  file(CREATE_LINK "${drift_spdlog_fmt}" "${drift_fmt_first}/fmt" SYMBOLIC)
  include_directories(BEFORE SYSTEM "${drift_fmt_first}")
  message(STATUS "drift: LibTorch carries its own {fmt} (${drift_torch_fmt}); spdlog's (${drift_spdlog_fmt}) comes first")
endif()
