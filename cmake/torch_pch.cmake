# One precompiled <torch/torch.h> for every target that compiles against LibTorch. Parsing the
# header costs about 15 s per file on the project's 2-core machines. Loading GCC's PCH costs
# about 8 s more (the template instantiations it left pending), which the unity build pays
# once per batch of files (docs/architecture.md#build-time).
# Every target reuses the same .gch (REUSE_FROM): a PCH per target would cost 570 MB and 40 s
# each. Turn it off (-DDRIFT_TORCH_PCH=OFF) for tools that cannot read GCC's PCH (clang-tidy).
option(DRIFT_TORCH_PCH "Precompile <torch/torch.h> once and reuse it in every torch target" ON)

if(DRIFT_TORCH_PCH)
  add_library(drift_torch_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/torch_pch.cpp)
  target_link_libraries(drift_torch_pch PRIVATE ${TORCH_LIBRARIES})
  target_precompile_headers(drift_torch_pch PRIVATE <torch/torch.h>)
endif()

function(drift_use_torch_pch target)
  if(DRIFT_TORCH_PCH)
    target_precompile_headers(${target} REUSE_FROM drift_torch_pch)
  endif()
endfunction()
