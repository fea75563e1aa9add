# The layers of drift, each a directory, a static library and a list of the layers it may use
# directly. A layer may include its own headers and those of every layer below it; an include
# of any other project header stops that layer's build (cmake/check_layer.cmake). The graph is
# drawn in docs/architecture.md.
#
#   drift_layer(NAME DIR <dir> [DEPS <layer>...] [TORCH] SOURCES <file>...)
# makes the library drift_<NAME>, linked PUBLIC to drift_<dep> for each dep. TORCH links
# LibTorch and compiles with the shared LibTorch precompiled header (drift_use_torch_pch).

set_property(GLOBAL PROPERTY DRIFT_LAYER_DIRS "")

# The directories a layer may include: its own and, recursively, its dependencies'.
function(_drift_layer_closure name out)
  get_property(dir GLOBAL PROPERTY DRIFT_LAYER_${name}_DIR)
  get_property(deps GLOBAL PROPERTY DRIFT_LAYER_${name}_DEPS)
  set(dirs "${dir}")
  foreach(dep IN LISTS deps)
    get_property(dep_dirs GLOBAL PROPERTY DRIFT_LAYER_${dep}_CLOSURE)
    list(APPEND dirs ${dep_dirs})
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  set(${out} "${dirs}" PARENT_SCOPE)
endfunction()

function(drift_register_layer name dir)
  cmake_parse_arguments(L "" "" "DEPS" ${ARGN})
  foreach(dep IN LISTS L_DEPS)
    get_property(known GLOBAL PROPERTY DRIFT_LAYER_${dep}_DIR SET)
    if(NOT known)
      message(FATAL_ERROR "layer ${name}: unknown dependency '${dep}' (declare layers bottom up)")
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY DRIFT_LAYER_${name}_DIR "${dir}")
  set_property(GLOBAL PROPERTY DRIFT_LAYER_${name}_DEPS "${L_DEPS}")
  _drift_layer_closure(${name} closure)
  set_property(GLOBAL PROPERTY DRIFT_LAYER_${name}_CLOSURE "${closure}")
  set_property(GLOBAL APPEND PROPERTY DRIFT_LAYER_DIRS "${dir}")
endfunction()

# Every layer bottom up. Torch-free: core, config, metrics, population, sampling, cluster, privacy.
drift_register_layer(core engine/core)
drift_register_layer(config engine/config DEPS core)
drift_register_layer(metrics engine/metrics DEPS config)
drift_register_layer(cluster engine/cluster DEPS core)
drift_register_layer(privacy engine/privacy DEPS core)
drift_register_layer(population engine/population DEPS config)
drift_register_layer(sampling engine/sampling DEPS population)
drift_register_layer(tensors engine/tensors DEPS metrics)
drift_register_layer(data engine/data DEPS tensors)
drift_register_layer(models engine/models DEPS tensors)
drift_register_layer(generators engine/generators DEPS models data)
drift_register_layer(algorithms engine/algorithms DEPS generators)
drift_register_layer(training engine/training DEPS algorithms)
drift_register_layer(sim engine/sim DEPS sampling algorithms privacy)
drift_register_layer(compose engine/compose DEPS training sim)
drift_register_layer(study engine/study DEPS metrics)
drift_register_layer(messages messages DEPS algorithms cluster sampling)
drift_register_layer(actors actors DEPS messages compose)
drift_register_layer(cli tools/drift DEPS actors study)

# A build step that fails when the layer's sources include a header above the layer.
function(drift_check_layer_includes name target)
  get_property(dir GLOBAL PROPERTY DRIFT_LAYER_${name}_DIR)
  get_property(closure GLOBAL PROPERTY DRIFT_LAYER_${name}_CLOSURE)
  get_property(known GLOBAL PROPERTY DRIFT_LAYER_DIRS)
  string(REPLACE ";" "|" allowed_arg "${closure}")
  string(REPLACE ";" "|" known_arg "${known}")
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/${dir}/*.hpp" "${PROJECT_SOURCE_DIR}/${dir}/*.cpp")
  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/${name}.layer-ok")
  add_custom_command(OUTPUT "${stamp}"
    COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DLAYER_DIR=${dir} "-DALLOWED=${allowed_arg}"
            "-DKNOWN=${known_arg}" -DSTAMP=${stamp} -P ${PROJECT_SOURCE_DIR}/cmake/check_layer.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/check_layer.cmake
    COMMENT "Checking that ${dir} includes only layers below it" VERBATIM)
  add_custom_target(${target}_layer_check DEPENDS "${stamp}")
  add_dependencies(${target} ${target}_layer_check)
endfunction()

function(drift_layer name)
  cmake_parse_arguments(L "TORCH" "" "SOURCES" ${ARGN})
  set(target drift_${name})
  add_library(${target} STATIC ${L_SOURCES})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
  get_property(deps GLOBAL PROPERTY DRIFT_LAYER_${name}_DEPS)
  foreach(dep IN LISTS deps)
    target_link_libraries(${target} PUBLIC drift_${dep})
  endforeach()
  if(L_TORCH)
    target_link_libraries(${target} PUBLIC ${TORCH_LIBRARIES})
    drift_use_torch_pch(${target})
  endif()
  drift_check_layer_includes(${name} ${target})
endfunction()

# A layer of every .cpp in its folder: the folders where the catalogue's families live, so that a
# new member is its file plus its row's two lines (docs/development.md#adding-a-sampler). The
# glob is checked again at each build, so a new file needs no edit here.
function(drift_folder_layer name)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${name}/*.cpp)
  list(SORT sources)
  drift_layer(${name} ${ARGN} SOURCES ${sources})
endfunction()

# Runs the check over the whole tree now (tests call this through cmake -P, too).
